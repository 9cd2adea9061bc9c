"""Tables Apache Hudi wrote (the shared v6 fixtures: copy-on-write with a complex key generator and hive-style
partitions, merge-on-read with log files, one with a rollback) read through the server by the official client at
every version: the rows equal this library's read as of that version, and hudi-rs's, in every column type (nested
structs, arrays, maps, decimals, dates, timestamps, binary)."""

from __future__ import annotations

import datetime as dt
import decimal
import json

import pyarrow as pa
import pytest

from hoodie_datasource.hoodie_table import HoodieTable
from hoodie_datasource.table.meta_columns import META_COLUMNS
from tests.conftest import require_module, unzip_table
from tests.hudi_tables import hudi_rs
from tests.sharing.conftest import config_of

ZIPS = ["sample_table/cow/v6_complexkeygen_hivestyle.zip", "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle.zip",
        "sample_table/mor/parquet/v6_nonpartitioned_rollback.zip"]


def _plain(value):
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, (dt.date, decimal.Decimal)):
        return value.isoformat() if isinstance(value, dt.date) else str(value)
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def _canonical(rows: list[dict], maps: set[str]) -> list[str]:
    """Rows as sorted JSON texts; a map's pairs (a list of pairs from pandas, a dict from Arrow) as a dict."""
    out = []
    for row in rows:
        row = dict(row)
        for name in maps:
            if isinstance(row.get(name), list):
                row[name] = dict(row[name])
        out.append(json.dumps(json.loads(json.dumps(row, default=_plain)), sort_keys=True))
    return sorted(out)


def _arrow_rows(table: pa.Table) -> list[dict]:
    return table.to_pylist(maps_as_pydicts="strict")


@pytest.mark.usefixtures("shared_tables")
@pytest.mark.parametrize("zip_rel", ZIPS, ids=lambda z: z.rsplit("/", 1)[1].removesuffix(".zip"))
def test_client_reads_hudi_written_tables_at_every_version(tmp_path, serve, client, zip_rel):
    path = str(unzip_table(zip_rel, tmp_path))
    server = serve(config_of({"t": path}))
    url = f"{server.profile(tmp_path)}#share.default.t"
    instants = HoodieTable(path).completed_commits()
    assert len(instants) >= 2
    for version, instant in enumerate(instants):
        ours = HoodieTable(path).scan(**{"as.of.instant": instant})
        data = [n for n in ours.column_names if n not in META_COLUMNS]
        maps = {n for n in data if pa.types.is_map(ours.schema.field(n).type)}
        got = client("load_as_pandas", url=url, version=version, as_json=True)
        assert got["columns"] == data
        expected = _canonical(_arrow_rows(ours.select(data)), maps)
        assert _canonical(got["rows"], maps) == expected, version
        as_of = require_module("hudi").HudiReadOptions().with_as_of_timestamp(instant)
        assert _canonical(_arrow_rows(hudi_rs(path, as_of).select(data)), maps) == expected, version
