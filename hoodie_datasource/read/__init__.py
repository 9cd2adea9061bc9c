"""The read path: query planning (snapshot, read-optimized, incremental, time travel) and file reading."""
