"""A parquet file holding a NaN in a double column: Java Hudi (0.15.0 and 1.1.1) records its range in the metadata
table's ``column_stats`` as [+0.0, +0.0], and its own data skipping then loses the file's rows; ours keeps the file.

Hudi reads the range from the file's footer with parquet-mr (``ParquetUtils.readColumnStatsFromMetadata``:
``Statistics.genericGetMin()`` / ``genericGetMax()``), whose ``DoubleStatistics.Builder`` replaces a NaN bound with
[0.0, 0.0] and marks the statistics as holding no value, which Hudi does not look at."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hoodie_datasource.metadata.reader import MetadataTableReader
from hoodie_datasource.read.data_skipping import Comparison, slices_to_read
from hoodie_datasource.table.table import Table

pytestmark = pytest.mark.hudi_oracle


def scores(ids: list[str], values: list[float]) -> pa.Table:
    return pa.table({"id": ids, "ts": pa.array([1] * len(ids), pa.int64()), "score": pa.array(values, pa.float64())})


def test_a_file_holding_nan_is_read_for_a_value_in_it(hudi, tmp_path):
    path = str(tmp_path / "t")
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.operation": "insert",
               "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
               "hoodie.metadata.enable": "true", "hoodie.metadata.index.column.stats.enable": "true",
               "hoodie.parquet.small.file.limit": "0"}
    if hudi.version != "0.15.0":
        options["hoodie.write.table.version"] = "6"
    hudi.write(path, scores(["n0", "n1", "n2"], [float("nan"), 31.0, 32.0]), options, mode="overwrite")
    hudi.write(path, scores(["z0", "z1"], [1.0, 2.0]), options)

    def java(skipping: str) -> list[str]:
        view = f"nan_{skipping}_{abs(hash(path))}"
        hudi.sql(f"CREATE OR REPLACE TEMPORARY VIEW {view} USING hudi OPTIONS (path '{path}', "
                 f"`hoodie.enable.data.skipping` '{skipping}', `hoodie.metadata.enable` 'true')")
        return hudi.sql(f"SELECT id FROM {view} WHERE score = 32.0", result=True).column("id").to_pylist()

    assert java("false") == ["n2"]
    assert java("true") == []  # Hudi's bug: the row is lost

    table = Table.load(path, listing=MetadataTableReader.listing_of)
    ranges = {r["file_name"]: (r["min_value"], r["max_value"], r["value_count"])
              for r in table.file_listing.column_stats(["score"]).to_pylist()}
    with_nan = next(name for name, (_, _, count) in ranges.items() if count == 3)
    assert ranges[with_nan][:2] == ({"value": 0.0}, {"value": 0.0})
    kept = slices_to_read(table.fs_view.latest_file_slices(), Comparison("score", "=", 32.0), table.file_listing,
                          table.schema)
    assert [s.base_file.name for s in kept] == [with_nan]
