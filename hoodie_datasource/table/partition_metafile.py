"""``.hoodie_partition_metadata``: the file that makes a folder a partition of the table (Hudi's
``HoodiePartitionMetadata``), in the data table's partitions and the metadata table's alike."""

from __future__ import annotations

import logging

from hoodie_datasource.config.properties_file import format_properties
from hoodie_datasource.errors import CommitConflictError
from hoodie_datasource.storage.storage import Storage, join
from hoodie_datasource.table.file_names import PARTITION_METAFILE

logger = logging.getLogger(__name__)


def write_partition_metafile(storage: Storage, partition: str, instant_time: str) -> None:
    """``.hoodie_partition_metadata``, written once: Hudi's ``HoodiePartitionMetadata.trySave``
    writes it only when absent and leaves a concurrent writer's copy in place. The create-if-absent is
    the check (one request on an object store, where a HEAD first would make two for a new partition)."""
    rel = join(partition, PARTITION_METAFILE)
    depth = 0 if not partition else partition.count("/") + 1
    text = format_properties({"commitTime": instant_time, "partitionDepth": str(depth)})
    text = text.replace(text.split("\n", 1)[0], "#partition metadata", 1)
    try:
        storage.create_once(rel, text.encode("latin-1"))
    except CommitConflictError:
        logger.debug("%s exists", storage.uri_of(rel))
