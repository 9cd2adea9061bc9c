"""What Spark knows of a write's input and its cluster without running a job, for sizing the write's tasks."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession


@dataclass(frozen=True)
class PlanSize:
    rows: int | None  # known for a cached DataFrame once filled
    bytes: int | None  # Spark's estimate: known for local data, files and cached data, not for an RDD's rows


def plan_size(df: DataFrame) -> PlanSize:
    """The row count and bytes ``df``'s optimized plan states; None for what it does not know (and for
    everything over Spark Connect, which has no JVM plan here)."""
    try:
        stats = df._jdf.queryExecution().optimizedPlan().stats()
        unknown = int(df.sparkSession.conf.get("spark.sql.defaultSizeInBytes", str(2**63 - 1)))
    except Exception:  # noqa: BLE001 - no JVM plan here (Spark Connect)
        return PlanSize(None, None)
    count = stats.rowCount()
    size = int(str(stats.sizeInBytes()))
    return PlanSize(int(str(count.get())) if count.isDefined() else None, size if size < unknown else None)


def leaves(df: DataFrame) -> int | None:
    """How many relations ``df``'s optimized plan reads (200 DataFrames unioned: 200), without planning its
    execution (adaptive execution runs a plan's shuffles to tell its partitions); None over Spark Connect."""
    try:
        return int(df._jdf.queryExecution().optimizedPlan().collectLeaves().size())
    except Exception:  # noqa: BLE001 - no JVM plan here (Spark Connect)
        return None


def cores(spark: SparkSession) -> int:
    """The cores Spark runs tasks on (``defaultParallelism``; the configured value over Spark Connect)."""
    try:
        return spark.sparkContext.defaultParallelism
    except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext
        return int(spark.conf.get("spark.default.parallelism", "2") or 2)
