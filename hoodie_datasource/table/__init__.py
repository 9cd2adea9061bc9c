"""Table-level state: hoodie.properties, file names, file groups and the file-system view."""
