"""ReadConfig: the query options, resolved and validated once at ``load()``."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass

from hoodie_datasource.config import keys as k
from hoodie_datasource.errors import HoodieConfigError, TimelineError
from hoodie_datasource.timeline.instant import query_instant_time

DRIVER_CORES = os.cpu_count() or 1
"""Read tasks to spread a small table over when the read does not say (the jvm-shim passes Spark's)."""


@dataclass(frozen=True)
class ReadConfig:
    query_type: str = "snapshot"
    begin_instant: str | None = None
    end_instant: str | None = None
    as_of_instant: str | None = None
    split_size: int = 128 * k.MB
    parallelism: int = DRIVER_CORES
    incr_fallback_full_scan: bool = False  # incremental range past the read window: filter the snapshot
    hollow_commits: str = "FAIL"  # a write in flight inside an incremental range: FAIL | BLOCK (read.hollow_commits)
    incremental_format: str = "latest_state"  # "cdc": every change with before/after images (read.cdc_reader)
    # partitions and files from Apache Hudi's metadata table when its files partition is ready (metadata.reader)
    metadata_enable: bool = True
    # Spark reads leave out the file slices the metadata table's column ranges rule out (read.data_skipping)
    data_skipping: bool = True

    @property
    def is_cdc(self) -> bool:
        return self.query_type == "incremental" and self.incremental_format == "cdc"

    def pinned_to(self, instant: str) -> ReadConfig:
        """The same read as the table was at ``instant``: an incremental pull ends there, any other
        query is a time travel to it. The jvm-shim plans a read in two steps and pins the second to
        what the first saw, so a commit landing in between changes neither."""
        if self.query_type == "incremental":
            return dataclasses.replace(self, end_instant=instant)
        return dataclasses.replace(self, as_of_instant=instant)


def _instant(value: str | None, key: str) -> str | None:
    if value is None or value == "":
        return None
    try:
        return query_instant_time(value, f"Option {key!r}")
    except TimelineError as exc:
        raise HoodieConfigError(str(exc)) from None


def resolve_read_config(options: Mapping[str, str]) -> ReadConfig:
    catalog = k.CATALOG
    catalog.check_unknown(options, k.SPARK_PASSTHROUGH)
    get = lambda prop: catalog.resolve(options, prop)  # noqa: E731
    cfg = ReadConfig(
        query_type=get(k.QUERY_TYPE),
        begin_instant=_instant(get(k.BEGIN_INSTANT), k.BEGIN_INSTANT.key),
        end_instant=_instant(get(k.END_INSTANT), k.END_INSTANT.key),
        as_of_instant=_instant(get(k.AS_OF_INSTANT), k.AS_OF_INSTANT.key),
        split_size=get(k.READ_SPLIT_SIZE),
        parallelism=get(k.READ_PARALLELISM) or DRIVER_CORES,
        incr_fallback_full_scan=get(k.INCR_FALLBACK_FULL_SCAN),
        hollow_commits=get(k.HOLLOW_COMMIT) or "FAIL",
        incremental_format=get(k.INCREMENTAL_FORMAT),
        metadata_enable=get(k.METADATA_ENABLE),
        data_skipping=get(k.DATA_SKIPPING),
    )
    if cfg.hollow_commits == "USE_TRANSITION_TIME":
        raise HoodieConfigError(f"{k.HOLLOW_COMMIT.key}=USE_TRANSITION_TIME is not supported (tables of version 6 "
                                "record no completion times); use FAIL (the default) or BLOCK")
    for prop, value in ((k.READ_SPLIT_SIZE, cfg.split_size), (k.READ_PARALLELISM, cfg.parallelism)):
        if value < 1:
            raise HoodieConfigError(f"Option {prop.key!r} must be a positive integer, got {value}")
    if cfg.query_type == "incremental" and cfg.begin_instant is None:
        raise HoodieConfigError(
            "query=incremental needs option 'begin.instant' (hoodie.datasource.read.begin.instanttime): "
            "records committed after it are returned; use '000' for everything"
        )
    if cfg.query_type != "incremental" and (cfg.begin_instant or cfg.end_instant):
        raise HoodieConfigError(
            "Options begin.instant / end.instant only apply to query=incremental; "
            f"the query type is {cfg.query_type!r}"
        )
    if cfg.begin_instant and cfg.end_instant and cfg.begin_instant > cfg.end_instant:
        raise HoodieConfigError(
            f"Option 'begin.instant' ({k.BEGIN_INSTANT.key}) {cfg.begin_instant} is later than option "
            f"'end.instant' ({k.END_INSTANT.key}) {cfg.end_instant}: an incremental read returns the commits "
            "in (begin, end], so begin must not be after end"
        )
    if cfg.query_type == "incremental" and cfg.as_of_instant:
        raise HoodieConfigError("as.of.instant cannot be combined with query=incremental; use end.instant")
    return cfg
