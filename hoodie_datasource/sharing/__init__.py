"""hoodie-sharing: a Delta Sharing server for hoodie tables (``docs/guides/sharing.md``). The official clients
(``delta-sharing`` for pandas, the Spark connector) read the tables it shares as they read Delta tables."""
