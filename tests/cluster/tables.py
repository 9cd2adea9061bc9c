"""The tables the cluster tests write and how: (id, ts, p, v) records over three partitions, the writes,
the expected rows computed beside them, and the checks that a commit is exact (every key once, no
orphan file, write stats listing exactly the files on disk)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from pyspark import TaskContext

from hoodie_datasource import HoodieTable
from hoodie_datasource.table.file_names import PARTITION_METAFILE
from tests.conftest import table_listing

PARTITIONS = 3
FAULTY = "p=1"  # the partition whose write tasks the fault tests slow down or fail


def options(name: str, table_type: str = "COPY_ON_WRITE") -> dict[str, str]:
    return {"table.name": name, "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
            "storage.type": table_type}


def records(ids: range, ts: int, bump: float = 0.0) -> pa.Table:
    """Rows ``ids`` at ordering value ``ts``: ``v = id + bump``, partition ``p=<id % 3>``."""
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()), "ts": pa.array([ts] * len(ids), pa.int64()),
                     "p": [f"p={i % PARTITIONS}" for i in ids], "v": [i + bump for i in ids]})


def apply(model: dict[int, tuple], batch: pa.Table, delete: bool = False) -> None:
    """What the write of ``batch`` does to the expected rows (id -> (id, ts, p, v))."""
    for row in batch.to_pylist():
        if delete:
            model.pop(row["id"], None)
        elif row["id"] not in model or model[row["id"]][1] <= row["ts"]:
            model[row["id"]] = (row["id"], row["ts"], row["p"], row["v"])


def rows_of(table: pa.Table) -> list[tuple]:
    return sorted(zip(*(table.column(c).to_pylist() for c in ("id", "ts", "p", "v"))))


def spark_rows(spark, path: str, **read_options: str) -> list[tuple]:
    reader = spark.read.format("hoodie")
    for key, value in read_options.items():
        reader = reader.option(key, value)
    return sorted(tuple(r) for r in reader.load(path).select("id", "ts", "p", "v").collect())


def committed_files(path: str) -> dict[str, set[str]]:
    """Per completed instant, the data files its write stats list (relative to the table)."""
    table = HoodieTable(path)
    found = {}
    for instant in table.completed_commits():
        stats = table.commit_metadata(instant).get("partitionToWriteStats") or {}
        found[instant] = {s["path"] for group in stats.values() for s in group if s.get("path")}
    return found


def data_files(path: str) -> set[str]:
    return {p for p in table_listing(path) if not p.startswith(".hoodie/") and not p.endswith(PARTITION_METAFILE)}


def assert_exact(path: str, rows: list[tuple], expected: dict[int, tuple]) -> None:
    """The snapshot holds every expected row once; every data file on disk is listed by a commit's
    write stats and every listed file exists; no marker is left."""
    ids = [r[0] for r in rows]
    assert len(ids) == len(set(ids)), f"{len(ids) - len(set(ids))} keys appear more than once"
    assert rows == sorted(expected.values())
    listed = set().union(*committed_files(path).values())
    on_disk = data_files(path)
    assert sorted(on_disk - listed) == [], "orphan data files: written, but in no commit's write stats"
    assert sorted(listed - on_disk) == [], "files in write stats that are not on disk"
    assert not any(p.startswith(".hoodie/.temp/") for p in table_listing(path)), "markers left behind"
    assert Path(path, ".hoodie").is_dir()


def write(spark, path: str, batch: pa.Table, opts: dict[str, str], operation: str) -> str:
    spark.createDataFrame(batch).write.format("hoodie").options(**opts).mode(operation).save(path)
    return HoodieTable(path).latest_commit()


def loaded(spark, path: str, table_type: str, model: dict) -> None:
    """The table's first commit: 3000 rows by bulk_insert."""
    batch = records(range(3000), 1)
    write(spark, path, batch, options("t", table_type), "bulk_insert")
    apply(model, batch)


def upsert_batch() -> pa.Table:
    """1000 updates (a third of them in each partition) and 500 inserts."""
    return pa.concat_tables([records(range(1000), 2, bump=0.5), records(range(3000, 3500), 2)])


def split_by_attempt(log: list[dict], action: str) -> tuple[set[str], set[str]]:
    """The files written by the task attempts that hit ``action`` (all their files, in any partition),
    and the files of every other attempt."""
    hit = {e["tid"] for e in log if e["action"] == action}  # a stage run again numbers attempts from 0 again
    assert hit, f"no task attempt hit {action!r}: the fault was not injected"
    lost = {e["path"] for e in log if e["tid"] in hit}
    return lost, {e["path"] for e in log} - lost


def latest_stage(spark) -> int:
    """The id of a stage run now: every stage of a later write has a higher one (Spark numbers stages
    across the application), every attempt still running for an earlier write a lower one; for
    ``Cluster.arm(after_stage=...)``."""
    return spark.sparkContext.parallelize([0], 1).map(lambda _: TaskContext.get().stageId()).first()
