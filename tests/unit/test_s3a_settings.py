"""The S3A settings of a table's S3 storage (storage/s3a.py), and the file listing the jvm-shim gets for a table
on S3: base files named in the scheme the read named the table by, with the S3A settings that reach its store
(Spark reads them only where the session's Hadoop configuration has the same; tests/sql/test_s3a_reads.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hoodie_datasource.read.planned_files import PlannedFile, PlannedFiles
from hoodie_datasource.spark.file_listing import listing_schema
from hoodie_datasource.storage.options import resolve_storage_options
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.storage.s3a import s3a_identity, s3a_settings
from hoodie_datasource.storage.uri import parse_table_uri

MOTO = {"hoodie.storage.s3.endpoint": "http://127.0.0.1:9000", "hoodie.storage.s3.access.key": "AKTEST",
        "hoodie.storage.s3.secret.key": "secret", "hoodie.storage.s3.region": "eu-west-1"}


@pytest.fixture(autouse=True)
def no_aws_settings(tmp_path: Path, monkeypatch) -> None:
    """No ~/.aws and no AWS_* variables of the machine's."""
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION",
                 "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)


def resolved(options: dict[str, str]):
    return resolve_storage_options(parse_table_uri("s3://bucket/t"), options)


def test_an_emulator_on_loopback():
    assert s3a_settings(resolved(MOTO)) == {
        "fs.s3a.endpoint": "http://127.0.0.1:9000", "fs.s3a.connection.ssl.enabled": "false",
        "fs.s3a.path.style.access": "true", "fs.s3a.endpoint.region": "eu-west-1", "fs.s3a.access.key": "AKTEST",
        "fs.s3a.secret.key": "secret"}
    # what decides the store and the account: no secret, no region
    assert s3a_identity(resolved(MOTO)) == {"fs.s3a.endpoint": "http://127.0.0.1:9000",
                                            "fs.s3a.path.style.access": "true", "fs.s3a.access.key": "AKTEST"}


def test_aws_itself_with_the_default_credentials():
    assert s3a_settings(resolved({})) == {"fs.s3a.endpoint.region": "us-east-1"}
    assert s3a_identity(resolved({})) == {"fs.s3a.endpoint": "", "fs.s3a.access.key": ""}


def test_sparks_hadoop_keys_give_back_the_same_settings():
    """A Hudi user's ``spark.hadoop.fs.s3a.*`` keys: a bare host with SSL off, virtual-hosted buckets, a token."""
    hadoop = {"spark.hadoop.fs.s3a.endpoint": "minio:9000", "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
              "spark.hadoop.fs.s3a.path.style.access": "false", "spark.hadoop.fs.s3a.access.key": "AK",
              "spark.hadoop.fs.s3a.secret.key": "s", "spark.hadoop.fs.s3a.session.token": "tok"}
    settings = s3a_settings(resolved(hadoop))
    assert settings["fs.s3a.endpoint"] == "http://minio:9000" and settings["fs.s3a.path.style.access"] == "false"
    assert settings["fs.s3a.session.token"] == "tok" and settings["fs.s3a.connection.ssl.enabled"] == "false"


def files(*paths: str) -> PlannedFiles:
    return PlannedFiles("20240101000000000", None, tuple(PlannedFile(f"p/{i}", path, 10, True)
                                                         for i, path in enumerate(paths)))


@pytest.mark.parametrize("written", ["s3a", "s3", "s3n"])
def test_the_listing_names_s3_files_as_the_read_named_the_table(written):
    storage = open_storage(f"{written}://bucket/t", MOTO)
    assert storage.uri == "s3://bucket/t"  # one table, whatever its spelling
    listed = listing_schema(files(storage.uri_of("p/a.parquet"), None), storage, f"{written}://bucket/t")
    metadata = listed.fields[0].metadata
    assert metadata["path"] == [f"{written}://bucket/t/p/a.parquet", ""]
    assert dict(zip(metadata["s3a.keys"], metadata["s3a.values"])) == s3a_identity(storage.options)


def test_a_local_listing_has_no_s3a_settings(tmp_path: Path):
    storage = open_storage(str(tmp_path))
    metadata = listing_schema(files(str(tmp_path / "p" / "a.parquet")), storage, str(tmp_path)).fields[0].metadata
    assert metadata["path"] == [str(tmp_path / "p" / "a.parquet")] and "s3a.keys" not in metadata
