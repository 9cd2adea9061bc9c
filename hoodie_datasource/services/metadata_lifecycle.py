"""What a change to the table does to its metadata table first, under the table lock, as Hudi's write client
does when it opens the table (``BaseHoodieWriteClient.initTable``: ``HoodieTable.maybeDeleteMetadataTable``,
``deleteMetadataIndexIfNecessary``, then the metadata writer's ``initializeIfNeeded``):

- ``hoodie.metadata.enable=false``: delete it (``table.metadata_table.drop_metadata_table``);
- else: delete a ready index partition its option switches off (a write does; a table service run on its own
  keeps every ready partition and records its change there, where Hudi's would delete one whose option it was
  not given); build every partition the options want that is not ready (``services.metadata_init``); and build
  the metadata table anew when the one there cannot be trusted: ``hoodie.properties`` lists a partition this
  library does not keep or one another writer is building (Hudi's asynchronous indexer), or the metadata table
  has no ``hoodie.properties``, another table version than the data table's (Hudi 1.1 builds one of version 9
  under a version-6 table when a service is not told ``hoodie.write.table.version=6``) or no completed instant
  (Hudi's ``metadataTableExists`` / ``isBootstrapNeeded``).
"""

from __future__ import annotations

import dataclasses
import logging

from hoodie_datasource.config.metadata_config import MetadataConfig
from hoodie_datasource.config.table_config import update_table_properties
from hoodie_datasource.errors import HoodieError
from hoodie_datasource.metadata.layout import metadata_storage
from hoodie_datasource.metadata.reader import planning_from_metadata
from hoodie_datasource.metadata.records import MetadataPartition
from hoodie_datasource.metadata.sync import ready_metadata_partitions
from hoodie_datasource.services.metadata_init import initialize_partitions, wanted_partitions
from hoodie_datasource.table.metadata_table import (
    INFLIGHT_KEY,
    METADATA_TABLE,
    PARTITIONS_KEY,
    drop_metadata_table,
    metadata_partitions,
    ready_partitions,
)
from hoodie_datasource.table.table import Table

logger = logging.getLogger(__name__)


def _replace_config(table: Table, changes: dict[str, str]) -> Table:
    config = update_table_properties(table.storage, changes)
    return dataclasses.replace(table, config=config)


def _opened(table: Table) -> Table | str:
    """The ready metadata table, opened (``hoodie.properties`` read, timeline listed), or why it cannot be kept as
    it is."""
    known = {p.path for p in MetadataPartition}
    unknown = [p for p in ready_partitions(table.config) if p not in known]
    if unknown:
        return f"it lists partitions this library does not keep ({','.join(unknown)})"
    building = [p for p in metadata_partitions(table.config) if p not in ready_partitions(table.config)]
    if building:
        return f"partitions are being built by another writer ({INFLIGHT_KEY}={','.join(building)})"
    try:
        mdt = Table.load(metadata_storage(table.storage))
    except HoodieError as exc:
        return f"its hoodie.properties cannot be read ({exc})"
    if (mdt.config.version, mdt.config.timeline_layout_version) != (table.config.version, 1):
        return (f"it is of table version {mdt.config.version} (timeline layout {mdt.config.timeline_layout_version}), "
                f"not the data table's {table.config.version}")
    if not mdt.timeline.completed():
        return "it has no completed instant"
    return mdt


def prepare_metadata_table(table: Table, cfg: MetadataConfig, drops_switched_off: bool = True) -> Table:
    """Delete the metadata table (``cfg`` disabled) or one that cannot be trusted, or (``drops_switched_off``)
    its partitions ``cfg`` switches off; the table after, planning from the metadata table it opened when it kept
    it (``metadata.reader.MetadataListing``: what follows in the write reads that one, not listed again). Call it
    under the table lock, before the change's first instant."""
    table.config.check_writable(table.storage.uri)
    if not cfg.enabled:
        kept = drop_metadata_table(table.storage, table.config, table.timeline.metadata_folder)
        if kept is table.config:
            return table
        return Table(table.storage, kept, dataclasses.replace(table.timeline, metadata_folder=False),
                     table.as_of_instant)
    if not ready_partitions(table.config) and not metadata_partitions(table.config):
        return table
    opened = _opened(table)
    if isinstance(opened, str):
        logger.warning("The metadata table of %s is built anew: %s", table.uri, opened)
        table = _replace_config(table, {PARTITIONS_KEY: "", INFLIGHT_KEY: ""})
        table.storage.delete_tree(METADATA_TABLE)
        return table
    wanted = set(wanted_partitions(cfg))
    switched_off = [p for p in ready_metadata_partitions(table.config) if p not in wanted and drops_switched_off]
    if switched_off:
        logger.info("Deleting the metadata table's %s partitions of %s: their options are off",
                    ",".join(p.path for p in switched_off), table.uri)
        kept = [p.path for p in ready_metadata_partitions(table.config) if p in wanted]
        table = _replace_config(table, {PARTITIONS_KEY: ",".join(kept)})
        for partition in switched_off:
            metadata_storage(table.storage).delete_tree(partition.path)
    return planning_from_metadata(table, metadata_table=opened)


def build_metadata_table(table: Table, cfg: MetadataConfig) -> Table:
    """Build the partitions ``cfg`` wants that are not ready (none while a data instant is pending); the table
    after. Call it under the table lock, after failed writes were rolled back."""
    return initialize_partitions(table, cfg) if cfg.enabled else table
