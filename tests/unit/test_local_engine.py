"""The pure-pyarrow write engine and reader, with no JVM: upserts, deletes, incremental reads,
atomicity (uncommitted files are invisible; retried-attempt files are removed at commit)."""

from __future__ import annotations

import os

import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.client.write_client import start_write
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.read.planner import plan_read
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.markers import create_marker
from hoodie_datasource.table.table import Table
from tests.unit.small_tables import batch
from tests.unit.small_tables import read_pairs as read

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}


def test_upsert_delete_incremental_time_travel(tmp_path):
    path = str(tmp_path / "t")
    t1 = write_local(path, batch([("a", 1, "x", 1), ("b", 1, "y", 2)]), OPTS)
    t2 = write_local(path, batch([("a", 2, "x", 10), ("c", 2, "y", 3), ("c", 1, "y", 99)]), OPTS)
    t3 = write_local(path, batch([("b", 0, "y", 0)]), {**OPTS, "operation": "delete"})
    assert read(path) == [("a", 10), ("c", 3)]
    assert read(path, as_of_instant=t1) == [("a", 1), ("b", 2)]
    assert read(path, query_type="incremental", begin_instant=t1, end_instant=t2) == [("a", 10), ("c", 3)]
    assert read(path, query_type="incremental", begin_instant=t2) == []
    assert HoodieTable(path).completed_commits() == [t1, t2, t3]


def test_files_of_pending_instants_are_invisible_and_rolled_back(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1)]), OPTS)
    session = start_write(open_storage(path), OPTS, batch([("a", 2, "x", 2)]).schema)
    stray = os.path.join(path, "x", f"f-0_0-1-1_{session.instant_time}.parquet")
    create_marker(open_storage(path), session.instant_time, "x", os.path.basename(stray), "CREATE")
    with open(stray, "wb") as handle:
        handle.write(b"not even parquet")
    assert read(path) == [("a", 1)]  # pending instant: its files are not read
    session.transactions.stop_heartbeat()  # the writer dies: no heartbeat file is left
    write_local(path, batch([("b", 1, "x", 5)]), OPTS)  # rolls the dead writer back first
    assert not os.path.exists(stray)
    assert read(path) == [("a", 1), ("b", 5)]


def test_commit_drops_files_of_failed_task_attempts(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1)]), OPTS)
    session = start_write(open_storage(path), OPTS, batch([("a", 2, "x", 2)]).schema)
    retried = f"f-0_0-1-2_{session.instant_time}.parquet"
    create_marker(open_storage(path), session.instant_time, "x", retried, "CREATE")
    open(os.path.join(path, "x", retried), "wb").close()
    session.commit([])
    assert not os.path.exists(os.path.join(path, "x", retried))
    assert not os.path.exists(os.path.join(path, ".hoodie", ".temp", session.instant_time))


def test_small_files_absorb_inserts_and_file_sizing(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([(f"k{i}", 1, "x", i) for i in range(100)]), OPTS)
    write_local(path, batch([(f"n{i}", 1, "x", i) for i in range(100)]), OPTS)
    names = [n for n in os.listdir(os.path.join(path, "x")) if n.endswith(".parquet")]
    assert len({n.split("_")[0] for n in names}) == 1  # second batch went into the small file group
    big = {**OPTS, "hoodie.parquet.max.file.size": "2000", "hoodie.copyonwrite.record.size.estimate": "100"}
    other = str(tmp_path / "u")
    write_local(other, batch([(f"k{i}", 1, "x", i) for i in range(100)]), big)
    assert len([n for n in os.listdir(os.path.join(other, "x")) if n.endswith(".parquet")]) == 5


def test_delete_partition_and_insert_overwrite(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1), ("b", 1, "y", 2)]), OPTS)
    write_local(path, batch([("zz", 1, "y", 0)]), {**OPTS, "operation": "delete_partition"})
    assert read(path) == [("a", 1)]
    write_local(path, batch([("c", 1, "x", 3)]), {**OPTS, "operation": "insert_overwrite"})
    assert read(path) == [("c", 3)]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_overwrites_of_no_records(tmp_path, table_type):
    """insert_overwrite_table of nothing empties the table, insert_overwrite of nothing replaces nothing but the
    partitions of hoodie.static.overwrite.partition.paths (Hudi's SparkInsertOverwriteCommitActionExecutor);
    each is one replacecommit."""
    path = str(tmp_path / "t")
    opts = {**OPTS, "table.type": table_type}
    write_local(path, batch([("a", 1, "x", 1), ("b", 1, "y", 2), ("c", 1, "z", 3)]), opts)
    none = batch([("a", 1, "x", 1)]).slice(0, 0)
    overwrite = write_local(path, none, {**opts, "operation": "insert_overwrite"})
    assert read(path) == [("a", 1), ("b", 2), ("c", 3)]
    assert HoodieTable(path).commit_metadata(overwrite)["partitionToReplaceFileIds"] == {}
    static = write_local(path, none, {**opts, "operation": "insert_overwrite",
                                      "hoodie.static.overwrite.partition.paths": "x,nope"})
    assert read(path) == [("b", 2), ("c", 3)]
    assert list(HoodieTable(path).commit_metadata(static)["partitionToReplaceFileIds"]) == ["x"]
    # a record outside the static partitions replaces its own partition too: never two rows of a key
    write_local(path, batch([("b", 2, "y", 20)]), {**opts, "operation": "insert_overwrite",
                                                   "hoodie.static.overwrite.partition.paths": "z"})
    assert read(path) == [("b", 20)]
    table = write_local(path, none, {**opts, "operation": "insert_overwrite_table"})
    assert read(path) == []
    assert [i.action for i in HoodieTable(path).instants()][-4:] == ["replacecommit"] * 4
    assert HoodieTable(path).latest_commit() == table


def test_static_overwrite_partitions_apply_to_insert_overwrite_only(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1)]), OPTS)
    commits = HoodieTable(path).completed_commits()
    with pytest.raises(HoodieConfigError, match="hoodie.static.overwrite.partition.paths .* operation 'upsert'"):
        write_local(path, batch([("b", 1, "x", 2)]), {**OPTS, "hoodie.static.overwrite.partition.paths": "x"})
    assert HoodieTable(path).completed_commits() == commits and read(path) == [("a", 1)]


def test_bad_operation_leaves_no_trace(tmp_path):
    path = str(tmp_path / "t")
    with pytest.raises(Exception, match="valid values are"):
        write_local(path, batch([("a", 1, "x", 1)]), {**OPTS, "operation": "merge"})
    assert not os.path.exists(path)


def test_every_base_file_footer_covers_its_keys_after_merges(tmp_path):
    import pyarrow.parquet as pq

    from hoodie_datasource.index.bloom_filter import read_bloom_filter

    path = str(tmp_path / "t")
    write_local(path, batch([(f"k{i}", 1, "x", i) for i in range(50)]), OPTS)
    write_local(path, batch([(f"k{i}", 2, "x", i) for i in range(0, 50, 7)] + [("new1", 1, "x", 0)]), OPTS)
    write_local(path, batch([("k3", 3, "x", 0)]), {**OPTS, "operation": "delete"})
    write_local(path, batch([("new2", 1, "x", 0)]), OPTS)
    latest = HoodieTable(path).latest_commit()
    [name] = [n for n in os.listdir(os.path.join(path, "x")) if n.endswith(f"_{latest}.parquet")]
    file = os.path.join(path, "x", name)
    keys = pq.read_table(file, columns=["_hoodie_record_key"]).column(0)
    assert len(keys) == 51 and "k3" not in keys.to_pylist()
    assert read_bloom_filter(open_storage(path), f"x/{name}").might_contain(keys).all()
    footer = pq.read_metadata(file).metadata
    assert footer[b"hoodie_min_record_key"] == b"k0" and footer[b"hoodie_max_record_key"] == b"new2"


def test_base_file_footer_holds_the_bloom_filter_once(tmp_path):
    """The Hudi footer entries are key-value metadata only; the stored Arrow schema (exact types
    on read) carries no second copy of the bloom filter."""
    import base64

    import pyarrow as pa
    import pyarrow.parquet as pq

    path = str(tmp_path / "t")
    write_local(path, batch([(f"k{i}", 1, "x", i) for i in range(50)]), OPTS)
    write_local(path, batch([("k1", 2, "x", 100), ("new", 1, "x", 0)]), OPTS)
    for name in os.listdir(os.path.join(path, "x")):
        if not name.endswith(".parquet"):
            continue
        footer = pq.read_metadata(os.path.join(path, "x", name)).metadata
        assert b"org.apache.hudi.bloomfilter" in footer and b"hoodie_min_record_key" in footer
        stored = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(footer[b"ARROW:schema"])))
        assert not stored.metadata and stored.names[:5] == [
            "_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
            "_hoodie_file_name"]
        assert len(footer[b"ARROW:schema"]) < 4096
    assert read(path) == sorted([(f"k{i}", i) for i in range(50) if i != 1] + [("k1", 100), ("new", 0)])


def test_dictionary_encoding_only_for_columns_with_repeating_values(tmp_path):
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hoodie_datasource.write.base_file_writer import write_base_file

    n = 10_000
    rng = np.random.default_rng(1)
    table = pa.table({"_hoodie_record_key": [f"k{i}" for i in range(n)], "lat": rng.uniform(-90, 90, n),
                      "fare": np.round(rng.uniform(3, 90, n), 1), "city": [f"c{i % 7}" for i in range(n)],
                      "paid": rng.integers(0, 2, n).astype(bool), "note": pa.nulls(n, pa.string())})
    path = str(tmp_path / "p" / "f.parquet")
    assert write_base_file(open_storage(str(tmp_path)), "p/f.parquet", table, {"k": "v"}, "snappy") == os.path.getsize(path)
    row_group = pq.read_metadata(path).row_group(0)
    dictionary = {row_group.column(i).path_in_schema: row_group.column(i).has_dictionary_page
                  for i in range(row_group.num_columns)}
    assert dictionary == {"_hoodie_record_key": False, "lat": False, "fare": True, "city": True, "paid": False,
                          "note": True}
    assert pq.read_table(path).equals(table)


def test_the_dictionary_choice_of_a_full_sample_is_remembered_for_the_schema(tmp_path):
    """A write task encodes many files of one schema: the columns to dictionary encode are sampled once, from
    the first file with a full sample (a smaller file decides for itself only)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hoodie_datasource.write import base_file_writer
    from hoodie_datasource.write.base_file_writer import UNIQUE_SAMPLE, write_base_file

    storage = open_storage(str(tmp_path))
    schema = pa.schema([("_hoodie_record_key", pa.string()), ("remembered_city", pa.string())])
    base_file_writer._DICTIONARY_COLUMNS.clear()

    def encoded(name: str, cities: list[str]) -> bool:
        keys = [f"k{i}" for i in range(len(cities))]
        write_base_file(storage, f"p/{name}.parquet", pa.table([keys, cities], schema=schema), {}, "snappy")
        return pq.read_metadata(str(tmp_path / "p" / f"{name}.parquet")).row_group(0).column(1).has_dictionary_page

    n = UNIQUE_SAMPLE * 2
    assert not encoded("small_distinct", [f"c{i}" for i in range(100)])  # decides, not remembered
    assert encoded("repeating", [f"c{i % 7}" for i in range(n)])  # remembered: dictionary
    assert encoded("distinct", [f"c{i}" for i in range(n)])  # not sampled again
    base_file_writer._DICTIONARY_COLUMNS.clear()
    assert not encoded("distinct_again", [f"c{i}" for i in range(n)])


def test_a_merge_writes_its_commits_rows_in_row_groups_of_their_own(tmp_path):
    """Rows a COW merge writes come after the carried-over ones, in their own row groups, so an
    incremental query of that commit skips the rest of the file by its commit time statistics."""
    path = str(tmp_path / "t")
    t1 = write_local(path, batch([(f"k{i:03}", 1, "x", i) for i in range(100)]), OPTS)
    t2 = write_local(path, batch([("k050", 2, "x", -50), ("k007", 2, "x", -7), ("new", 2, "x", 1)]), OPTS)
    t3 = write_local(path, batch([("k090", 3, "x", -90)]), OPTS)
    (slice_,) = plan_read(Table.load(path), ReadConfig()).slices
    file = pq.ParquetFile(os.path.join(path, slice_.base_relative_path))
    commit_time = file.schema_arrow.get_field_index("_hoodie_commit_time")
    stats = [file.metadata.row_group(g).column(commit_time).statistics for g in range(file.num_row_groups)]
    assert [(s.min, s.max, s.num_values) for s in stats] == [(t1, t2, 100), (t3, t3, 1)]
    rows = file.read(columns=["id", "_hoodie_commit_time"]).to_pylist()
    assert [r["id"] for r in rows[-4:]] == ["k007", "k050", "new", "k090"]  # t2's rows, then t3's
    fragment = list(ds.dataset(os.path.join(path, slice_.base_relative_path)).get_fragments())[0]
    assert len(list(fragment.split_by_row_group(pc.field("_hoodie_commit_time") > t2))) == 1
    assert read(path, query_type="incremental", begin_instant=t2) == [("k090", -90)]
    assert read(path, query_type="incremental", begin_instant=t1) == [("k007", -7), ("k050", -50), ("k090", -90),
                                                                      ("new", 1)]
    assert len(read(path)) == 101


def test_commit_metadata_records_where_the_time_went(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, batch([("a", 1, "x", 1)]), OPTS)
    t2 = write_local(path, batch([("a", 2, "x", 2), ("b", 2, "y", 3)]), OPTS)
    extra = HoodieTable(path).commit_metadata(t2)["extraMetadata"]
    stages = {k.removeprefix("hoodie.stage.").removesuffix(".ms"): int(v) for k, v in extra.items()
              if k.startswith("hoodie.stage.") and k.endswith(".ms")}
    assert set(stages) == {"tag", "profile", "write", "commit"}
    assert all(ms >= 0 for ms in stages.values())
    # and the index work of tagging: "a" is probed against the one file of x and found there, unchecked
    # (a single filter claims it); "b" has no file to be in
    counts = {k.removeprefix("hoodie.stage.index."): int(v) for k, v in extra.items()
              if k.startswith("hoodie.stage.index.")}
    assert counts == {"keys": 2, "files": 1, "pairs": 1, "candidates": 1, "candidate_files": 1, "bloom_probes": 1,
                      "bloom_positives": 1, "exact_checks": 0, "false_positives_checked": 0, "found": 1}


def test_a_merge_rewrites_the_per_file_meta_columns_and_keeps_commit_times(tmp_path):
    """The merge does not decode the partition path and file name of the stored rows (one value per
    file) and reads their commit times as a dictionary: the merged file still holds plain strings, the
    file group's partition path, its own name and each carried-over row's commit time."""
    import pyarrow as pa

    path = str(tmp_path / "t")
    t1 = write_local(path, batch([(f"k{i:03}", 1, "x", i) for i in range(100)]), OPTS)
    t2 = write_local(path, batch([(f"k{i:03}", 2, "x", -i) for i in range(0, 100, 3)]), OPTS)
    t3 = write_local(path, batch([("k001", 3, "x", -1), ("new", 3, "x", 7)]), OPTS)
    (slice_,) = plan_read(Table.load(path), ReadConfig()).slices
    assert slice_.base_relative_path.endswith(f"_{t3}.parquet")
    table = pq.read_table(os.path.join(path, slice_.base_relative_path))
    meta = ["_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_file_name"]
    assert all(table.schema.field(c).type == pa.string() for c in meta)
    assert set(table.column("_hoodie_partition_path").to_pylist()) == {"x"}
    assert set(table.column("_hoodie_file_name").to_pylist()) == {os.path.basename(slice_.base_relative_path)}
    times = dict(zip(table.column("id").to_pylist(), table.column("_hoodie_commit_time").to_pylist()))
    assert times == {**{f"k{i:03}": t2 if i % 3 == 0 else t1 for i in range(100)}, "k001": t3, "new": t3}
    assert read(path) == sorted([(f"k{i:03}", -i if i % 3 == 0 or i == 1 else i) for i in range(100)] + [("new", 7)])


def test_commit_time_statistics_of_a_merged_file_name_only_the_commits_it_holds(tmp_path):
    """The carried-over commit times are written from the dictionary they were read as, which still
    holds a commit whose rows have all been replaced: the row groups' statistics leave it out, and the
    stored Arrow schema is the one pyarrow writes for the string columns."""
    import base64

    path = str(tmp_path / "t")
    t1 = write_local(path, batch([(f"k{i:03}", 1, "x", i) for i in range(100)]), OPTS)
    write_local(path, batch([(f"k{i:03}", 2, "x", -i) for i in range(3)]), OPTS)
    t3 = write_local(path, batch([(f"k{i:03}", 3, "x", 10 * i) for i in range(3)]), OPTS)
    (slice_,) = plan_read(Table.load(path), ReadConfig()).slices
    file = pq.ParquetFile(os.path.join(path, slice_.base_relative_path))
    commit_time = file.schema_arrow.get_field_index("_hoodie_commit_time")
    stats = [file.metadata.row_group(g).column(commit_time).statistics for g in range(file.num_row_groups)]
    assert [(s.min, s.max, s.num_values) for s in stats] == [(t1, t1, 97), (t3, t3, 3)]
    stored = file.metadata.metadata[b"ARROW:schema"]
    assert stored == base64.b64encode(file.schema.to_arrow_schema().remove_metadata().serialize())
    assert read(path, query_type="incremental", begin_instant=t1) == [("k000", 0), ("k001", 10), ("k002", 20)]


def test_a_merge_that_only_updates_keeps_the_stored_footer_entries(tmp_path):
    """Keys neither added nor removed: the merged file carries the stored bloom filter and key range as
    they are; an insert or a delete makes them anew (the range of what the file holds)."""
    from hoodie_datasource.index.bloom_filter import read_bloom_filter

    def footer_of_latest():
        (slice_,) = plan_read(Table.load(path), ReadConfig()).slices
        rel = slice_.base_relative_path
        keys = pq.read_table(os.path.join(path, rel), columns=["_hoodie_record_key"]).column(0)
        assert read_bloom_filter(open_storage(path), rel).might_contain(keys).all()
        kv = pq.read_metadata(os.path.join(path, rel)).metadata
        return {k: v for k, v in kv.items() if k != b"ARROW:schema"}

    path = str(tmp_path / "t")
    write_local(path, batch([(f"k{i:03}", 1, "x", i) for i in range(1, 50)]), OPTS)
    created = footer_of_latest()
    write_local(path, batch([("k001", 2, "x", -1), ("k049", 2, "x", -49)]), OPTS)
    assert footer_of_latest() == created
    write_local(path, batch([("k000", 3, "x", 0)]), OPTS)
    inserted = footer_of_latest()
    assert inserted[b"hoodie_min_record_key"] == b"k000" and inserted[b"hoodie_max_record_key"] == b"k049"
    assert inserted[b"org.apache.hudi.bloomfilter"] != created[b"org.apache.hudi.bloomfilter"]
    write_local(path, batch([("k049", 4, "x", 0)]), {**OPTS, "operation": "delete"})
    assert footer_of_latest()[b"hoodie_max_record_key"] == b"k048"
    assert read(path) == sorted([("k000", 0), ("k001", -1)] + [(f"k{i:03}", i) for i in range(2, 49)])


def test_a_merge_carries_repeating_string_columns_over_as_they_are(tmp_path):
    """Data columns stored dictionary encoded are carried over from dictionaries (the stored row groups'
    ones unified, the incoming values added): the merged file reads back as strings, each row's own."""
    import pyarrow as pa

    path = str(tmp_path / "t")
    rows = [(f"k{i:03}", 1, "x", i) for i in range(60)]
    first = batch(rows).append_column("city", pa.array([f"c{i % 4}" for i in range(60)]))
    write_local(path, first, OPTS)
    second = batch([("k005", 2, "x", -5), ("new", 2, "x", 1)]).append_column("city", pa.array(["c9", "c0"]))
    write_local(path, second, OPTS)
    third = batch([("k007", 3, "x", -7)]).append_column("city", pa.array([None], pa.string()))
    write_local(path, third, OPTS)
    (slice_,) = plan_read(Table.load(path), ReadConfig()).slices
    table = pq.read_table(os.path.join(path, slice_.base_relative_path))
    assert table.schema.field("city").type == pa.string()
    cities = dict(zip(table.column("id").to_pylist(), table.column("city").to_pylist()))
    assert cities == {**{f"k{i:03}": f"c{i % 4}" for i in range(60)}, "k005": "c9", "new": "c0", "k007": None}


def test_merge_on_read_packs_inserts_into_its_smallest_small_file_only(tmp_path):
    """hoodie.merge.small.file.group.candidates.limit (default 1): a merge-on-read insert rewrites the
    partition's smallest base file, not every small one; 0 sends inserts to a new file group."""
    path = str(tmp_path / "t")
    mor = {**OPTS, "storage.type": "MERGE_ON_READ"}
    apart = {**mor, "hoodie.parquet.small.file.limit": "0"}
    write_local(path, batch([(f"k{i}", 1, "x", i) for i in range(100)]), apart)
    write_local(path, batch([(f"m{i}", 1, "x", i) for i in range(10)]), apart)

    def base_files() -> dict[str, list[int]]:
        found: dict[str, list[int]] = {}
        for name in sorted(os.listdir(os.path.join(path, "x"))):
            if name.endswith(".parquet"):
                found.setdefault(name.split("_")[0], []).append(pq.read_metadata(os.path.join(path, "x", name)).num_rows)
        return found

    before = base_files()
    smallest = min(before, key=lambda group: before[group][0])
    write_local(path, batch([("n0", 1, "x", 0)]), mor)
    after = base_files()
    assert after == {**before, smallest: [*before[smallest], 11]} or after == {**before, smallest: [11, *before[smallest]]}
    write_local(path, batch([("n1", 1, "x", 0)]), {**mor, "hoodie.merge.small.file.group.candidates.limit": "0"})
    last = base_files()
    assert len(last) == 3 and [1] in last.values()
    assert len(read(path)) == 112
    with pytest.raises(HoodieConfigError, match="hoodie.merge.small.file.group.candidates.limit"):
        write_local(path, batch([("n2", 1, "x", 0)]), {**mor, "hoodie.merge.small.file.group.candidates.limit": "-1"})
    assert len(read(path)) == 112
