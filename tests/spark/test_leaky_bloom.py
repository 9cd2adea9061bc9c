"""Upserts through Spark (format("hoodie"), the distributed tagging DAG) with bloom filters that say
"maybe" for nearly every key: a filter's "maybe" must be confirmed against the keys a file stores, as
Apache Hudi's HoodieBloomIndex does (HoodieKeyLookupHandle checks the candidates against the file),
or a new key lands as an update of a file group that lacks it, in two file groups, or (global index)
in another partition. Checked on the rows, the commit's write stats and hudi-rs; the false positives
are shown to occur, from the filters in the base files' footers."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest
from pyspark.sql import Row

from hoodie_datasource import HoodieTable
from hoodie_datasource.index.bloom_filter import read_bloom_filter
from hoodie_datasource.storage.local import LocalStorage
from tests.conftest import require_module

# a 1-entry SIMPLE filter at fpp 0.9 has a handful of bits: nearly every key is a "maybe"
LEAKY = {"table.name": "t", "recordkey.field": "id", "precombine.field": "ts",
         "hoodie.bloom.index.filter.type": "SIMPLE", "hoodie.index.bloom.num_entries": "1",
         "hoodie.index.bloom.fpp": "0.9", "hoodie.parquet.small.file.limit": "0"}
CASES = [
    pytest.param("COPY_ON_WRITE", "BLOOM", False, id="cow-nonpartitioned-bloom"),
    pytest.param("MERGE_ON_READ", "BLOOM", False, id="mor-nonpartitioned-bloom"),
    pytest.param("COPY_ON_WRITE", "GLOBAL_BLOOM", True, id="cow-partitioned-global_bloom"),
    pytest.param("MERGE_ON_READ", "GLOBAL_BLOOM", True, id="mor-partitioned-global_bloom"),
]


def write(spark, path, rows, options, mode="upsert"):
    df = spark.createDataFrame([Row(id=k, ts=t, p=p, v=v) for k, t, p, v in rows], "id string, ts long, p string, v long")
    df.write.format("hoodie").options(**options).mode(mode).save(path)


def ours(spark, path) -> list[tuple]:
    return sorted(tuple(r) for r in spark.read.format("hoodie").load(path).select("id", "p", "v").collect())


def hudi_rs(path) -> list[tuple]:
    hudi = require_module("hudi")
    table = pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(path).build().read())
    return sorted(zip(table.column("id").to_pylist(), table.column("p").to_pylist(), table.column("v").to_pylist()))


def write_stats(path) -> tuple[int, int]:
    """(numUpdateWrites, numInserts) of the latest commit, summed over its files."""
    table = HoodieTable(path)
    stats = [s for ss in table.commit_metadata(table.latest_commit())["partitionToWriteStats"].values() for s in ss]
    return tuple(sum(int(s.get(k) or 0) for s in stats) for k in ("numUpdateWrites", "numInserts"))


def base_files(path) -> list[str]:
    return [os.path.join(d, n) for d, _, names in os.walk(path) if "/.hoodie" not in d + "/"
            for n in names if n.endswith(".parquet")]


@pytest.mark.parametrize(("table_type", "index", "partitioned"), CASES)
def test_leaky_bloom_filters_never_misplace_a_key(spark, table_path, table_type, index, partitioned):
    options = {**LEAKY, "hoodie.datasource.write.table.type": table_type, "hoodie.index.type": index}
    if partitioned:
        options["partitionpath.field"] = "p"
    part = "x" if partitioned else ""
    expected = {}
    for shift in range(3):  # three file groups whose key ranges all span k000..k29x
        rows = [(f"k{i:03d}", 1, part, i) for i in range(shift, 300, 3)]
        write(spark, table_path, rows, options, mode="insert")
        expected.update({k: (p, v) for k, _, p, v in rows})
    files = base_files(table_path)
    assert len(files) == 3

    updates = [(f"k{i:03d}", 2, part, 1000 + i) for i in range(0, 300, 7)]
    new_keys = [f"k{i:03d}n" for i in range(0, 290, 11)]  # inside every file's key range
    # a global index finds candidates in every partition: new keys of another partition must stay there
    new_part = "y" if partitioned else ""
    inserts = [(k, 2, new_part, 5000 + i) for i, k in enumerate(new_keys)]
    filters = [read_bloom_filter(LocalStorage(os.path.dirname(f)), os.path.basename(f)) for f in files]
    claims = [int(bloom.might_contain(pa.array(new_keys)).sum()) for bloom in filters]
    assert all(c >= len(new_keys) // 2 for c in claims), claims  # false positives, in every file's filter
    assert sum(claims) > len(new_keys)  # so new keys are claimed by several file groups at once

    write(spark, table_path, updates + inserts, options)
    expected.update({k: (p, v) for k, _, p, v in updates + inserts})
    want = sorted((k, p, v) for k, (p, v) in expected.items())
    assert ours(spark, table_path) == want
    assert hudi_rs(table_path) == want
    assert write_stats(table_path) == (len(updates), len(inserts))
