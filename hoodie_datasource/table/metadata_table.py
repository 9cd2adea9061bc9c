"""Apache Hudi's metadata table (``.hoodie/metadata``), which this library does not maintain yet.

Java writers have created it by default since Hudi 0.11 and list its ready partitions in
``hoodie.table.metadata.partitions``; its readers and writers then take the table's files from it rather
than from a listing. A commit of ours would leave it stale, so they would miss our files or read files our
cleaner deleted. Before a write of ours changes such a table, it does what Hudi does for a writer with
``hoodie.metadata.enable=false`` (``HoodieTable.maybeDeleteMetadataTable``,
``HoodieTableMetadataUtil.deleteMetadataTable``): clear the partitions in ``hoodie.properties`` first (from
then on every reader lists storage), then delete the folder. A crash between the two leaves a folder no
reader uses, which the next write deletes (the timeline's listing of ``.hoodie`` shows it).
"""

from __future__ import annotations

import logging

from hoodie_datasource.config.table_config import METADATA_FOLDER, METAFOLDER, TableConfig, update_table_properties
from hoodie_datasource.storage.storage import Storage, join

logger = logging.getLogger(__name__)

METADATA_TABLE = join(METAFOLDER, METADATA_FOLDER)
# HoodieTableConfig.TABLE_METADATA_PARTITIONS and TABLE_METADATA_PARTITIONS_INFLIGHT
PARTITIONS_KEY = "hoodie.table.metadata.partitions"
INFLIGHT_KEY = "hoodie.table.metadata.partitions.inflight"


def metadata_partitions(config: TableConfig) -> list[str]:
    """The metadata table's partitions ``hoodie.properties`` lists as ready or being built."""
    raw = dict(config.raw)
    return [p for key in (PARTITIONS_KEY, INFLIGHT_KEY) for p in raw.get(key, "").split(",") if p.strip()]


def drop_metadata_table(storage: Storage, config: TableConfig, folder_present: bool) -> TableConfig:
    """Clear and delete the metadata table when ``hoodie.properties`` lists partitions of it or its folder is
    there (``folder_present``); returns the table config as it is after. Call it under the table lock, before
    the write's first instant."""
    listed = metadata_partitions(config)
    if not listed and not folder_present:
        return config
    if listed:
        logger.warning(
            "Table %s has Apache Hudi's metadata table (partitions %s), which this library does not maintain yet: "
            "it is deleted before this write, as Apache Hudi does for a writer with hoodie.metadata.enable=false, "
            "so no reader takes a stale file list from it. Java writers with the metadata table on build it "
            "again from storage", storage.uri, ",".join(listed))
        config = update_table_properties(storage, {PARTITIONS_KEY: "", INFLIGHT_KEY: ""})
    removed = storage.delete_tree(METADATA_TABLE)
    logger.info("Deleted %d files of the metadata table of %s", removed, storage.uri)
    return config
