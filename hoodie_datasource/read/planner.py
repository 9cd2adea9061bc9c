"""Query planning: which files to read, with which row filter, for each query type.

* snapshot: latest committed slice of every file group (as of ``as.of.instant`` for time travel)
* read_optimized: the same, base files only (identical to snapshot for COW)
* incremental: the file groups that the completed writes in (begin, end] touched, found through
  their commit metadata (no table scan), and only the rows those writes committed (``_hoodie_commit_time``
  in the range, or on a table that ranges by completion time one of the writes' instant times:
  ``read.incremental_range``); on merge-on-read, of each such slice only the files those writes wrote, as
  Hudi merges them

A read of the past that the cleaner or Hudi's archival put out of reach fails (``read.read_window``);
an incremental one may instead, with Hudi's fallback option, read the latest snapshot filtered on
``_hoodie_commit_time``.
"""

from __future__ import annotations

import dataclasses
import logging
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.config.table_config import TableConfig
from hoodie_datasource.errors import UnsupportedTableError
from hoodie_datasource.file_group.merged_reader import MergeRule
from hoodie_datasource.read.incremental_range import incremental_range
from hoodie_datasource.read.read_window import check_as_of, is_exact_range
from hoodie_datasource.storage.storage import Storage
from hoodie_datasource.table.file_group import FileSlice
from hoodie_datasource.table.meta_columns import COMMIT_TIME_COLUMN
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.commit_metadata import write_stats_of

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReadPlan:
    """What a read reads (picklable: Spark tasks read slices of it). It keeps the table's storage and config,
    not the ``Table`` it was planned from, whose timeline no task needs."""

    storage: Storage
    config: TableConfig
    schema: pa.Schema  # meta columns (when the table has them) + data columns
    slices: tuple[FileSlice, ...]
    commit_range: tuple[str, str] | None  # (begin exclusive, end inclusive) for incremental
    # incremental by completion time: the commit times of the rows it returns (in place of ``commit_range``)
    commit_times: frozenset[str] | None = None
    merge_logs: bool = False  # merge-on-read snapshot / incremental: merge log blocks
    visible_instants: frozenset[str] = frozenset()  # completed writes whose log blocks count
    ordering_field: str | None = None
    # the newest completed write the plan shows (None: the table has none); of an incremental read, its end, in the
    # time it ranges by: ``ReadConfig.pinned_to`` plans the same read again from it
    instant: str | None = None

    @property
    def merge_rule(self) -> MergeRule:
        return MergeRule.of(self.config)

    def needs_merge(self, file_slice: FileSlice) -> bool:
        """The slice is read by merging its log blocks into its base file, not from its base file alone."""
        return bool(file_slice.log_files) and self.merge_logs

    def only(self, groups: frozenset[str]) -> ReadPlan:
        """The plan restricted to these file groups (``FileSlice.group``: partition path / file id)."""
        return dataclasses.replace(self, slices=tuple(s for s in self.slices if s.group in groups))

    def commit_filter(self) -> pc.Expression | None:
        """Incremental queries: ``_hoodie_commit_time`` in (begin, end], or one of ``commit_times``."""
        if COMMIT_TIME_COLUMN not in self.schema.names:
            return None
        if self.commit_times is not None:
            return pc.field(COMMIT_TIME_COLUMN).isin(pa.array(sorted(self.commit_times), pa.string()))
        if self.commit_range is None:
            return None
        begin, end = self.commit_range
        return (pc.field(COMMIT_TIME_COLUMN) > begin) & (pc.field(COMMIT_TIME_COLUMN) <= end)


def _written_in_range(slices: Sequence[FileSlice], written: set[str]) -> list[FileSlice]:
    """The slices with only their files the writes in the range wrote: Hudi's ``MergeOnReadIncrementalRelation``
    builds its file-system view from those files alone, so a base file (or log file) written before the range
    is not merged in. A log record of the range then reads as it was written, even where the snapshot keeps
    an older base record of a greater ordering value (``DefaultHoodieRecordPayload``)."""
    kept = []
    for s in slices:
        base = s.base_file if s.base_file is not None and s.base_file.name in written else None
        logs = tuple(log for log in s.log_files if log.name in written)
        if base is not None or logs:
            kept.append(dataclasses.replace(s, base_file=base, log_files=logs))
    return kept


def plan_read(table: Table, cfg: ReadConfig) -> ReadPlan:
    """The plan of ``cfg``'s read of ``table``."""
    timeline, config = table.timeline, table.config
    # a time travel has the schema of its instant; an incremental read the latest, as Hudi's IncrementalRelation
    # (hoodie.datasource.read.schema.use.end.instanttime is false by default)
    schema = table.as_of(cfg.as_of_instant if cfg.query_type != "incremental" else None).schema
    view = table.fs_view
    commit_range, commit_times = None, None
    upto = cfg.as_of_instant  # the newest write the plan shows (None: the latest)
    pin = upto
    visible = timeline.completed_writes_upto(upto)  # the completed writes whose log blocks the slices merge
    if cfg.query_type == "incremental":
        span = incremental_range(timeline, cfg.begin_instant or "0", cfg.end_instant, cfg.hollow_commits)
        stats = [s for instant in span.writes for s in write_stats_of(timeline.read_metadata(instant))
                 if s.get("fileId")]
        touched = {(s.get("partitionPath") or "", s["fileId"]) for s in stats}
        if span.by_completion:
            commit_times = span.commit_times
        else:
            commit_range = (span.begin, span.end)
        upto, visible, pin = span.upto, list(span.shown), span.end
        if is_exact_range(timeline, view, span, touched, cfg.incr_fallback_full_scan):
            slices = view.latest_file_slices(as_of=upto, file_ids=touched) if touched else []
            if config.is_mor:
                slices = _written_in_range(slices, {posixpath.basename(s.get("path") or "") for s in stats})
        else:  # Hudi's IncrementalRelation.fullTableScanDataFrame: the latest snapshot, filtered on commit time
            slices, visible = view.latest_file_slices(), timeline.completed()
    else:
        if cfg.as_of_instant:
            check_as_of(timeline, view, cfg.as_of_instant)
        slices = view.latest_file_slices(as_of=cfg.as_of_instant)
    for s in slices:
        if s.base_file is not None and s.base_file.extension != "parquet":
            raise UnsupportedTableError(
                f"Base file {s.base_relative_path} is in format {s.base_file.extension!r}; "
                "only parquet base files are supported (Lance base files of table version 9 are not)"
            )
    return ReadPlan(table.storage, config, schema, tuple(slices), commit_range, commit_times,
                    merge_logs=cfg.query_type != "read_optimized",
                    visible_instants=frozenset(i.timestamp for i in visible),
                    ordering_field=config.precombine_field,
                    instant=pin or max((i.timestamp for i in visible), default=None))
