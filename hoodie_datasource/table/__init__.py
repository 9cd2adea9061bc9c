"""The table: its handle (``table.Table``: config, timeline, and what is made from them), file names, file
groups and the file-system view, its schema, key generation and meta columns."""
