"""Schemas: Avro (as Hudi stores them in commit metadata) <-> Arrow."""
