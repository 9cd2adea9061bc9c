"""The docs lane's fixtures: one SparkSession with the SQL shim for every page (its warehouse in a
temporary folder), and, for pages that ask for it, a moto S3 server with the bucket the pages name."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from tests.conftest import local_builder
from tests.object_stores import S3Bucket, moto  # noqa: F401 - the session's moto server fixture

PAGE_BUCKET = "my-bucket"


@pytest.fixture(scope="session")
def docs_spark(tmp_path_factory):
    import hoodie_datasource

    warehouse = tmp_path_factory.mktemp("warehouse")
    spark = hoodie_datasource.session(local_builder("hoodie-docs"), warehouse=str(warehouse))
    yield spark
    spark.stop()


@pytest.fixture
def page_bucket(request, monkeypatch) -> Iterator[S3Bucket]:
    """The bucket ``my-bucket`` on the session's moto server, its settings in the environment."""
    server = request.getfixturevalue("moto")
    try:
        urllib.request.urlopen(urllib.request.Request(f"{server.url}/{PAGE_BUCKET}", method="PUT"), timeout=10).close()
    except urllib.error.HTTPError as exc:  # a second page on the same server: the bucket is there
        if exc.code != 409:
            raise
    bucket = S3Bucket(PAGE_BUCKET, server)
    for key, value in bucket.env.items():
        monkeypatch.setenv(key, value)
    yield bucket


def drop_tables(spark) -> None:
    """What a page left in the session: its tables, views and streams."""
    for query in spark.streams.active:
        query.stop()
    for table in spark.catalog.listTables():
        if table.isTemporary:
            spark.catalog.dropTempView(table.name)
        else:
            spark.sql(f"DROP TABLE IF EXISTS `{table.name}`")
