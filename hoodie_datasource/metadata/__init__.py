"""Apache Hudi's metadata table (``.hoodie/metadata``) in the table-version-6 format: ``records`` (its
partitions and the ``HoodieMetadataRecord`` codec) and ``keys`` (how records are keyed and routed to file groups).
Uses the log and HFile formats below it."""
