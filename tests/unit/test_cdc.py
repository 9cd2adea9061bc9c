"""Change data capture (no JVM): CDC logs written as Hudi writes them, and CDC queries answering the same
changes from CDC logs (every supplemental logging mode) and, on tables without them, from file slices.

The history, on COW and MOR (partition ``a`` holds keys 1, 2, 4, 5; ``b`` only key 3):
  c1 insert 1, 2, 3;  c2 upsert 1 (update) + 4 (insert into the small file);
  c3 upsert 2 (update) + 3 soft-deleted (``_hoodie_is_deleted``: ``b``'s only record);  c4 delete 4;
  c5 insert 5.
COW rewrites base files every time (CDC logs for c2, c3, c4, c5; c3 in ``b`` deletes every record: a CDC log
too, where Hudi writes none); MOR rewrites ``a``'s small file in c2 (a CDC log), appends logs in c3 and c4 (no
CDC log) and puts key 5 in a new file group.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import fastavro
import pyarrow as pa
import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig, resolve_read_config
from hoodie_datasource.config.table_config import load_table_config
from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.log.log_format import BlockType, read_log_blocks
from hoodie_datasource.read.cdc_reader import image_json
from hoodie_datasource.read.table_reader import read_table
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table.file_names import LOG_FILE
from hoodie_datasource.table.meta_columns import META_COLUMNS

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}
MODES = ("OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER")


def rows(items, deleted=()):
    """(id, ts, p, v) tuples; ids in ``deleted`` carry ``_hoodie_is_deleted = true``."""
    ids, ts, ps, vs = zip(*items)
    return pa.table({"id": list(ids), "ts": list(ts), "p": list(ps), "v": list(vs),
                     "_hoodie_is_deleted": [i in deleted for i in ids]})


def write_history(path: str, table_type: str, cdc: dict[str, str]) -> list[str]:
    opts = dict(OPTS, **{"storage.type": table_type}, **cdc)
    return [
        write_local(path, rows([(1, 1, "a", "v1"), (2, 1, "a", "v2"), (3, 1, "b", "v3")]), opts),
        write_local(path, rows([(1, 2, "a", "v1b"), (4, 2, "a", "v4")]), opts),
        write_local(path, rows([(2, 3, "a", "v2b"), (3, 3, "b", "v3")], deleted={3}), opts),
        write_local(path, rows([(4, 4, "a", "v4")]), dict(opts, operation="delete")),
        write_local(path, rows([(5, 5, "a", "v5")]), opts),
    ]


def image(i, ts, p, v):
    return {"id": i, "ts": ts, "p": p, "v": v, "_hoodie_is_deleted": False}


# (commit index, op, before, after)
EXPECTED = sorted([
    (0, "i", None, image(1, 1, "a", "v1")), (0, "i", None, image(2, 1, "a", "v2")),
    (0, "i", None, image(3, 1, "b", "v3")),
    (1, "u", image(1, 1, "a", "v1"), image(1, 2, "a", "v1b")), (1, "i", None, image(4, 2, "a", "v4")),
    (2, "u", image(2, 1, "a", "v2"), image(2, 3, "a", "v2b")), (2, "d", image(3, 1, "b", "v3"), None),
    (3, "d", image(4, 2, "a", "v4"), None),
    (4, "i", None, image(5, 5, "a", "v5")),
], key=repr)


def cdc_read(path: str, instants: list[str], **cfg) -> list[tuple]:
    cfg.setdefault("begin_instant", "0")
    out = read_table(path, ReadConfig(query_type="incremental", incremental_format="cdc", **cfg))
    assert out.schema.names == ["op", "ts_ms", "before", "after"]
    return sorted(((instants.index(r["ts_ms"]), r["op"], r["before"] and json.loads(r["before"]),
                    r["after"] and json.loads(r["after"])) for r in out.to_pylist()), key=repr)


def cdc_logs(path: str) -> list[Path]:
    return sorted(Path(path).glob("*/.*.cdc"))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("mode", MODES)
def test_cdc_query_returns_every_change_from_cdc_logs(tmp_path, table_type, mode):
    path = str(tmp_path / "t")
    instants = write_history(path, table_type, {"hoodie.table.cdc.enabled": "true",
                                                "hoodie.table.cdc.supplemental.logging.mode": mode.lower()})
    assert cdc_logs(path), "the merges wrote CDC logs"
    assert cdc_read(path, instants) == EXPECTED


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_table_without_cdc_logs_answers_the_same_by_inference(tmp_path, table_type):
    with_logs, without = str(tmp_path / "with"), str(tmp_path / "without")
    logged = write_history(with_logs, table_type, {"hoodie.table.cdc.enabled": "true"})
    plain = write_history(without, table_type, {})
    assert not cdc_logs(without)
    assert cdc_read(without, plain) == cdc_read(with_logs, logged) == EXPECTED
    # the JSON strings themselves agree, not only their parsed values
    strings = [sorted((r["op"], r["before"], r["after"]) for r in read_table(
        p, ReadConfig(query_type="incremental", begin_instant="0", incremental_format="cdc")).to_pylist())
        for p in (with_logs, without)]
    assert strings[0] == strings[1]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_cdc_query_covers_only_the_range(tmp_path, table_type):
    path = str(tmp_path / "t")
    instants = write_history(path, table_type, {"hoodie.table.cdc.enabled": "true"})
    got = cdc_read(path, instants, begin_instant=instants[1], end_instant=instants[3])
    assert got == [c for c in EXPECTED if c[0] in (2, 3)]
    assert cdc_read(path, instants, begin_instant=instants[4]) == []


def test_cdc_log_format_as_hudi_writes_it(tmp_path):
    """hoodie.properties, the CDC log's name, block type, header and Avro records, and the commit's cdcStats."""
    path = str(tmp_path / "t")
    instants = write_history(path, "COPY_ON_WRITE", {"hoodie.table.cdc.enabled": "true"})
    props = (Path(path) / ".hoodie" / "hoodie.properties").read_text()
    assert "hoodie.table.cdc.enabled=true" in props
    assert "hoodie.table.cdc.supplemental.logging.mode=DATA_BEFORE_AFTER" in props
    commit = json.loads((Path(path) / ".hoodie" / f"{instants[1]}.commit").read_text())
    stat = commit["partitionToWriteStats"]["a"][0]
    (cdc_path, size), = stat["cdcStats"].items()
    base_name = stat["path"].split("/")[1]
    file_id, _, instant = base_name[:-len(".parquet")].split("_")
    assert cdc_path == f"a/.{file_id}_{instants[1]}.log.1_1-0-1.cdc" and instant == instants[1]
    match = LOG_FILE.match(cdc_path.split("/")[1])
    assert match and match.group(9) == ".cdc"
    assert (Path(path) / cdc_path).stat().st_size == size
    blocks = list(read_log_blocks(open_storage(path), cdc_path))
    assert [b.block_type for b in blocks] == [BlockType.CDC_DATA]
    assert blocks[0].instant_time == instants[1]
    schema = json.loads(blocks[0].schema)
    assert (schema["name"], schema["namespace"]) == ("CDC", "hoodie.t")
    assert [f["name"] for f in schema["fields"]] == ["op", "ts_ms", "before", "after"]
    assert schema["fields"][3]["type"] == ["null", "hoodie.t.t_record"]  # named, not defined twice
    # an independent Avro reader decodes the records with the header's schema
    content, parsed = blocks[0].content, fastavro.parse_schema(schema)
    version, count = struct.unpack_from(">ii", content)
    records, pos = [], 8
    for _ in range(count):
        (length,) = struct.unpack_from(">i", content, pos)
        records.append(fastavro.schemaless_reader(__import__("io").BytesIO(content[pos + 4:pos + 4 + length]), parsed))
        pos += 4 + length
    assert version == 3 and pos == len(content)
    by_op = {r["op"]: r for r in records}
    assert by_op["u"]["before"]["v"] == "v1" and by_op["u"]["after"]["v"] == "v1b"
    assert by_op["i"]["before"] is None and by_op["i"]["after"]["id"] == 4
    assert {r["ts_ms"] for r in records} == {instants[1]}
    # c3 deleted b's only record (an upsert of a soft delete): a CDC log, which Hudi's reader needs there
    c3 = json.loads((Path(path) / ".hoodie" / f"{instants[2]}.commit").read_text())
    (b_stat,) = c3["partitionToWriteStats"]["b"]
    assert b_stat["numWrites"] == 0 and list(b_stat["cdcStats"]) == [
        f"b/.{b_stat['fileId']}_{instants[2]}.log.1_1-0-1.cdc"]


@pytest.mark.parametrize("mode,fields", [("OP_KEY_ONLY", ["op", "record_key"]),
                                         ("DATA_BEFORE", ["op", "record_key", "before"])])
def test_cdc_log_schema_per_mode(tmp_path, mode, fields):
    path = str(tmp_path / "t")
    write_history(path, "COPY_ON_WRITE", {"hoodie.table.cdc.enabled": "true",
                                          "hoodie.table.cdc.supplemental.logging.mode": mode})
    assert load_table_config(open_storage(path)).cdc_logging_mode == mode
    block = next(read_log_blocks(open_storage(path), str(cdc_logs(path)[0].relative_to(path))))
    schema = json.loads(block.schema)
    assert [f["name"] for f in schema["fields"]] == fields
    if mode == "OP_KEY_ONLY":  # HoodieCDCUtils.CDC_SCHEMA_OP_AND_RECORDKEY_STRING
        assert block.schema == ('{"type":"record","name":"Record","fields":[{"name":"op","type":["string","null"]},'
                                '{"name":"record_key","type":["string","null"]}]}')


def test_snapshot_and_incremental_reads_ignore_cdc_logs(tmp_path):
    path = str(tmp_path / "t")
    instants = write_history(path, "MERGE_ON_READ", {"hoodie.table.cdc.enabled": "true"})
    out = read_table(path)
    assert sorted(zip(out.column("id").to_pylist(), out.column("v").to_pylist())) == [
        (1, "v1b"), (2, "v2b"), (5, "v5")]
    incr = read_table(path, ReadConfig(query_type="incremental", begin_instant=instants[2]))
    assert sorted(incr.column("id").to_pylist()) == [5]


def test_hudi_rs_reads_the_snapshot_of_a_cdc_table(tmp_path):
    hudi = pytest.importorskip("hudi")
    for table_type in ("COPY_ON_WRITE", "MERGE_ON_READ"):
        path = str(tmp_path / table_type)
        write_history(path, table_type, {"hoodie.table.cdc.enabled": "true"})
        assert cdc_logs(path)
        batches = hudi.HudiTableBuilder.from_base_uri(path).build().read()
        table = pa.Table.from_batches(batches)
        assert sorted(zip(table.column("id").to_pylist(), table.column("v").to_pylist())) == [
            (1, "v1b"), (2, "v2b"), (5, "v5")], table_type


def test_cdc_options_are_validated():
    with pytest.raises(HoodieConfigError, match="latest_state, cdc"):
        resolve_read_config({"query": "incremental", "begin.instant": "0", "incremental.format": "changes"})
    cfg = resolve_read_config({"hoodie.datasource.query.type": "incremental", "begin.instant": "0",
                               "hoodie.datasource.query.incremental.format": "CDC"})
    assert cfg.is_cdc


def test_cdc_setting_of_a_table_cannot_change(tmp_path):
    path = str(tmp_path / "t")
    write_local(path, rows([(1, 1, "a", "v1")]), dict(OPTS, **{"hoodie.table.cdc.enabled": "true"}))
    with pytest.raises(HoodieConfigError, match="supplemental"):
        write_local(path, rows([(1, 2, "a", "v2")]),
                    dict(OPTS, **{"hoodie.table.cdc.supplemental.logging.mode": "op_key_only"}))
    with pytest.raises(HoodieConfigError, match="valid values"):
        write_local(str(tmp_path / "u"), rows([(1, 1, "a", "v1")]),
                    dict(OPTS, **{"hoodie.table.cdc.supplemental.logging.mode": "everything"}))


@pytest.mark.parametrize("cdc", [{"hoodie.table.cdc.enabled": "true"}, {}])
def test_insert_overwrite_deletes_the_replaced_records(tmp_path, cdc):
    """REPLACE_COMMIT: every record of a replaced file group is a delete; the new file group's are inserts."""
    path = str(tmp_path / "t")
    opts = dict(OPTS, **cdc)
    first = write_local(path, rows([(1, 1, "a", "v1"), (2, 1, "a", "v2"), (3, 1, "b", "v3")]), opts)
    second = write_local(path, rows([(7, 2, "a", "v7")]), dict(opts, operation="insert_overwrite"))
    assert cdc_read(path, [first, second], begin_instant=first) == sorted([
        (1, "d", image(1, 1, "a", "v1"), None), (1, "d", image(2, 1, "a", "v2"), None),
        (1, "i", None, image(7, 2, "a", "v7"))], key=repr)


def test_compaction_between_writes_changes_nothing(tmp_path):
    """A compaction is no data change (WriteOperationType.isDataChange): it adds no change, and the writes
    after it are matched against the compacted slice."""
    from hoodie_datasource import HoodieTable

    path = str(tmp_path / "t")
    opts = dict(OPTS, **{"storage.type": "MERGE_ON_READ", "hoodie.table.cdc.enabled": "true"})
    instants = [write_local(path, rows([(1, 1, "a", "v1"), (2, 1, "a", "v2")]), opts),
                write_local(path, rows([(1, 2, "a", "v1b")]), opts)]
    HoodieTable(path).compact()
    instants.append(write_local(path, rows([(2, 3, "a", "v2b")]), opts))
    assert cdc_read(path, instants) == sorted([
        (0, "i", None, image(1, 1, "a", "v1")), (0, "i", None, image(2, 1, "a", "v2")),
        (1, "u", image(1, 1, "a", "v1"), image(1, 2, "a", "v1b")),
        (2, "u", image(2, 1, "a", "v2"), image(2, 3, "a", "v2b"))], key=repr)


def test_clean_and_rollback_remove_cdc_logs_and_the_window_holds(tmp_path):
    """The cleaner deletes a cleaned slice's CDC log with it (Hudi's CleanPlanner); a CDC query that would
    need cleaned versions fails with ReadWindowError instead of answering wrongly; a rollback removes the
    rolled-back commit's CDC log."""
    from hoodie_datasource import HoodieTable
    from hoodie_datasource.errors import ReadWindowError

    path = str(tmp_path / "t")
    opts = dict(OPTS, **{"hoodie.table.cdc.enabled": "true", "hoodie.clean.automatic": "false"})
    instants = [write_local(path, rows([(1, t, "a", f"v{t}")]), opts) for t in range(1, 5)]
    assert [p.name.split("_")[1].split(".")[0] for p in cdc_logs(path)] == instants[1:]
    HoodieTable(path).clean(**{"hoodie.cleaner.commits.retained": "1"})
    assert [p.name.split("_")[1].split(".")[0] for p in cdc_logs(path)] == instants[2:]
    with pytest.raises(ReadWindowError, match="CDC query"):
        cdc_read(path, instants, begin_instant=instants[1])
    assert cdc_read(path, instants, begin_instant=instants[2]) == [
        (3, "u", image(1, 3, "a", "v3"), image(1, 4, "a", "v4"))]
    HoodieTable(path).rollback(instants[3])
    assert [p.name.split("_")[1].split(".")[0] for p in cdc_logs(path)] == instants[2:3]


def test_images_of_logical_types_agree_between_cdc_logs_and_inference(tmp_path):
    """Timestamps, dates, decimals, bytes, doubles and non-ASCII text: the CDC log's Avro images (COW) and the
    images read from base files and Avro log blocks (MOR, no CDC logs) give the same JSON."""
    import datetime as dt
    import decimal

    def data(ids, tag):
        n = len(ids)
        return pa.table({
            "id": ids, "ts": [1] * n, "p": ["a"] * n,
            "t": pa.array([dt.datetime(2026, 1, 1, 12, 0, i) for i in ids], pa.timestamp("us", tz="UTC")),
            "d": pa.array([dt.date(2026, 1, i) for i in ids], pa.date32()),
            "m": pa.array([decimal.Decimal(f"{i}.25") for i in ids], pa.decimal128(10, 2)),
            "b": pa.array([b"ab"] * n, pa.binary()), "f": [1e10] * n, "u": [f'é"{tag}'] * n})

    answers = []
    for table_type, cdc in (("COPY_ON_WRITE", {"hoodie.table.cdc.enabled": "true"}),
                            ("MERGE_ON_READ", {"log.block.format": "avro"})):
        path = str(tmp_path / table_type)
        opts = dict(OPTS, **{"storage.type": table_type}, **cdc)
        write_local(path, data([1, 2, 3], "v1"), opts)
        write_local(path, data([2, 4], "v2"), opts)
        write_local(path, data([3], "v3"), dict(opts, operation="delete"))
        out = read_table(path, ReadConfig(query_type="incremental", begin_instant="0", incremental_format="cdc"))
        answers.append(sorted((r["op"], r["before"], r["after"]) for r in out.to_pylist()))
    assert cdc_logs(str(tmp_path / "COPY_ON_WRITE")) and not cdc_logs(str(tmp_path / "MERGE_ON_READ"))
    assert answers[0] == answers[1]
    update = next(json.loads(after) for op, _, after in answers[0] if op == "u")
    assert update == {"id": 2, "ts": 1, "p": "a", "t": 1767268802000000, "d": 20455, "m": "2.25", "b": "YWI=",
                      "f": 1e10, "u": 'é"v2'}


def _real_table(tmp_path, zip_rel):
    from tests.conftest import unzip_table

    return str(unzip_table(zip_rel, tmp_path))


@pytest.mark.parametrize("zip_rel,counts", [
    ("quickstart_trips_table/mor/avro/v6_trips_8i1u.zip", {"i": 8, "u": 1}),
    ("quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip", {"i": 8, "u": 3, "d": 2}),
    ("sample_table/cow/v6_nonpartitioned.zip", {"i": 4, "u": 1}),
    ("sample_table/mor/parquet/v6_simplekeygen_nonhivestyle_overwritetable.zip", {"i": 5, "u": 1, "d": 4}),
])
def test_cdc_query_of_tables_apache_hudi_wrote(tmp_path, zip_rel, counts):
    """Tables Apache Hudi wrote without CDC logs answer by inference, and replaying the changes gives the
    snapshot: every key's last image is its row in the table, and deleted keys are gone."""
    path = _real_table(tmp_path, zip_rel)
    out = read_table(path, ReadConfig(query_type="incremental", begin_instant="0", incremental_format="cdc"))
    got: dict[str, int] = {}
    state: dict = {}
    snapshot = read_table(path)
    key_field = load_table_config(open_storage(path)).record_key_fields[0]
    for row in sorted(out.to_pylist(), key=lambda r: (r["ts_ms"], r["op"] != "d")):
        got[row["op"]] = got.get(row["op"], 0) + 1
        if row["op"] == "d":
            state.pop(json.loads(row["before"])[key_field])
        else:
            after = json.loads(row["after"])
            if row["op"] == "u":
                assert json.loads(row["before"])[key_field] == after[key_field]
            state[after[key_field]] = after
    assert got == counts
    data = snapshot.select([c for c in snapshot.column_names if c not in META_COLUMNS])
    expected = {str(row[key_field]): json.loads(image_json(row)) for row in data.to_pylist()}
    assert {str(k): v for k, v in state.items()} == expected


def test_cdc_query_of_a_table_without_meta_columns_is_refused(tmp_path):
    from hoodie_datasource.errors import UnsupportedTableError

    path = _real_table(tmp_path, "sample_table/cow/v6_simplekeygen_hivestyle_no_metafields.zip")
    with pytest.raises(UnsupportedTableError, match="populate.meta.fields=false"):
        read_table(path, ReadConfig(query_type="incremental", begin_instant="0", incremental_format="cdc"))


class Injected(RuntimeError):
    pass


def fail(point: str, **context) -> None:
    raise Injected(context["path"])


def test_a_failed_write_leaves_no_cdc_log(monkeypatch, tmp_path):
    """The CDC log has its marker before it exists: the rollback of a write failing after its files are
    written removes it with the base file."""
    from hoodie_datasource import fault_points
    from tests.conftest import assert_failed_write_left_nothing, table_listing

    path = str(tmp_path / "t")
    opts = dict(OPTS, **{"hoodie.table.cdc.enabled": "true"})
    write_local(path, rows([(1, 1, "a", "v1"), (2, 1, "a", "v2")]), opts)
    before = table_listing(path)
    monkeypatch.setenv(fault_points.ENV_VAR, f"{fault_points.AFTER_DATA_FILE_WRITTEN}={__name__}:fail")
    fault_points._hooks.cache_clear()
    try:
        with pytest.raises(Injected):
            write_local(path, rows([(1, 2, "a", "v1b")]), opts)
    finally:
        monkeypatch.delenv(fault_points.ENV_VAR)
        fault_points._hooks.cache_clear()
    assert_failed_write_left_nothing(path, before)
    assert not cdc_logs(path)


def test_log_write_stats_list_the_slice_log_files(tmp_path):
    """A log write's stat lists the slice's earlier log files and its own (``HoodieDeltaWriteStat.logFiles``):
    Hudi's CDC extractor rebuilds from them the slice a log file was written on."""
    path = str(tmp_path / "t")
    instants = write_history(path, "MERGE_ON_READ", {})

    def stat(instant):
        commit = json.loads((Path(path) / ".hoodie" / f"{instant}.deltacommit").read_text())
        return next(s for s in commit["partitionToWriteStats"]["a"] if ".log." in s["path"])

    first, second = stat(instants[2]), stat(instants[3])
    assert first["logFiles"] == [first["path"].split("/")[1]]
    assert second["logFiles"] == [first["path"].split("/")[1], second["path"].split("/")[1]]
    assert second["baseFile"] == first["baseFile"]
