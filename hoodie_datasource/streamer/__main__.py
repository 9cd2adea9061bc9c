"""``python -m hoodie_datasource.streamer`` (also the ``hoodie-streamer`` console script)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

from hoodie_datasource.errors import HoodieError


def main(argv: Sequence[str] | None = None) -> int:
    from pyspark.sql import SparkSession

    from hoodie_datasource.streamer.config import parse_config
    from hoodie_datasource.streamer.streamer import read_file, run

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    logger = logging.getLogger("hoodie_datasource.streamer")
    try:
        cfg = parse_config(sys.argv[1:] if argv is None else argv, read_file=read_file)
    except HoodieError as exc:
        logger.error("%s: %s", type(exc).__name__, exc)
        return 2
    builder = SparkSession.builder.appName(f"hoodie-streamer {cfg.target_table}")
    if cfg.spark_master:
        builder = builder.master(cfg.spark_master)
    spark = builder.getOrCreate()
    try:
        run(spark, cfg)
    except HoodieError as exc:
        logger.error("%s: %s", type(exc).__name__, exc)
        return 1
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
