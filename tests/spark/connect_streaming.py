"""An ``availableNow`` file stream into a hoodie table over Spark Connect (a scenario of ``connect_scenarios.py``,
for test_spark_connect.py; the sink runs in the server's foreachBatch worker): the commits' checkpoints and the
table's rows."""

from __future__ import annotations

import hoodie_datasource
from tests.spark.streams import batches, land, rows, run_to_end


def run(spark, work: str) -> dict:
    source, table, checkpoint = f"{work}/in", f"{work}/table", f"{work}/ckpt"
    hoodie_datasource.register(spark)
    land(source, "f0", rows(("a", 1, "sf", 1.0), ("b", 1, "nyc", 2.0)), 0)
    land(source, "f1", rows(("a", 2, "sf", 5.0)), 1)
    query = run_to_end(spark, source, table, checkpoint, **{"storage.type": "MERGE_ON_READ"})
    return {
        "session": type(spark).__module__,
        "error": str(query.exception()) if query.exception() else None,
        "batches": batches(table),
        "rows": sorted([r.uuid, r.ts, r.fare] for r in spark.read.format("hoodie").load(table).collect()),
    }
