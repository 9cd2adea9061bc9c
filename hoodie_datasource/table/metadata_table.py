"""Apache Hudi's metadata table (``.hoodie/metadata``) as the data table's ``hoodie.properties`` shows it.

``hoodie.table.metadata.partitions`` lists its ready partitions: readers and writers take the table's files
from it only then (``.inflight`` lists those being built). A writer keeping the metadata table updates every
ready partition with each change (``metadata.sync``). A writer with ``hoodie.metadata.enable=false`` deletes
it, as Hudi does (``HoodieTable.maybeDeleteMetadataTable``, ``HoodieTableMetadataUtil.deleteMetadataTable``):
clear the partitions in ``hoodie.properties`` first (from then on every reader lists storage), then delete the
folder. A crash between the two leaves a folder no reader uses, which the next write deletes or builds anew
(the timeline's listing of ``.hoodie`` shows it).
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


def _listed(config: TableConfig, key: str) -> list[str]:
    return [p.strip() for p in dict(config.raw).get(key, "").split(",") if p.strip()]


def ready_partitions(config: TableConfig) -> list[str]:
    """The metadata table's partitions ``hoodie.properties`` lists as ready."""
    return _listed(config, PARTITIONS_KEY)


def metadata_partitions(config: TableConfig) -> list[str]:
    """The metadata table's partitions ``hoodie.properties`` lists as ready or being built."""
    return ready_partitions(config) + _listed(config, INFLIGHT_KEY)


SWITCHED_OFF = ("this change runs with hoodie.metadata.enable=false: the metadata table is deleted first, as Apache "
                "Hudi does, so no reader takes a stale file list from it. A later write with the metadata table on "
                "builds it again from storage")


def drop_metadata_table(storage: Storage, config: TableConfig, folder_present: bool, why: str = SWITCHED_OFF,
                        level: int = logging.WARNING) -> TableConfig:
    """Clear and delete the metadata table when ``hoodie.properties`` lists partitions of it or its folder is
    there (``folder_present``); returns the table config as it is after. Call it under the table lock, before
    the change's first instant. ``why`` is logged at ``level``."""
    listed = metadata_partitions(config)
    if not listed and not folder_present:
        return config
    if listed:
        logger.log(level, "Table %s has a metadata table (partitions %s) and %s", storage.uri, ",".join(listed), why)
        config = update_table_properties(storage, {PARTITIONS_KEY: "", INFLIGHT_KEY: ""})
    removed = storage.delete_tree(METADATA_TABLE)
    logger.info("Deleted %d files of the metadata table of %s", removed, storage.uri)
    return config
