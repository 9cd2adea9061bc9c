"""register() makes the Hudi save modes, reads and the streaming sink work over Spark Connect, not only classic."""

from __future__ import annotations

import pytest

pytest.importorskip("grpc", reason="Spark Connect client dependencies (pyspark[connect]) are not installed")


def test_write_modes_and_reads_over_spark_connect(over_spark_connect):
    result, _ = over_spark_connect("roundtrip")
    assert result["session"].startswith("pyspark.sql.connect")
    assert result["snapshot"] == [["a", 5.0]]
    assert result["incremental"] == ["a"]
    assert result["filtered"] == ["a"]
    assert result["record_index_ready"] == [True, True]
    assert result["record_index"] == [["a", 5.0], ["b", 2.0], ["c", 3.0]]


def test_stream_into_a_table_over_spark_connect(over_spark_connect):
    result, _ = over_spark_connect("streaming")
    assert result["session"].startswith("pyspark.sql.connect")
    assert result["error"] is None
    assert result["batches"] == ["0", "1"]  # one deltacommit per micro-batch, each with its checkpoint
    assert result["rows"] == [["a", 2, 5.0], ["b", 1, 2.0]]
