"""The write path: key generation, index tagging, bin-packing, file-group handles and commit."""
