"""The Python data source readers: file slices grouped into input partitions (``read.splits``).

Everything ``read()`` needs travels in the reader (pickled to every task) or in the partition:
state set in ``partitions()`` is lost (see the PySpark data source facts).

``HoodieReader`` takes no filters: PySpark 4.3 caches a DataFrame's planned reader, and a query
*without* filters reuses the reader (and the partitions) planned for an earlier query on the same
DataFrame *with* filters, without calling ``pushFilters`` again. A reader that pruned or filtered
on pushed filters would silently drop rows from that later query (measured: after
``df.filter("fare > 15").count()``, ``df.count()`` returned 1 of 2 rows). So for
``format("hoodie")`` Spark applies every filter itself. A schema given with ``.schema(...)`` is per
relation, not per query, so reading only its columns is safe.

``FilteringReader`` takes the filters it can apply exactly (partition pruning, row-group skipping,
row filtering), and skips file slices by the metadata table's column ranges for every filter (data
skipping). Only the jvm-shim asks for it: it plans every query with a fresh Python data source,
so no query reuses another's reader. The shim also hands the base files that need no merge to
Spark's own parquet scan (``spark.file_listing``), so these readers then read only the file slices
whose log files need merging (``spark.shim_options``). For slices whose base files Spark reads less the
rows their logs replace, a reader reads only the log changes (``changes``: ``rows`` or ``replaced``,
``file_group.merged_reader.log_changes``, decided once per slice and query: ``read.log_changes_cache``); the
replaced rows are named by base file (its ordinal among the scan's file groups) and row index, which Spark's
scan knows without decoding a column (``_metadata.file_modification_time``, ``row_index``: ``spark.shim_options``).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import logging
import operator
import sys
from collections.abc import Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import DataSourceReader, Filter, InputPartition

from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.file_group.merged_reader import log_changes, merge_schema
from hoodie_datasource.metadata.reader import MetadataTableReader
from hoodie_datasource.read import log_changes_cache
from hoodie_datasource.read.data_skipping import AllOf, skipped
from hoodie_datasource.read.file_reader import read_file_slice
from hoodie_datasource.read.planner import ReadPlan
from hoodie_datasource.read.splits import split_slices
from hoodie_datasource.spark.filters import ConvertedFilter, convert, skipping_predicate
from hoodie_datasource.spark.shim_options import REPLACED_FILE_COLUMN, REPLACED_ROW_COLUMN
from hoodie_datasource.table.file_group import FileSlice
from hoodie_datasource.table.keygen import DEFAULT_PARTITION
from hoodie_datasource.table.meta_columns import (
    COMMIT_TIME_COLUMN,
    conform,
)

logger = logging.getLogger(__name__)


def partition_candidates(partition_path: str, fields: Sequence[str], hive_style: bool,
                         schema: pa.Schema) -> dict[str, list[str | None]] | None:
    """For each partition field, the column values a row stored under ``partition_path`` may hold (as the
    text its path spells), or None when the path does not tell them apart.

    Hudi's key generators (``KeyGenUtils.getPartitionPath``, ``getRecordPartitionPath``) join one part per
    field with '/', ``field=value`` when hive-style, and write ``__HIVE_DEFAULT_PARTITION__`` for a null or
    empty value while the data file keeps the value itself: so that part may stand for null, '' or a string
    that literally is ``__HIVE_DEFAULT_PARTITION__``. A value holding '/' adds parts: one field's value is its
    whole path, and a path of several fields with more parts than fields is left unpruned. A path holding
    '%' is left unpruned too: it may spell a value the key generator escaped (``table.keygen``: one that is
    not a plain relative path), which the path does not spell back."""
    parts = [partition_path] if len(fields) == 1 else partition_path.split("/")
    if len(parts) != len(fields) or "%" in partition_path:
        return None
    candidates: dict[str, list[str | None]] = {}
    for name, raw in zip(fields, parts):
        if hive_style:
            if not raw.startswith(f"{name}="):
                return None
            raw = raw[len(name) + 1:]
        if raw == DEFAULT_PARTITION:
            typ = schema.field(name).type if name in schema.names else pa.null()
            text = pa.types.is_string(typ) or pa.types.is_large_string(typ)
            candidates[name] = [None, "", DEFAULT_PARTITION] if text else [None]
        elif raw:
            candidates[name] = [raw]
        else:
            return None  # Hudi writes no empty part
    return candidates


class HoodieReader(DataSourceReader):
    def __init__(self, plan: ReadPlan, cfg: ReadConfig, arrow_schema: pa.Schema, changes: str | None = None,
                 file_groups: Sequence[str] = ()):
        self.plan = plan
        self.cfg = cfg
        self.arrow_schema = arrow_schema  # what Spark expects, exactly
        self.changes = changes
        self.ordinals = {group: i for i, group in enumerate(file_groups)}  # the replaced rows' base file ordinals
        # a schema given with .schema(...) may name fewer columns: base files are read for those only
        self.columns = frozenset(arrow_schema.names) if set(arrow_schema.names) < set(plan.schema.names) else None
        self.filters: list[ConvertedFilter] = []
        self.instants = log_changes_cache.instants_digest(plan.visible_instants) if changes else None

    def _row_filter(self) -> tuple[pc.Expression | None, frozenset[str]]:
        exprs = [f.expression for f in self.filters]
        columns = frozenset().union(*(f.columns for f in self.filters))
        commit_filter = self.plan.commit_filter()
        if commit_filter is not None:
            exprs.append(commit_filter)
            columns = columns | {COMMIT_TIME_COLUMN}
        return (functools.reduce(operator.and_, exprs) if exprs else None), columns

    def partitions(self) -> list[InputPartition]:
        # a changes scan decodes a slice's log blocks (and for ``replaced`` its base file's key and ordering
        # columns), a fraction of the bytes a split counts: split by size its tasks would be mostly a Python
        # task's fixed cost (measured at 5M rows, 57 slices: 5 tasks a scan took 0.6 CPU s more than 2)
        split_size = self.cfg.split_size if self.changes is None else sys.maxsize
        splits = split_slices(self.plan.slices, split_size, self.cfg.parallelism)
        return [InputPartition(files) for files in splits]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if partition.value is None:
            return
        row_filter, filter_columns = self._row_filter()
        for file_slice in partition.value:
            if self.changes is not None:
                yield from self._changes(file_slice, row_filter, filter_columns)
                continue
            for batch in read_file_slice(self.plan, file_slice, row_filter, filter_columns, self.columns):
                yield from conform(pa.Table.from_batches([batch]), self.arrow_schema).to_batches()

    def _changes(self, file_slice: FileSlice, row_filter: pc.Expression | None,
                 filter_columns: frozenset[str]) -> Iterator[pa.RecordBatch]:
        """The slice's log rows that win (``rows``; filtered as the read asks) or the positions in its base
        file of the base rows they replace (``replaced``: the base file's ordinal among the scan's file groups,
        and row index; never filtered, since Spark filters the base rows it keeps itself). The ``replaced`` scan
        runs first and leaves its decision for the ``rows`` scan (``read.log_changes_cache``)."""
        plan = self.plan
        replaced = self.changes == "replaced"
        columns = () if replaced else None if self.columns is None else self.columns | filter_columns
        key = log_changes_cache.slice_key(plan.storage, file_slice, self.instants, plan.merge_rule)
        changes = log_changes(plan.storage, file_slice, merge_schema(plan.schema, columns, plan.ordering_field),
                              plan.visible_instants, plan.merge_rule,
                              None if replaced else log_changes_cache.load(key))
        if replaced:
            log_changes_cache.store(key, changes.decision)
            count = len(changes.replaced)
            ordinal = pa.scalar(self.ordinals[file_slice.group], pa.int64())
            table = pa.table({REPLACED_FILE_COLUMN: pa.repeat(ordinal, count),
                              REPLACED_ROW_COLUMN: pa.array(changes.replaced, pa.int64())})
        else:
            table = changes.rows if row_filter is None else changes.rows.filter(row_filter)
        if table.num_rows:
            yield from conform(table, self.arrow_schema).to_batches()


class FilteringReader(HoodieReader):
    """Takes the filters pyarrow applies exactly; filters on partition columns also prune file slices, and every
    pushed filter (those handed back to Spark too) skips the file slices whose column ranges in ``metadata``
    (the metadata table's ``column_stats``: ``read.data_skipping``) rule it out. Both happen when the filters are
    pushed, before PySpark pickles the reader for its tasks, which carry no ``metadata``."""

    VERBATIM_KEY_GENERATORS = ("SimpleKeyGenerator", "ComplexKeyGenerator", "SIMPLE", "COMPLEX")

    def __init__(self, plan: ReadPlan, cfg: ReadConfig, arrow_schema: pa.Schema, changes: str | None = None,
                 file_groups: Sequence[str] = (), metadata: MetadataTableReader | None = None):
        super().__init__(plan, cfg, arrow_schema, changes, file_groups)
        self.metadata = metadata

    def __getstate__(self) -> dict:
        return {**self.__dict__, "metadata": None}

    def _paths_spell_values(self) -> bool:
        """Partition paths hold the column values as they are (not time-formatted, not url-encoded)."""
        config = self.plan.config
        keygen = (config.keygen_class or "SimpleKeyGenerator").rsplit(".", 1)[-1]
        return keygen in self.VERBATIM_KEY_GENERATORS and not config.url_encode_partitions

    def pushFilters(self, filters: list[Filter]) -> Iterator[Filter]:
        rejected = []
        for f in filters:
            converted = convert(f, self.plan.schema)
            if converted is None:
                rejected.append(f)
            else:
                self.filters.append(converted)
        self.plan = dataclasses.replace(self.plan, slices=tuple(self._pruned()))
        if filters:
            self.plan = skipped(self.plan, AllOf(tuple(skipping_predicate(f) for f in filters)), self.metadata)
        return iter(rejected)

    def _pruned(self) -> Sequence[FileSlice]:
        """The slices of the partitions whose paths hold a value the filters may keep. The filters run on the
        values each path may stand for (every combination, ``partition_candidates``); rows are filtered
        again as they are read, so a partition kept for one of its candidates costs a read, never a row."""
        config, slices = self.plan.config, self.plan.slices
        fields = [f for f in config.partition_fields if f in self.plan.schema.names]
        usable = [f for f in self.filters if f.columns <= set(fields)]
        if not usable or not slices or not self._paths_spell_values():
            return slices
        named = sorted(frozenset().union(*(f.columns for f in usable)))
        paths = sorted({s.partition_path for s in slices})
        wanted: set[str] = set()
        values: dict[str, list[str | None]] = {name: [] for name in named}
        candidate_paths: list[str] = []
        for path in paths:
            candidates = partition_candidates(path, config.partition_fields, config.hive_style_partitioning,
                                              self.plan.schema)
            if candidates is None:
                wanted.add(path)
                continue
            for combination in itertools.product(*(candidates[name] for name in named)):
                for name, value in zip(named, combination):
                    values[name].append(value)
                candidate_paths.append(path)
        columns = {}
        for name in named:
            try:
                columns[name] = pa.array(values[name], pa.string()).cast(self.plan.schema.field(name).type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                return slices  # a partition path that does not parse as the column's type: no pruning
        keep = pa.table(columns).append_column("__path", pa.array(candidate_paths, pa.string())).filter(
            functools.reduce(operator.and_, [f.expression for f in usable]))
        wanted.update(keep.column("__path").to_pylist())
        logger.info("Partition pruning kept %d of %d partitions", len(wanted), len(paths))
        return [s for s in slices if s.partition_path in wanted]
