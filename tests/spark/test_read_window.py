"""Reads past the cleaner's window through ``format("hoodie")``: after the issue's 14 upserts of 1,000
rows with default cleaning, time travel and incremental pulls to the cleaned commits fail naming the
earliest exact instant (they returned 0 rows), Hudi's full-table-scan fallback, and the user errors.
The table is written by the local engine (the same commits and cleans as a Spark write, in a fraction
of the time on a shared runner); every read goes through Spark."""

from __future__ import annotations

import pyarrow as pa
import pytest
from chispa import assert_df_equality

from hoodie_datasource import HoodieTable
from hoodie_datasource.client.local_engine import write_local

OPTS = {"table.name": "trips", "recordkey.field": "uuid", "partitionpath.field": "city", "precombine.field": "ts"}
ROWS, SHIFT, WRITES = 1000, 500, 14
FALLBACK = "hoodie.datasource.read.incr.fallback.fulltablescan.enable"


def upsert(i):
    """The i-th upsert: keys i*500 .. i*500+999 (half of them updates), fare i."""
    keys = range(i * SHIFT, i * SHIFT + ROWS)
    return pa.table({"uuid": [f"k{k:05d}" for k in keys], "ts": [i] * ROWS,
                     "city": ["sf" if k % 2 == 0 else "nyc" for k in keys], "fare": [float(i)] * ROWS})


def expected(spark, upto, since=-1):
    """The table after upserts 0..upto, keeping keys whose last write is after upsert ``since``."""
    last = {}
    for i in range(upto + 1):
        last.update({k: i for k in range(i * SHIFT, i * SHIFT + ROWS)})
    rows = [(f"k{k:05d}", float(i)) for k, i in last.items() if i > since]
    return spark.createDataFrame(rows, "uuid string, fare double").orderBy("uuid")


def read(spark, path, **options):
    reader = spark.read.format("hoodie")
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load(path).select("uuid", "fare").orderBy("uuid")


@pytest.fixture(scope="module")
def cleaned(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("window") / "trips")
    for i in range(WRITES):
        write_local(path, upsert(i), OPTS)
    assert any(i.action == "clean" for i in HoodieTable(path).instants())  # default cleaning ran
    return path, HoodieTable(path).completed_commits()


def test_time_travel_to_cleaned_commits_fails_naming_the_earliest_exact_instant(spark, cleaned):
    path, commits = cleaned
    for c in commits[:3]:
        with pytest.raises(Exception, match=f"as of {c} exactly.*read exactly is {commits[3]}.*commits.retained"):
            read(spark, path, **{"as.of.instant": c}).collect()
    assert_df_equality(read(spark, path, **{"as.of.instant": commits[3]}), expected(spark, 3))


def test_incremental_pulls_past_the_window_fail_or_fall_back(spark, cleaned):
    path, commits = cleaned
    pull = {"query": "incremental", "begin.instant": "000"}
    for c in commits[:3]:
        with pytest.raises(Exception, match=f"incremental read .*{c}\\] exactly.*{FALLBACK}"):
            read(spark, path, **pull, **{"end.instant": c}).collect()
    # Hudi's fallback: the current snapshot's rows committed in (000, c3]: keys not rewritten since
    fallback = read(spark, path, **pull, **{"end.instant": commits[2], FALLBACK: "true"})
    assert_df_equality(fallback, expected(spark, WRITES - 1).filter("fare <= 2"))
    assert fallback.count() == 1500
    # within the window nothing changes, with or without the option
    since = {"query": "incremental", "begin.instant": commits[4], "end.instant": commits[6]}
    assert_df_equality(read(spark, path, **since), expected(spark, 6, since=4))
    assert_df_equality(read(spark, path, **since, **{FALLBACK: "true"}), expected(spark, 6, since=4))


def test_read_option_errors_name_the_values(spark, cleaned):
    path, commits = cleaned
    with pytest.raises(Exception, match=f"'begin.instant'.*{commits[5]} is later than.*'end.instant'.*{commits[4]}"):
        read(spark, path, query="incremental", **{"begin.instant": commits[5], "end.instant": commits[4]}).collect()
    with pytest.raises(Exception, match="yyyy-MM-dd HH:mm:ss.SSS.*got '2026-13-45'"):
        read(spark, path, **{"as.of.instant": "2026-13-45"}).collect()
    assert read(spark, path, **{"as.of.instant": "2000-01-01"}).count() == 0  # before the first commit: empty
