"""A write's input planned once: when its plan reads many relations, the write builds on the rows of its
executed plan, not on the plan itself.

Every DataFrame the write derives from its input (a column, a shuffle, ``mapInArrow``) is optimized whole
again when it runs, the input's plan included, and adaptive execution describes that whole plan to Spark's
listeners at every step. For a plan of a few relations this is nothing; for 200 Arrow slices each made a
DataFrame and unioned (how a batch from pandas or Arrow arrives once cut into pieces) each optimization
walks 200 relations: most of a 30,000-row upsert's time went to planning it. Built on the input's RDD (an
RDD scan of the rows its executed plan computes, as Spark's own ``Dataset.checkpoint`` builds on), the
write's own plan holds one relation, and the input is planned once, by its own
``QueryExecution``. The rows still stream from the input's tasks: nothing is stored or computed twice.
"""

from __future__ import annotations

import logging

from pyspark.sql import DataFrame

from hoodie_datasource.spark.input_size import leaves

logger = logging.getLogger(__name__)

# relations a plan reads above which a write builds on its rows (200 unioned slices: ~0.4 s an optimization
# on a quiet 2-core machine; a handful: a few ms)
MANY_RELATIONS = 16


def planned_once(df: DataFrame) -> DataFrame:
    """``df``, or when its plan reads more than ``MANY_RELATIONS`` relations, a DataFrame of the same rows and
    schema scanning the RDD of ``df``'s executed plan. A streaming plan, and Spark Connect (no JVM plan here),
    keep ``df``. Take what the plan knows of the input (``input_size.plan_size``) from ``df``: the RDD's scan
    knows no size."""
    count = leaves(df)
    if count is None or count <= MANY_RELATIONS or df.isStreaming:
        return df
    try:
        jdf = df.sparkSession._jsparkSession.internalCreateDataFrame(
            df._jdf.queryExecution().toRdd(), df._jdf.schema(), False)
    except Exception:  # noqa: BLE001 - a Spark without this method: the write plans the whole input each time
        logger.debug("Cannot build on the rows of the input's plan; the write plans its %d relations", count,
                     exc_info=True)
        return df
    return DataFrame(jdf, df.sparkSession)
