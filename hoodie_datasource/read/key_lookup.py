"""Records found by key through the table's index: the Hoodie design's read client (Apache Hudi's
``SparkRDDReadClient``, formerly ``HoodieReadClient``), whatever engine moves the keys.

    KeyLookup.of(table, options)  the table's latest snapshot and the index its writes use (``hoodie.index.type``
                                  and the other index options, as a write takes them; BLOOM by default, as
                                  Hudi's read client)
    key_rows(records)             the keys of records, as the index takes them (rows without a key left out)
    locate(keys)                  the file group the index names for each key (``Index.tag``)
    read_located(locations)       the latest records of the located keys, reading only the groups named
    read_keys(keys)               the latest record of each key the table holds
    filter_exists(records)        the records whose keys the table does not hold

A key is the record key (made from the record key fields as a write makes it) and, unless the index is global, the
partition path (from the partition fields): under a partition-local index a key is held only in its own partition,
as Hudi's ``filterExists`` tags by ``HoodieKey``; under a global index it is held wherever it lives.

The index only names file groups (``index.index``: a bucket index names the bucket's group whatever it holds, a
bloom filter's lone claim is not checked). Whether a key is held is what the merged read of the group named says:
the latest slice, its log blocks merged as a snapshot read merges them (``read.file_reader``), so a key a log
block deleted is not held and one a log block updated reads as updated. Apache Hudi's ``filterExists`` takes the
index's tag as it is: under its bucket index every key of a bucket that has a file group counts as held (a new key
among them is filtered out), and under its bloom index on a merge-on-read table a key deleted in a log block still
counts as held (``HoodieBloomIndex`` looks in base files only); neither happens here. Under its global indexes with
``hoodie.*.index.update.partition.path=true`` Hudi's tagging turns a record whose key is stored in another partition
into an insert there (``HoodieIndexUtils.mergeForPartitionUpdatesIfNeeded``), so ``filterExists`` keeps it, merged
with the stored record; here the table holds that key, as a global index keeps a key once in the whole table, and
the record is filtered out (as Hudi filters it with the option false: the record is tagged where the key is).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.config.table_config import KEYGEN_COMPLEX, KEYGEN_NONPARTITIONED, KEYGEN_SIMPLE
from hoodie_datasource.config.write_config import resolve_write_config
from hoodie_datasource.config.write_operation import WriteOperation
from hoodie_datasource.errors import SchemaMismatchError, UnsupportedTableError
from hoodie_datasource.index.index import LOCATION_SCHEMA, Index, TagScope, located
from hoodie_datasource.index.key_ranges import FileKeyRange
from hoodie_datasource.index.registry import index_for
from hoodie_datasource.read.file_reader import read_file_slice
from hoodie_datasource.read.planner import ReadPlan, plan_read
from hoodie_datasource.table.keygen import KeyGenerator
from hoodie_datasource.table.meta_columns import (
    FILE_ID_COLUMN,
    IS_DELETE_COLUMN,
    LOCATION_PARTITION_COLUMN,
    PARTITION_PATH_COLUMN,
    RECORD_KEY_COLUMN,
)
from hoodie_datasource.table.table import Table

logger = logging.getLogger(__name__)

# the keys as the index takes them: none is a delete (a bucket index places a delete of a key it cannot find nowhere)
KEY_SCHEMA = pa.schema([(RECORD_KEY_COLUMN, pa.string()), (PARTITION_PATH_COLUMN, pa.string()),
                        (IS_DELETE_COLUMN, pa.bool_())])
KEY_GENERATORS = (KEYGEN_SIMPLE, KEYGEN_COMPLEX, KEYGEN_NONPARTITIONED)  # whose partition paths ``KeyGenerator`` makes
_KINDS = (pa.types.is_integer, pa.types.is_floating, pa.types.is_decimal, pa.types.is_boolean, pa.types.is_date,
          pa.types.is_timestamp, lambda t: pa.types.is_string(t) or pa.types.is_large_string(t)
          or pa.types.is_string_view(t), lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t))


def _same_kind(given: pa.DataType, stored: pa.DataType) -> bool:
    """Whether a key column of type ``given`` names keys as a column of the table's type ``stored`` does once cast
    (an int for a bigint, a timestamp of another unit), not as another kind of value (a string for a date)."""
    return given == stored or any(kind(given) and kind(stored) for kind in _KINDS)


@dataclass(frozen=True)
class KeyLookup:
    """One table's snapshot and index, for finding its records by key (picklable: Spark tasks read with it)."""

    plan: ReadPlan  # the latest snapshot: the slices the index looks in and the reads merge
    keygen: KeyGenerator
    index: Index
    scope: TagScope
    key_types: pa.Schema  # the table's types of the key columns (empty while the table has no data)

    @staticmethod
    def of(table: Table, options: Mapping[str, str] | None = None) -> KeyLookup:
        """The lookup of ``table``'s latest snapshot through the index ``options`` describe (the index options of a
        write, as Hudi's read client takes a write config; the bucket count is checked against the table's commits
        as a write checks it)."""
        config = resolve_write_config(dict(options or {}), table.config)
        index = index_for(config.index).for_table(table)
        keygen_class = table.config.keygen_class.rsplit(".", 1)[-1]
        if not index.is_global and keygen_class not in ("", *(c.rsplit(".", 1)[-1] for c in KEY_GENERATORS)):
            raise UnsupportedTableError(
                f"Table {table.uri} makes its partition paths with {keygen_class}, which a lookup under "
                f"{config.index.index_type} would need to follow; keys are found in tables of "
                f"{', '.join(KEY_GENERATORS)}, or under GLOBAL_BLOOM, GLOBAL_SIMPLE, RECORD_INDEX or HBASE (a key held in "
                "any partition)")
        index.check_table(table.timeline)
        plan = plan_read(table, ReadConfig())
        if plan.slices and RECORD_KEY_COLUMN not in plan.schema.names:
            raise UnsupportedTableError(
                f"Table {table.uri} keeps no record key column ({RECORD_KEY_COLUMN}: written with "
                "hoodie.populate.meta.fields=false), so its records cannot be found by key")
        # a lookup writes no file group: the instant only names the new groups a bucket index would make
        scope = index.scope(table, plan.instant or "0", WriteOperation.UPSERT, plan.schema)
        data = table.data_schema or pa.schema([])
        fields = (*config.keygen.record_key_fields, *config.keygen.partition_fields)
        key_types = pa.schema([data.field(name) for name in dict.fromkeys(fields) if name in data.names])
        return KeyLookup(plan, config.keygen, index, scope, key_types)

    @property
    def key_fields(self) -> tuple[str, ...]:
        """The columns that make a key: the record key fields, and the partition fields unless the index is global."""
        partitions = () if self.index.is_global else self.keygen.partition_fields
        return tuple(dict.fromkeys((*self.keygen.record_key_fields, *partitions)))

    def check_columns(self, schema: pa.Schema) -> None:
        """Refuse keys (of ``schema``) without a column of ``key_fields`` or with one whose type names other values
        than the table's column does (``SchemaMismatchError``, naming it)."""
        missing = [name for name in self.key_fields if name not in schema.names]
        if missing:
            needed = "the record key and partition fields" if self.keygen.partition_fields and not \
                self.index.is_global else "the record key fields"
            raise SchemaMismatchError(
                f"The keys have no column {', '.join(missing)}: a lookup under {self.index.config.index_type} takes "
                f"{needed} ({', '.join(self.key_fields)}); the keys' columns are: {', '.join(schema.names)}")
        for name in self.key_fields:
            given = schema.field(name).type
            if name in self.key_types.names and not _same_kind(given, stored := self.key_types.field(name).type):
                raise SchemaMismatchError(
                    f"Key column {name!r} is {given} but the table stores {stored}: give the keys as the table's "
                    f"values (cast {name!r} to {stored})")

    def _conformed(self, records: pa.Table) -> pa.Table:
        """The key columns of ``records`` (``key_fields``), cast to the table's types: they make the keys a write of
        them made."""
        self.check_columns(records.schema)
        records = records.select(list(self.key_fields))
        for name in self.key_fields:
            if name not in self.key_types.names:
                continue
            stored = self.key_types.field(name).type
            column = records.column(name)
            if column.type != stored:
                try:
                    column = column.cast(stored)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                    raise SchemaMismatchError(f"Key column {name!r} does not fit the table's type {stored}: {exc}"
                                              ) from None
                records = records.set_column(records.schema.get_field_index(name), name, column)
        return records

    def with_keys(self, records: pa.Table) -> pa.Table:
        """The key columns of ``records`` with their record key (null for a row without one: no stored record lacks
        a key) and, unless the index is global, partition path (else null)."""
        conformed = self._conformed(records)
        keys = self.keygen.record_keys_or_null(conformed)
        partitions = pa.nulls(records.num_rows, pa.string()) if self.index.is_global else \
            self.keygen.partition_paths(conformed)
        return conformed.append_column(RECORD_KEY_COLUMN, keys).append_column(PARTITION_PATH_COLUMN, partitions)

    def key_rows(self, records: pa.Table) -> pa.Table:
        """The keys of ``records`` as the index takes them (``KEY_SCHEMA``), rows without a record key left out."""
        return keys_of(self.with_keys(records))

    def files(self, partitions: Iterable[str] | None) -> list[FileKeyRange]:
        """The latest slices of ``partitions`` (every partition: None) as the index reads them."""
        wanted = None if partitions is None else set(partitions)
        slices = [s for s in self.plan.slices if wanted is None or s.partition_path in wanted]
        return self.index.file_ranges(self.plan.storage, slices)

    def locate(self, keys: pa.Table, files: Sequence[FileKeyRange] | None = None) -> pa.Table:
        """The file group the index names for each of ``keys`` (``KEY_SCHEMA``), as ``LOCATION_SCHEMA`` rows; a key
        the index places nowhere has none. ``files``: the index's files of the keys' partitions (``files``), when the
        caller has them (those of every partition, read once for all the batches of a distributed lookup). The
        index tags them as a write's task holding its records does (``Index.tag``): any batch of keys alike, a key
        asked in two batches located in each."""
        if keys.num_rows == 0 or not self.plan.slices:
            return LOCATION_SCHEMA.empty_table()
        if files is None:
            files = self.files(None if self.index.is_global else pc.unique(keys.column(PARTITION_PATH_COLUMN)).to_pylist())
        tagged, _ = self.index.tag(keys, files, self.scope)
        return located(tagged)

    def read_located(self, locations: pa.Table, columns: frozenset[str] | None = None) -> pa.Table:
        """The latest records of the keys of ``locations`` (``LOCATION_SCHEMA``) that the file groups named hold
        (``columns`` of them, when given), each group read once for its keys and nothing else read: a base file is
        scanned for the keys (its row groups by their key statistics), a slice with log files merged first."""
        schema = self.plan.schema if columns is None else pa.schema([f for f in self.plan.schema if f.name in columns])
        if locations.num_rows == 0:
            return schema.empty_table()
        groups = pc.dictionary_encode(pc.binary_join_element_wise(
            locations.column(LOCATION_PARTITION_COLUMN), locations.column(FILE_ID_COLUMN), "\x00")).combine_chunks()
        codes = groups.indices.to_numpy(zero_copy_only=False)
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(len(groups.dictionary) + 1))
        keys = locations.column(RECORD_KEY_COLUMN).combine_chunks().take(pa.array(order))
        slices = {(s.partition_path, s.file_id): s for s in self.plan.slices}
        parts: list[pa.Table] = []
        for code, group in enumerate(groups.dictionary.to_pylist()):
            partition, file_id = group.split("\x00")
            wanted = pc.unique(keys.slice(bounds[code], bounds[code + 1] - bounds[code]))
            batches = list(read_file_slice(self.plan, slices[(partition, file_id)],
                                           pc.field(RECORD_KEY_COLUMN).isin(wanted), frozenset({RECORD_KEY_COLUMN}),
                                           columns))
            if batches:
                parts.append(pa.Table.from_batches(batches).select(schema.names))
        logger.info("Read %d file group(s) of %s for %d key(s)", len(groups.dictionary), self.plan.storage.uri,
                    locations.num_rows)
        return pa.concat_tables(parts) if parts else schema.empty_table()

    def read_keys(self, keys: pa.Table) -> pa.Table:
        """The latest record of each key of ``keys`` the table holds (a key asked twice, once), in the table's
        schema (meta columns first), as a snapshot read shows it. A key stored in two file groups (inserts that
        allow duplicates) is read from the one the index names, as Hudi's ``readROView`` reads it."""
        return self.read_located(self.locate(self.key_rows(keys)))

    def held(self, keys: pa.Table) -> pa.Table:
        """Of ``keys`` (``KEY_SCHEMA``), those the table holds: their record key and partition path columns."""
        return self.read_located(self.locate(keys), frozenset({RECORD_KEY_COLUMN, PARTITION_PATH_COLUMN}))

    def filter_exists(self, records: pa.Table) -> pa.Table:
        """The rows of ``records`` whose keys the table does not hold (all of them, duplicates too, in order; a row
        without a record key is held by no table)."""
        keyed = self.with_keys(records)
        held = self.identities(self.held(keys_of(keyed))).combine_chunks()
        return records.filter(pc.invert(pc.fill_null(pc.is_in(self.identities(keyed), value_set=held), False)))

    def identities(self, keyed: pa.Table) -> pa.ChunkedArray:
        """What identifies the key of each row of ``keyed`` (with record key and partition path columns: ``with_keys``'s
        or stored records) as the index matches keys (``Index.join_keys``): the record key, and the partition path
        unless the index is global (null: a row without a key)."""
        if self.index.is_global:
            return pa.chunked_array(keyed.column(RECORD_KEY_COLUMN))
        return pa.chunked_array(pc.binary_join_element_wise(
            keyed.column(RECORD_KEY_COLUMN), keyed.column(PARTITION_PATH_COLUMN), "\x00"))


def keys_of(keyed: pa.Table) -> pa.Table:
    """The keys of records with their key columns (``KeyLookup.with_keys``) as the index takes them (``KEY_SCHEMA``),
    rows without a record key left out."""
    keyed = keyed.filter(pc.is_valid(keyed.column(RECORD_KEY_COLUMN)))
    return pa.table([keyed.column(RECORD_KEY_COLUMN), keyed.column(PARTITION_PATH_COLUMN),
                     pa.repeat(pa.scalar(False), keyed.num_rows)], schema=KEY_SCHEMA)
