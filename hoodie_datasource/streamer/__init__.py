"""Continuous ingestion into a hoodie table, in the spirit of Apache Hudi's HoodieStreamer: see
``streamer.config`` for the command line and ``streamer.streamer`` for what a round does."""
