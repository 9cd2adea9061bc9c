"""The index's lookup of keys as DataFrame operations: where the write pipeline (``spark.write_dag``) and the read
client (``spark.read_client``) find the file group of each key.

An index placing by hash tags each batch on its own (``Index.tag``: the key alone names the group). A lookup index
runs its two distributed steps: thin (key, candidate file) rows per batch (``candidates``), then, shuffled by file so
that each task reads each of its files once, the exact locations among them (``confirm``)."""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import DataFrame
from pyspark.sql.pandas.types import from_arrow_schema

from hoodie_datasource.index.index import LOCATION_SCHEMA, Index, TagScope, located
from hoodie_datasource.index.key_ranges import FileKeyRange
from hoodie_datasource.index.lookup_index import BASE_FILE_COLUMN, CANDIDATE_SCHEMA
from hoodie_datasource.spark.arrow_steps import per_batch, per_task
from hoodie_datasource.table.meta_columns import PARTITION_PATH_COLUMN, RECORD_KEY_COLUMN


def key_locations(keyed: DataFrame, index: Index, files: Sequence[FileKeyRange], scope: TagScope) -> DataFrame:
    """``LOCATION_SCHEMA`` rows, one per key (``Index.join_keys``) of ``keyed`` (keyed records: record key, partition
    path and, for an index placing by hash, the delete flag) the index names an existing file group of ``files``
    for. The locations are index metadata, not records: small next to the records themselves."""
    if index.places_by_hash:
        return keyed.mapInArrow(per_batch(lambda records: located(index.tag(records, files, scope)[0])),
                                from_arrow_schema(LOCATION_SCHEMA))
    cands = keyed.select(RECORD_KEY_COLUMN, PARTITION_PATH_COLUMN).mapInArrow(
        per_batch(lambda records: index.candidates(records, files)), from_arrow_schema(CANDIDATE_SCHEMA))
    locations = cands.repartition(max(1, min(len(files), 200)), BASE_FILE_COLUMN).mapInArrow(
        per_task(lambda found: index.confirm(found, files, scope)), from_arrow_schema(LOCATION_SCHEMA))
    return locations.dropDuplicates(list(index.join_keys))
