"""Incremental, CDC and time-travel reads of a table Apache Hudi 1.1.1 writes at its own table version (9, timeline
layout 2: each completed instant records its completion time), answered as Hudi 1.1.1 answers them.

Hudi 1.x ranges an incremental read of such a table by completion time: the writes that completed in
(begin, end], and of them the rows whose ``_hoodie_commit_time`` is one of their instant times
(``IncrementalQueryAnalyzer``, ``HoodieIncrementalRelationV2Trait``). A begin taken from an instant time (earlier
than that instant's completion) therefore includes that instant's write, unlike on a version-6 table. Its CDC
query and time travel compare instant times (``HoodieCDCExtractor``, ``BaseHoodieTableFileIndex``).

Each bound is taken from the timeline: a write's instant time, its completion time, and a time between the two;
Java and we answer the same rows for each."""

from __future__ import annotations

from pathlib import Path

import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.read.table_reader import read_table
from tests.hudi_oracle import HUDI_0_15, HudiOracle, assert_same_table, cdc_changes
from tests.hudi_oracle.test_hudi_reads_ours import rows

pytestmark = pytest.mark.hudi_oracle


def java_history(hudi: HudiOracle, path: str, table_type: str) -> list[tuple[str, str]]:
    """Java 1.1.1 writes, at its default table version: an insert, two upserts (updates and new keys) and a delete;
    the (instant time, completion time) of the table's completed writes."""
    options = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "city",
               "hoodie.datasource.write.table.type": table_type, "hoodie.compact.inline": "false"}
    if table_type == "COPY_ON_WRITE":  # Hudi 1.1.1 fails a CDC query of a MOR table (skip_hudi_1_mor_cdc)
        options["hoodie.table.cdc.enabled"] = "true"
    hudi.write(path, rows(["a", "b", "c"], [1, 1, 1], ["sf", "nyc", "sf"], [1.0, 2.0, 3.0]),
               {**options, "hoodie.datasource.write.operation": "insert"}, mode="overwrite")
    hudi.write(path, rows(["a", "dd"], [2, 2], ["sf", "la"], [1.5, 4.0]),
               {**options, "hoodie.datasource.write.operation": "upsert"})
    hudi.write(path, rows(["c", "e"], [3, 3], ["sf", "nyc"], [5.0, 6.0]),
               {**options, "hoodie.datasource.write.operation": "upsert"})
    hudi.write(path, rows(["b"], [4], ["nyc"], [0.0]), {**options, "hoodie.datasource.write.operation": "delete"})
    properties = (Path(path) / ".hoodie" / "hoodie.properties").read_text().splitlines()
    assert "hoodie.table.version=9" in properties and "hoodie.timeline.layout.version=2" in properties
    return [(i.timestamp, i.completion) for i in HoodieTable(path).timeline().completed()]


def incremental(begin: str, end: str | None = None, **more: str) -> dict[str, str]:
    options = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": begin, **more}
    return options if end is None else {**options, "hoodie.datasource.read.end.instanttime": end}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_we_read_hudi_1s_table_by_completion_time_as_it_does(hudi, tmp_path, table_type):
    if hudi.version == HUDI_0_15:
        pytest.skip("Hudi 0.15 writes table version 6 only, whose reads range by instant time")
    path = str(tmp_path / "trips")
    writes = java_history(hudi, path, table_type)
    assert len(writes) == 4 and all(t < c for t, c in writes)
    (t1, c1), (t2, c2), (t3, c3), (t4, c4) = writes
    between = str(int(t2) + 1)  # after the second write was requested, before it completed
    assert t2 < between < c2 and c1 < t2

    def answers(options: dict[str, str], cfg: ReadConfig):
        java, ours = hudi.read(path, options), read_table(path, cfg)
        assert_same_table(java, ours)
        return sorted(set(ours.column("_hoodie_commit_time").to_pylist()))

    cases = [(t1, None), (c1, None), (t2, None), (between, None), (c2, None), (t2, c3), (between, t3), (c1, c2),
             (t1, t2)]
    got = {case: answers(incremental(*case), ReadConfig(query_type="incremental", begin_instant=case[0],
                                                        end_instant=case[1])) for case in cases}
    # by completion time: a begin at (or after) an instant time, before its completion, includes that write
    assert got[(t2, None)] == got[(between, None)] == got[(c1, None)] == [t2, t3]
    assert got[(c2, None)] == [t3]
    assert got[(t1, t2)] == [t1] and got[(between, t3)] == [t2] and got[(t2, c3)] == [t2, t3]

    if table_type == "COPY_ON_WRITE":
        changed = {}
        for begin in (t2, between, c2):
            cdc = incremental(begin, **{"hoodie.datasource.query.incremental.format": "cdc"})
            ours = read_table(path, ReadConfig(query_type="incremental", begin_instant=begin, incremental_format="cdc"))
            assert cdc_changes(ours) == cdc_changes(hudi.read(path, cdc))
            changed[begin] = {ts for _, ts, _, _ in cdc_changes(ours)}
        # CDC ranges by instant time: begun after the second write's instant time, its changes are left out
        assert changed[between] == changed[c2] == {t3, t4}

    for as_of in (t2, between, c2, t3):
        assert_same_table(hudi.read(path, {"as.of.instant": as_of}), read_table(path, ReadConfig(as_of_instant=as_of)))
