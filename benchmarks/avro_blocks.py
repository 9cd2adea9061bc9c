"""Encode and decode time of one Avro data log block (a 100k-record MOR update), the figure the unit
suite used to assert (``< 5 s``) and now only checks for correctness (tests/unit/test_log_format.py):
timings belong here, where a busy machine cannot fail a build.

    python benchmarks/avro_blocks.py --records 100000 --runs 5
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time

import pyarrow as pa

from hoodie_datasource.log.data_block import decode_data_block, encode_avro_data_block
from hoodie_datasource.log.log_format import read_log_bytes
from hoodie_datasource.schema.avro_schema import arrow_to_avro_schema, with_meta_fields

logger = logging.getLogger(__name__)
INSTANT = "20250101000000000"


def records(n: int) -> tuple[pa.Table, dict]:
    """``n`` records of the trips-like schema the unit test uses, with their Avro schema."""
    data = pa.schema([("id", pa.int64()), ("name", pa.string()), ("fare", pa.float64()), ("flag", pa.bool_()),
                      ("day", pa.date32()), ("ts", pa.timestamp("us", "UTC")), ("amount", pa.decimal128(12, 2))])
    schema = with_meta_fields(arrow_to_avro_schema(data, "t_record", "hoodie.t"))
    table = pa.table({
        "_hoodie_commit_time": pa.array([INSTANT] * n), "_hoodie_commit_seqno": [f"{INSTANT}_0_{i}" for i in range(n)],
        "_hoodie_record_key": [f"key-{i:08d}" for i in range(n)], "_hoodie_partition_path": ["city=sf"] * n,
        "_hoodie_file_name": ["f1-0"] * n, "id": pa.array(range(n), pa.int64()),
        "name": [f"rider-{i % 977}" for i in range(n)], "fare": [i * 0.25 for i in range(n)],
        "flag": [i % 3 == 0 for i in range(n)], "day": pa.array(range(n), pa.int32()).cast(pa.date32()),
        "ts": pa.array(range(0, n * 1_000_003, 1_000_003), pa.timestamp("us", "UTC")),
        "amount": pa.array(range(n), pa.int32()).cast(pa.decimal128(12, 2)),
    })
    return table, schema


def measure(n: int, runs: int) -> dict[str, float]:
    """Median seconds to encode and to decode one block of ``n`` records."""
    table, schema = records(n)
    encode, decode = [], []
    for _ in range(runs):
        started = time.perf_counter()
        raw = encode_avro_data_block(table, INSTANT, schema)
        encode.append(time.perf_counter() - started)
        [block] = read_log_bytes(raw).blocks
        started = time.perf_counter()
        decode_data_block(block)
        decode.append(time.perf_counter() - started)
    return {"encode": statistics.median(encode), "decode": statistics.median(decode)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    result = measure(args.records, args.runs)
    logger.info("%d Avro records, median of %d: encode %.3f s, decode %.3f s", args.records, args.runs,
                result["encode"], result["decode"])


if __name__ == "__main__":
    main()
