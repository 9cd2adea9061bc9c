"""Versions across table changes: a rolled-back write takes its version away and its records with it, even where
the server had merged a slice with them; timestamps; the streaming query (startingVersion) replays every version."""

from __future__ import annotations

import json

import pyarrow as pa

from hoodie_datasource.hoodie_table import HoodieTable
from tests.sharing.conftest import config_of, file_urls, new_table, read_served, rows, write_versions

QUERY = "/shares/share/schemas/default/tables/trips/query"


def _served(server) -> tuple[int, pa.Table]:
    response = server.post(QUERY, json={})
    return int(response.headers["Delta-Table-Version"]), read_served(file_urls(response), ["id", "note"])


def test_rolled_back_write_leaves_no_record_in_merged_slices(tmp_path, serve):
    path = str(tmp_path / "trips")
    table, opts = new_table(path, "MERGE_ON_READ", list(range(10)))
    server = serve(config_of({"trips": path}))
    bad = table.write(rows([1], 1, "bad"), **opts)  # a log file on the group of partition sf
    version, served = _served(server)
    assert version == 1 and "bad1@1" in served.column("note").to_pylist()
    table.rollback(bad)
    table.write(rows([20], 2, "new"), **opts)  # touches only partition nyc
    version, served = _served(server)
    expected = HoodieTable(path).scan().select(["id", "note"]).sort_by("id")
    assert version == 1 and served.equals(expected)
    assert "bad1@1" not in served.column("note").to_pylist() and "new20@2" in served.column("note").to_pylist()


def test_timestamps_map_to_the_latest_version_at_or_before_them():
    from hoodie_datasource.errors import SharingRequestError
    from hoodie_datasource.sharing.versions import TableVersions, parse_timestamp

    instants = ("20260101000000000", "20260101000001500", "20260102000000000")
    versions = TableVersions(instants, tuple(parse_timestamp(t) for t in (
        "2026-01-01T00:00:00Z", "2026-01-01T00:00:01.500Z", "2026-01-02T00:00:00Z")))
    assert versions.at_or_before("2026-01-01T00:00:01.499Z") == 0
    assert versions.at_or_before("2026-01-01T00:00:01.500Z") == 1
    assert versions.at_or_before("2026-01-01T01:00:01+01:00") == 0  # offsets honoured
    assert versions.at_or_before("2027-01-01T00:00:00Z") == 2
    assert versions.at_or_after("2026-01-01T00:00:00.001Z") == 1
    for bad in ("2025-12-31T23:59:59Z", "not a time"):
        try:
            versions.at_or_before(bad)
        except SharingRequestError:
            continue
        raise AssertionError(bad)
    assert "versions are 0 to 2" in _message(lambda: versions.instant(3))


def _message(call) -> str:
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the message is what is checked
        return str(exc)
    raise AssertionError("no error")


def test_starting_version_query_replays_each_version_from_adds_and_removes(tmp_path, serve):
    path = str(tmp_path / "trips")
    instants = write_versions(path, "MERGE_ON_READ", True, 6)
    server = serve(config_of({"trips": path}))
    response = server.post(QUERY, json={"startingVersion": 2, "endingVersion": 5})
    assert response.status_code == 200 and response.headers["Delta-Table-Version"] == "2"
    actions = [json.loads(line) for line in response.text.splitlines()[2:]]
    assert {next(iter(a)) for a in actions} == {"add", "remove"}
    start = server.post(QUERY, json={"version": 1})
    files = {json.loads(line)["file"]["id"]: json.loads(line)["file"]["url"] for line in start.text.splitlines()[2:]}
    for version in range(2, 6):
        for action in (a for a in actions if next(iter(a.values()))["version"] == version):
            kind, body = next(iter(action.items()))
            if kind == "add":
                files[body["id"]] = body["url"]
            else:
                del files[body["id"]]
        got = read_served(list(files.values()), ["id", "note"])
        expected = HoodieTable(path).scan(**{"as.of.instant": instants[version]}).select(["id", "note"]).sort_by("id")
        assert got.equals(expected), version


def test_starting_version_query_leaves_out_a_compaction(tmp_path, serve):
    path = str(tmp_path / "trips")
    table, opts = new_table(path, "MERGE_ON_READ", list(range(10)))
    table.write(rows([1, 2], 1, "u"), **opts)
    compacted = table.compact(**{"hoodie.compact.inline.max.delta.commits": "1"})
    assert compacted
    table.write(rows([3], 3, "u"), **opts)
    versions = table.completed_commits()
    compaction = versions.index(compacted[-1])
    server = serve(config_of({"trips": path}))
    response = server.post(QUERY, json={"startingVersion": 1})
    actions = [next(iter(json.loads(line).values())) for line in response.text.splitlines()[2:]]
    assert {a["version"] for a in actions} == set(range(1, len(versions))) - {compaction}
    # the compaction is still a version: its snapshot reads as the table then
    assert read_served(file_urls(server.post(QUERY, json={"version": compaction})), ["id", "note"]).equals(
        HoodieTable(path).scan(**{"as.of.instant": compacted[-1]}).select(["id", "note"]).sort_by("id"))
