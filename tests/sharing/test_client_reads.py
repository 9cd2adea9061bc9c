"""The official client (``delta-sharing`` 1.4.2, its own environment) reads hoodie tables through the server as
it reads Delta tables: copy-on-write and merge-on-read, partitioned or not, at the latest version, at an older
``version`` and at a ``timestamp``, the change feed over 10 versions, and ``list_all_tables``; each equal to our
own read of the table and to hudi-rs's."""

from __future__ import annotations

import datetime as dt
import decimal
import json

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hoodie_datasource.hoodie_table import HoodieTable
from hoodie_datasource.sharing.versions import TableVersions
from hoodie_datasource.table.meta_columns import META_COLUMNS
from hoodie_datasource.table.table import Table
from tests.conftest import require_module
from tests.sharing.conftest import config_of, read_served, write_versions

DATA = ["id", "ts", "city", "fare", "note"]


def _sorted(table: pa.Table) -> pa.Table:
    return table.select(DATA).sort_by("id")


def _ours(path: str, instant: str) -> pa.Table:
    return _sorted(HoodieTable(path).scan(**{"as.of.instant": instant}))


def _hudi_rs(path: str, instant: str) -> pa.Table:
    hudi = require_module("hudi")
    table = hudi.HudiTableBuilder.from_base_uri(path).build()
    batches = table.read(hudi.HudiReadOptions().with_as_of_timestamp(instant))
    return _sorted(pa.Table.from_batches(batches).drop_columns([c for c in META_COLUMNS]))


def _client_frame(table: pa.Table) -> pa.Table:
    return _sorted(table.cast(pa.schema([table.schema.field(c) for c in table.column_names])))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("partitioned", [True, False], ids=["partitioned", "unpartitioned"])
def test_client_reads_latest_version_and_timestamp(tmp_path, serve, client, table_type, partitioned):
    path = str(tmp_path / "trips")
    instants = write_versions(path, table_type, partitioned, 6)
    server = serve(config_of({"trips": path}))
    url = f"{server.profile(tmp_path)}#share.default.trips"

    latest = client("load_as_pandas", url=url)
    assert latest.column_names == DATA
    expected = _ours(path, instants[-1])
    assert _client_frame(latest).equals(expected)
    assert expected.equals(_hudi_rs(path, instants[-1]))
    assert expected.num_rows == 10 + 4 - 1  # four new ids (versions 1, 2, 4, 5), id 3 deleted (version 3)

    older = client("load_as_pandas", url=url, version=2)
    assert _client_frame(older).equals(_ours(path, instants[2]))
    assert _client_frame(older).equals(_hudi_rs(path, instants[2]))
    assert not _client_frame(older).equals(expected)

    versions = TableVersions.of(Table.load(path))
    at = dt.datetime.fromtimestamp(versions.timestamp_ms(4) / 1000 + 0.0005, dt.timezone.utc)
    by_time = client("load_as_pandas", url=url, timestamp=at.isoformat().replace("+00:00", "Z"))
    assert _client_frame(by_time).equals(_ours(path, instants[4]))
    assert client("table_version", url=url) == len(instants) - 1
    merged = list((tmp_path / "trips" / ".hoodie" / ".aux" / "sharing" / "slices").glob("*.parquet"))
    assert bool(merged) == (table_type == "MERGE_ON_READ")  # slices with log files were served merged


@pytest.mark.parametrize("table_type, cdc_logs", [("COPY_ON_WRITE", False), ("MERGE_ON_READ", False),
                                                  ("COPY_ON_WRITE", True)], ids=["cow", "mor", "cow-cdc-logs"])
def test_client_reads_change_feed_over_ten_versions(tmp_path, serve, client, table_type, cdc_logs):
    """Tables with and without Hudi's CDC log files (``hoodie.table.cdc.enabled``) answer the same."""
    path = str(tmp_path / "trips")
    instants = write_versions(path, table_type, True, 10, **{"hoodie.table.cdc.enabled": str(cdc_logs).lower()})
    assert bool(list((tmp_path / "trips").rglob("*.cdc"))) == cdc_logs
    server = serve(config_of({"trips": path}))
    url = f"{server.profile(tmp_path)}#share.default.trips"
    changes = client("load_table_changes_as_pandas", url=url, starting_version=0, ending_version=9)
    cdf = server.get("/shares/share/schemas/default/tables/trips/changes", params={"startingVersion": 0})
    for action in (json.loads(line)["cdf"] for line in cdf.text.splitlines()[2:]):  # a file a partition
        cities = read_served([action["url"]], ["id", "city"]).column("city").to_pylist()
        assert set(cities) == {action["partitionValues"]["city"]}
    assert changes.column_names == [*DATA, "_change_type", "_commit_version", "_commit_timestamp"]
    versions = TableVersions.of(Table.load(path))
    assert sorted(set(changes.column("_commit_version").to_pylist())) == list(range(10))
    for version in range(10):
        mine = changes.filter(pc.equal(changes.column("_commit_version"), version))
        assert set(mine.column("_commit_timestamp").to_pylist()) == {versions.timestamp_ms(version)}
        before = {r["id"]: r for r in (_ours(path, instants[version - 1]).to_pylist() if version else [])}
        after = {r["id"]: r for r in _ours(path, instants[version]).to_pylist()}
        expected = sorted(
            [("insert", after[k]) for k in after.keys() - before.keys()]
            + [("delete", before[k]) for k in before.keys() - after.keys()]
            + [kind for k in after.keys() & before.keys() if after[k] != before[k]
               for kind in (("update_preimage", before[k]), ("update_postimage", after[k]))],
            key=lambda change: (change[1]["id"], change[0]))
        got = sorted(((r.pop("_change_type"), {c: r[c] for c in DATA}) for r in mine.to_pylist()),
                     key=lambda change: (change[1]["id"], change[0]))
        assert got == expected, f"version {version}"


def test_list_all_tables_pages_through_every_share(tmp_path, serve, client):
    paths = {f"t{n}": str(tmp_path / f"t{n}") for n in range(3)}
    for path in paths.values():
        write_versions(path, "COPY_ON_WRITE", False, 1)
    raw = config_of(paths)
    raw["shares"].append({"name": "other", "schemas": [{"name": "s2", "tables": [
        {"name": "x", "location": paths["t0"]}]}]})
    server = serve(raw)
    tables = client("list_all_tables", profile=server.profile(tmp_path))
    assert sorted(map(tuple, tables)) == [("other", "s2", "x"), ("share", "default", "t0"),
                                          ("share", "default", "t1"), ("share", "default", "t2")]
    page = server.get("/shares/share/all-tables", params={"maxResults": 2}).json()
    assert [t["name"] for t in page["items"]] == ["t0", "t1"]
    rest = server.get("/shares/share/all-tables", params={"maxResults": 2, "pageToken": page["nextPageToken"]}).json()
    assert [t["name"] for t in rest["items"]] == ["t2"] and "nextPageToken" not in rest


def test_client_reads_every_column_type(tmp_path, serve, client):
    path = str(tmp_path / "types")
    data = pa.table({
        "id": pa.array([1, 2, 3], pa.int64()), "ts": pa.array([1, 1, 1], pa.int64()),
        "at": pa.array([dt.datetime(2026, 1, 1, 12, 30, 1, 5), None, dt.datetime(1969, 12, 31)], pa.timestamp("us", "UTC")),
        "local": pa.array([dt.datetime(2026, 1, 1, 12), None, dt.datetime(2000, 2, 29)], pa.timestamp("us")),
        "day": pa.array([dt.date(2026, 1, 2), None, dt.date(1900, 1, 1)], pa.date32()),
        "amount": pa.array([decimal.Decimal("1.25"), None, decimal.Decimal("-99999999.99")], pa.decimal128(10, 2)),
        "flag": pa.array([True, None, False]), "raw": pa.array([b"ab", None, b"\x00"]),
        "f": pa.array([1.5, None, -0.0], pa.float32()), "small": pa.array([1, None, -3], pa.int32()),
        "tags": pa.array([["a", "b"], None, []], pa.list_(pa.string())),
        "point": pa.array([{"x": 1, "y": "b"}, None, {"x": None, "y": None}],
                          pa.struct([("x", pa.int32()), ("y", pa.string())]))})
    HoodieTable(path).write(data, **{"hoodie.table.name": "types", "hoodie.datasource.write.recordkey.field": "id",
                                     "hoodie.datasource.write.precombine.field": "ts"})
    server = serve(config_of({"types": path}))
    frame = client("load_as_pandas", url=f"{server.profile(tmp_path)}#share.default.types")
    ours = HoodieTable(path).scan().select(data.column_names).sort_by("id")
    got = frame.sort_by("id")
    assert got.column_names == data.column_names
    for name in data.column_names:
        mine, theirs = ours.column(name).to_pylist(), got.column(name).to_pylist()
        if name == "at":  # pandas gives the instant in UTC, naive
            mine = [v.replace(tzinfo=None) if v else v for v in mine]
            theirs = [v.replace(tzinfo=None) if v else v for v in theirs]
        assert theirs == mine, name
