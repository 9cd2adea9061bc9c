"""HFile v3, the base and log-block format of Hudi's metadata table: ``reader`` and ``writer``, built from
the trailer, blocks (with their checksums and compression), block indexes, file info and cells, each in a
module of its own. Uses ``storage`` only."""
