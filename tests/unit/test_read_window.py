"""Reads of the past the cleaner or an unread archive put out of reach fail with ``ReadWindowError``
(or, for incremental pulls with Hudi's fallback, read the current snapshot); every other read of the
past is exactly what an uncleaned twin of the table gives. Local engine, no JVM."""

from __future__ import annotations

import os

import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import resolve_read_config
from hoodie_datasource.errors import CorruptFileError, HoodieConfigError, ReadWindowError
from hoodie_datasource.read.read_window import load_read_window
from hoodie_datasource.table.table import Table
from tests.unit.small_tables import batch, read_pairs

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}
# the metadata table compacts at each write: archival, which its latest compaction bounds, goes as far
NO_CLEAN = {"hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false",
            "hoodie.metadata.compact.max.delta.commits": "1"}


def upserts(i: int, n: int = 40):
    """The i-th of the issue's overlapping upserts: n keys from i * n/2, over two partitions."""
    return batch([(f"k{j}", i, "xy"[j % 2], i) for j in range(i * n // 2, i * n // 2 + n)])


def twins(tmp_path, writes, opts, cleaned_opts):
    """The same writes into a table with ``cleaned_opts`` and into an uncleaned twin: (path, instants) each."""
    out = []
    for name, extra in (("cleaned", cleaned_opts), ("twin", NO_CLEAN)):
        path = str(tmp_path / name)
        out.append((path, [write(path, {**opts, **extra}) for write in writes]))
    return out


def first_exact(cleaned, twin, **query) -> int:
    """Read both tables as of each commit (``query(i, instants)`` gives the options): reads before the
    returned index fail naming their instant and the first exact one; every read from it matches the twin."""
    (path, ours), (twin_path, theirs) = cleaned, twin
    refused = []
    for i in range(len(ours)):
        try:
            got = read_pairs(path, **query["query"](i, ours))
        except ReadWindowError as exc:
            refused.append((i, str(exc)))
            continue
        assert got == read_pairs(twin_path, **query["query"](i, theirs)), f"read {i} differs from the twin"
    first = len(refused)
    assert [i for i, _ in refused] == list(range(first)), "only the oldest reads may be refused"
    for i, message in refused:
        assert ours[i] in message and f"earliest instant that can still be read exactly is {ours[first]}" in message
        assert "hoodie.cleaner.commits.retained" in message
    return first


def as_of(i, instants):
    return {"as_of_instant": instants[i]}


def pull_from_start(i, instants):
    return {"query_type": "incremental", "begin_instant": "000", "end_instant": instants[i]}


def test_fourteen_upserts_with_default_cleaning(tmp_path):
    """The issue's reproduction: commits 1-3 read 0 rows, silently; now they fail, the rest read exactly."""
    writes = [lambda path, opts, i=i: write_local(path, upserts(i), opts) for i in range(14)]
    cleaned, twin = twins(tmp_path, writes, OPTS, {})
    assert any(i.action == "clean" for i in HoodieTable(cleaned[0]).instants())
    assert first_exact(cleaned, twin, query=as_of) == 3
    assert first_exact(cleaned, twin, query=pull_from_start) == 3
    # Hudi's own bound (the last clean's earliestCommitToRetain) is later: the window here is exact
    assert load_read_window(HoodieTable(cleaned[0]).timeline(), _view(cleaned[0])).earliest == cleaned[1][3]


def _view(path):
    return Table.load(path).fs_view


@pytest.mark.parametrize("policy", [
    {"hoodie.cleaner.commits.retained": "1"},
    {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "2"},
])
def test_explicit_clean_with_either_policy(tmp_path, policy):
    """``HoodieTable(path).clean(...)``: older reads gave 0 or a part of the rows; now they fail."""
    writes = [lambda path, opts, i=i: write_local(path, upserts(i), opts) for i in range(5)]
    cleaned, twin = twins(tmp_path, writes, OPTS, NO_CLEAN)
    assert HoodieTable(cleaned[0]).clean(**policy) is not None
    first = first_exact(cleaned, twin, query=as_of)
    assert first == 3  # the version each group had at the 4th commit is kept (the last before the window)
    assert first_exact(cleaned, twin, query=pull_from_start) == first


def test_replaced_file_groups_are_needed_until_their_replacecommit(tmp_path):
    writes = [
        lambda path, opts: write_local(path, batch([("a", 1, "x", 1), ("b", 1, "y", 2)]), opts),
        lambda path, opts: write_local(path, batch([("a", 2, "x", 10)]), opts),
        lambda path, opts: write_local(path, batch([("c", 1, "x", 3)]), {**opts, "operation": "insert_overwrite"}),
        lambda path, opts: write_local(path, batch([("b", 2, "y", 20)]), opts),
        lambda path, opts: write_local(path, batch([("b", 3, "y", 30)]), opts),
    ]
    cleaned, twin = twins(tmp_path, writes, OPTS, NO_CLEAN)
    assert HoodieTable(cleaned[0]).clean(**{"hoodie.cleaner.commits.retained": "1"}) is not None
    path, (t1, t2, t3, t4, t5) = cleaned
    window = load_read_window(HoodieTable(path).timeline(), _view(path))
    spans = {partition: spans for (partition, _), spans in window.gaps.items()}
    assert spans == {"x": ((t1, t3),), "y": ((t1, t4),)}  # x's group: needed until the overwrite replaced it
    assert first_exact(cleaned, twin, query=as_of) == 3
    assert read_pairs(path, query_type="incremental", begin_instant=t2, end_instant=t3) == [("c", 3)]  # y not read


def test_merge_on_read_slices_are_needed_until_their_compaction(tmp_path):
    mor = {**OPTS, "storage.type": "MERGE_ON_READ"}
    writes = [
        lambda path, opts: write_local(path, batch([("a", 1, "x", 1), ("b", 1, "x", 2)]), opts),
        lambda path, opts: write_local(path, batch([("a", 2, "x", 10)]), opts),
        lambda path, opts: HoodieTable(path).compact()[0],
        lambda path, opts: write_local(path, batch([("b", 2, "x", 20)]), opts),
    ]
    cleaned, twin = twins(tmp_path, writes, mor, NO_CLEAN)
    assert HoodieTable(cleaned[0]).clean(**{"hoodie.cleaner.commits.retained": "1"}) is not None
    path, (t1, t2, compaction, t4) = cleaned
    assert list(load_read_window(HoodieTable(path).timeline(), _view(path)).gaps.values()) == [((t1, compaction),)]
    assert first_exact(cleaned, twin, query=as_of) == 2


def test_incremental_fallback_reads_the_current_snapshot_filtered_on_commit_time(tmp_path, caplog):
    path = str(tmp_path / "t")
    t1 = write_local(path, batch([("a", 1, "x", 1), ("b", 1, "x", 2), ("c", 1, "y", 3)]), OPTS)
    t2 = write_local(path, batch([("a", 2, "x", 10), ("d", 2, "y", 4)]), OPTS)
    write_local(path, batch([("b", 3, "x", 20)]), OPTS)
    write_local(path, batch([("a", 4, "x", 30)]), OPTS)
    HoodieTable(path).clean(**{"hoodie.cleaner.commits.retained": "1"})
    with pytest.raises(ReadWindowError, match=f"incremental read \\(0+, {t2}\\].*fallback.fulltablescan.enable"):
        read_pairs(path, query_type="incremental", begin_instant="000", end_instant=t2)
    with caplog.at_level("WARNING"):
        got = read_pairs(path, query_type="incremental", begin_instant="000", end_instant=t2,
                         incr_fallback_full_scan=True)
    # exactly, (000, t2] would be a=10, b=2, c=3, d=4; the current snapshot has a and b from later commits
    assert got == [("c", 3), ("d", 4)]
    assert "Falling back to a full table scan" in caplog.text and t2 in caplog.text
    assert read_pairs(path, query_type="incremental", begin_instant=t1, end_instant=t2,
                      incr_fallback_full_scan=True) == [("d", 4)]


# archival never passes the metadata table's latest compaction: the instants it archives are in its base files
ARCHIVABLE = {**OPTS, "hoodie.metadata.compact.max.delta.commits": "1"}


def _archive_out_of_reach(path: str) -> None:
    """The first commit's instant files removed, and an archive log that does not decode in their place: what
    came before the timeline's first instant is unknown (as for Hudi 1.x's LSM history, which is not read)."""
    meta = os.path.join(path, ".hoodie")
    for name in sorted(n for n in os.listdir(meta) if n[:1].isdigit())[:3]:  # t1's requested, inflight, commit
        os.remove(os.path.join(meta, name))
    with open(os.path.join(meta, "archived", ".commits_.archive.1_1-0-1"), "wb") as damaged:
        damaged.write(b"#HUDI#" + b"\x00" * 40)


def test_instants_archived_out_of_reach(tmp_path, caplog):
    """A range or time travel before the timeline's first instant fails when the archive does not say what
    came before it."""
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1)]), ARCHIVABLE)
    t2 = write_local(path, batch([("a", 2, "x", 10)]), ARCHIVABLE)
    t3 = write_local(path, batch([("b", 3, "y", 20)]), ARCHIVABLE)
    _archive_out_of_reach(path)
    earliest = f"earliest instant that can still be read exactly is {t2}"
    with pytest.raises(ReadWindowError, match=f"archived where this library does not read them.*{earliest}"):
        read_pairs(path, query_type="incremental", begin_instant="000")
    with pytest.raises(ReadWindowError, match="archived where this library does not read them"):
        read_pairs(path, as_of_instant="20000101000000")
    assert read_pairs(path, query_type="incremental", begin_instant=t2) == [("b", 20)]
    assert read_pairs(path, query_type="incremental", begin_instant="000", incr_fallback_full_scan=True) == [
        ("a", 10), ("b", 20)]
    assert read_pairs(path, as_of_instant=t3) == [("a", 10), ("b", 20)]


def test_files_of_instants_archived_out_of_reach_are_committed(tmp_path):
    """A file group last written by a commit archived out of reach stays in every snapshot from the timeline's
    start (Hudi's ``containsOrBeforeTimelineStarts``); it was silently dropped."""
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1)]), ARCHIVABLE)
    t2 = write_local(path, batch([("b", 2, "y", 20)]), ARCHIVABLE)
    _archive_out_of_reach(path)
    assert read_pairs(path) == [("a", 1), ("b", 20)]
    assert read_pairs(path, as_of_instant=t2) == [("a", 1), ("b", 20)]
    assert read_pairs(path, query_type="incremental", begin_instant=t2) == []


def test_archived_instants_stay_readable(tmp_path):
    """Instants in the archive log (Hudi's format, which Hudi's archiver writes too) are read: time travel and
    incremental pulls across them answer as before the archival."""
    path = str(tmp_path / "t")
    instants = [write_local(path, batch([(f"k{i}", i, "xy"[i % 2], i)]), {**OPTS, **NO_CLEAN}) for i in range(5)]
    before = {t: read_pairs(path, as_of_instant=t) for t in instants}
    pulled = read_pairs(path, query_type="incremental", begin_instant=instants[0], end_instant=instants[2])
    archived = HoodieTable(path).archive(**{"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"})
    assert archived == instants[:3]
    assert not [n for n in os.listdir(os.path.join(path, ".hoodie")) if n.startswith(tuple(archived))]
    assert {t: read_pairs(path, as_of_instant=t) for t in instants} == before
    assert read_pairs(path, query_type="incremental", begin_instant=instants[0], end_instant=instants[2]) == pulled
    assert HoodieTable(path).completed_commits() == instants


def test_time_travel_before_the_first_commit_is_the_empty_table_with_a_warning(tmp_path, caplog):
    path = str(tmp_path / "t")
    t1 = write_local(path, batch([("a", 1, "x", 1)]), OPTS)
    with caplog.at_level("WARNING"):
        assert read_pairs(path, as_of_instant="20000101000000") == []
    assert f"before the table's first commit {t1}" in caplog.text


def test_a_latest_snapshot_reads_no_clean_metadata(tmp_path):
    """Cheap: a snapshot (or time travel to the latest commit) never opens a clean; older reads do."""
    path = str(tmp_path / "t")
    instants = [write_local(path, upserts(i), {**OPTS, **NO_CLEAN}) for i in range(3)]
    clean = HoodieTable(path).clean(**{"hoodie.cleaner.commits.retained": "1"})
    with open(os.path.join(path, ".hoodie", f"{clean}.clean"), "wb") as handle:
        handle.write(b"Obj\x01 not avro")
    assert len(read_pairs(path)) == len(read_pairs(path, as_of_instant=instants[-1])) == 80
    assert read_pairs(path, query_type="incremental", begin_instant=instants[0]) != []
    with pytest.raises(CorruptFileError):
        read_pairs(path, as_of_instant=instants[0])


def test_begin_after_end_is_a_config_error():
    with pytest.raises(HoodieConfigError, match="20261124000000000 is later than .* 20261123000000000"):
        resolve_read_config({"query": "incremental", "begin.instant": "2026-11-24", "end.instant": "2026-11-23"})


@pytest.mark.parametrize("value, instant", [
    ("20261124010203", "20261124010203"), ("20261124010203456", "20261124010203456"),
    ("2026-11-24", "20261124000000000"), ("2026-11-24 01:02:03", "20261124010203000"),
    ("2026-11-24T01:02:03", "20261124010203000"), ("2026-11-24 01:02:03.456", "20261124010203456"),
    ("000", "00000000000000000"),
])
def test_accepted_instant_forms(value, instant):
    assert resolve_read_config({"as.of.instant": value}).as_of_instant == instant
    pull = resolve_read_config({"query": "incremental", "begin.instant": value, "end.instant": value})
    assert pull.begin_instant == pull.end_instant == instant


@pytest.mark.parametrize("value", ["2026-13-45", "abc", "20261345000000", "2026-11-24 25:00:00", "2026", "1.5"])
def test_invalid_instants_name_the_accepted_forms(value):
    with pytest.raises(HoodieConfigError) as caught:
        resolve_read_config({"as.of.instant": value})
    message = str(caught.value)
    assert f"got {value!r}" in message and "'as.of.instant'" in message
    for form in ("yyyyMMddHHmmss", "yyyyMMddHHmmssSSS", "yyyy-MM-dd", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm:ss.SSS"):
        assert form in message
