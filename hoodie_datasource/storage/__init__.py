"""File system access: local paths (``file:`` URIs accepted), atomic create-once files."""
