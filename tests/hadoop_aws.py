"""hadoop-aws, Hadoop's S3A file system, on the tests' Spark classpath: with it Spark's own parquet scan reads
the base files of tables on the S3 server (moto) through ``s3a://``.

``make hadoop-aws`` (part of ``make install``) fetches, with Maven, the hadoop-aws of the Hadoop version in
pyspark's jars and the AWS SDK bundle its pom names (``tests/hadoop-aws.pom.xml``) into
``.tools/hadoop-aws/<version>``; nothing of it is committed. ``tests.conftest.local_builder`` puts them on
every test JVM's classpath when they are there. A test that needs them calls ``require_s3a``: without
them it skips saying so, and fails under ``CI=true``.

Spark's S3A takes its settings from the session's Hadoop configuration, the way Hudi users set them
(``spark.hadoop.fs.s3a.*``); ``s3a_bucket_keys`` gives them for one bucket of the S3 server, from the
storage options the tests pass us (``S3Bucket.options``), as S3A's per-bucket keys.

``python -m tests.hadoop_aws`` prints the folder the Makefile fills.
"""

from __future__ import annotations

import re
from pathlib import Path

from hoodie_datasource.spark.shim import pyspark_jars
from hoodie_datasource.storage.options import resolve_storage_options
from hoodie_datasource.storage.s3a import s3a_settings
from hoodie_datasource.storage.uri import parse_table_uri
from tests.conftest import REPO, _missing

HADOOP_AWS_DIR = REPO / ".tools" / "hadoop-aws"
COMPLETE = ".complete"  # written by the Makefile once every jar is copied
_HADOOP_CLIENT = re.compile(r"hadoop-client-api-(.+)\.jar")


def hadoop_version() -> str:
    """The Hadoop version pyspark ships (its ``hadoop-client-api-<version>.jar``): hadoop-aws must match it."""
    found = sorted(m.group(1) for p in pyspark_jars().glob("hadoop-client-api-*.jar")
                   if (m := _HADOOP_CLIENT.fullmatch(p.name)))
    if len(found) != 1:
        raise RuntimeError(f"expected one hadoop-client-api jar in {pyspark_jars()}, found {found}")
    return found[0]


def jars_dir() -> Path:
    return HADOOP_AWS_DIR / hadoop_version()


def s3a_jars() -> list[Path]:
    """hadoop-aws and its dependencies, once ``make hadoop-aws`` fetched them all; else none."""
    folder = jars_dir()
    return sorted(folder.glob("*.jar")) if (folder / COMPLETE).is_file() else []


def require_s3a() -> list[Path]:
    """The S3A jars, or skip (fail under CI) saying how to get them."""
    jars = s3a_jars()
    if not jars:
        _missing(f"hadoop-aws {hadoop_version()} (Spark's s3a:// file system) is not installed in "
                 f"{jars_dir().relative_to(REPO)}: run `make hadoop-aws` (it needs mvn)")
    return jars


def s3a_bucket_keys(uri: str, options: dict[str, str]) -> dict[str, str]:
    """The Hadoop keys that set S3A to the store, credentials and addressing our storage resolves for the table
    at ``uri`` from ``options``, as per-bucket keys (``fs.s3a.bucket.<bucket>.<key>``: other buckets keep theirs)."""
    table = parse_table_uri(uri)
    settings = s3a_settings(resolve_storage_options(table, options))
    return {f"fs.s3a.bucket.{table.bucket}.{key.removeprefix('fs.s3a.')}": value for key, value in settings.items()}


if __name__ == "__main__":
    print(jars_dir())  # noqa: T201 - what the Makefile reads
