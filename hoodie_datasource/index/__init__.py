"""The index: how a write finds the file group of each incoming key (``index.Index``, made by
``registry.index_for``), and what it reads for that: key ranges and bloom filters of base-file footers, stored
keys, bucket ids."""
