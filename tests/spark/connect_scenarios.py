"""Every Spark Connect scenario of the tests, in one process with one in-process Connect server on local[2]
(Connect cannot share a process with the suite's classic session, and each server is a JVM start of its own).
Run by the ``over_spark_connect`` fixture (tests/spark/conftest.py):

    python -m tests.spark.connect_scenarios <work folder>

Each scenario writes in ``<work folder>/<scenario>``; one ``RESULT <scenario> <json>`` line each, a scenario that
raises giving its traceback as its result while the others still run. The save-modes scenario replaces the save
handler the others install, so it runs last."""

from __future__ import annotations

import json
import os
import sys
import traceback

os.environ["PYSPARK_PYTHON"] = sys.executable

from pyspark.sql import SparkSession  # noqa: E402

from tests.spark import connect_errors, connect_roundtrip, connect_save_modes, connect_streaming  # noqa: E402

SCENARIOS = {"errors": connect_errors, "roundtrip": connect_roundtrip, "streaming": connect_streaming,
             "save_modes": connect_save_modes}


def main(work: str) -> None:
    spark = (SparkSession.builder.remote("local[2]").config("spark.sql.shuffle.partitions", "4")
             .config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC")
             .config("spark.driver.extraJavaOptions", os.environ.get("HOODIE_TEST_JVM_OPTIONS", "")).getOrCreate())
    for name, scenario in SCENARIOS.items():
        try:
            result = scenario.run(spark, os.path.join(work, name))
        except Exception:  # noqa: BLE001 - reported as the scenario's result; the next scenarios still run
            result = {"traceback": traceback.format_exc()}
        print(f"RESULT {name} {json.dumps(result)}", flush=True)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
