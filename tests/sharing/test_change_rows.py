"""A CDC query's rows as change data feed rows (typed columns back from the JSON images, an update as its before
and after rows), and their partitions as the protocol writes partition values."""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa

from hoodie_datasource.read.cdc_reader import CDC_SCHEMA, image_json
from hoodie_datasource.sharing.change_rows import change_rows, partition_parts, rows_of_part

SCHEMA = pa.schema([("id", pa.int64()), ("at", pa.timestamp("us", "UTC")), ("day", pa.date32()),
                    ("amount", pa.decimal128(6, 2)), ("raw", pa.binary()), ("flag", pa.bool_())])


def test_images_come_back_typed_and_updates_give_two_rows():
    one = {"id": 1, "at": dt.datetime(2026, 1, 1, 0, 0, 0, 5, tzinfo=dt.timezone.utc), "day": dt.date(2026, 1, 2),
           "amount": decimal.Decimal("1.25"), "raw": b"\x00\xff", "flag": True}
    two = {**one, "id": 2, "flag": None, "day": None}
    cdc = pa.Table.from_pylist([
        {"op": "i", "ts_ms": "1", "before": None, "after": image_json(one)},
        {"op": "u", "ts_ms": "1", "before": image_json(one), "after": image_json({**one, "amount": decimal.Decimal("2")})},
        {"op": "d", "ts_ms": "1", "before": image_json(two), "after": None}], schema=CDC_SCHEMA)
    rows = change_rows(cdc, SCHEMA)
    assert rows.schema == SCHEMA.append(pa.field("_change_type", pa.string()))
    assert rows.column("_change_type").to_pylist() == ["insert", "update_preimage", "update_postimage", "delete"]
    assert rows.slice(0, 1).to_pylist()[0] == {**one, "_change_type": "insert"}
    assert rows.column("amount").to_pylist()[1:3] == [decimal.Decimal("1.25"), decimal.Decimal("2.00")]
    assert rows.slice(3, 1).to_pylist()[0] == {**two, "_change_type": "delete"}


def test_partitions_as_the_protocol_writes_their_values():
    rows = pa.table({"city": ["sf", None, "sf", "nyc"], "flag": [True, False, True, None],
                     "day": pa.array([dt.date(2026, 1, 1)] * 4, pa.date32()), "x": [1, 2, 3, 4]})
    parts = partition_parts(rows, ("city", "flag", "day"))
    assert parts == [{"city": "", "flag": "false", "day": "2026-01-01"},
                     {"city": "nyc", "flag": "", "day": "2026-01-01"},
                     {"city": "sf", "flag": "true", "day": "2026-01-01"}]
    assert rows_of_part(rows, parts[2]).column("x").to_pylist() == [1, 3]
    assert rows_of_part(rows, parts[0]).column("x").to_pylist() == [2]
