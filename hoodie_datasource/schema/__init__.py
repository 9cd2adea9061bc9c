"""Table schemas: the Avro JSON Hudi stores in commit metadata and ``hoodie.properties``, and Arrow."""
