"""Several writers on one table (Hudi's ``org.apache.hudi.client.transaction``): the table lock and its
providers, writers' heartbeats, and the conflict check a write makes before it completes."""
