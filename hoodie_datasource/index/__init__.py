"""The index: bloom filters in base-file footers, key ranges, and record tagging."""
