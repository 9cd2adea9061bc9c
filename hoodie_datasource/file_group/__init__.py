"""A file slice read as one: its base file (``base_reader``) merged with its log blocks (``merged_reader``).

Below both ``read/`` and ``write/``, as hudi-rs's ``file_group/reader.rs`` is below its table reads: a
snapshot read, compaction, CDC images and a global index's tagging on a merge-on-read table all take a
slice's records from the one merge, so they agree on what it holds."""
