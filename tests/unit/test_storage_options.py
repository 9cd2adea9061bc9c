"""Where a table's store settings come from (storage/options.py), without any server.

Precedence, lowest first: the AWS profile files, the environment, the Hadoop keys a Spark job sets
(``spark.hadoop.fs.s3a.*``, ``spark.hadoop.fs.azure.*``), the table's ``hoodie.storage.*`` options.
Secrets never show in ``repr`` or ``str``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hoodie_datasource.storage.options import (
    StorageOptions,
    environment_options,
    parse_connection_string,
    resolve_storage_options,
)
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.storage.uri import parse_table_uri

S3 = parse_table_uri("s3://bucket/warehouse/t")


@pytest.fixture
def home(tmp_path: Path, monkeypatch) -> Path:
    """An empty HOME, so the machine's own ~/.aws never leaks in."""
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def _aws_files(home: Path, credentials: str, config: str = "") -> None:
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text(credentials)
    (home / ".aws" / "config").write_text(config)


def _config(options: StorageOptions) -> dict[str, str]:
    return dict(options.config)


def test_default_profile(home: Path) -> None:
    _aws_files(home, "[default]\naws_access_key_id = AKPROFILE\naws_secret_access_key = profile-secret\n",
               "[default]\nregion = eu-west-3\nendpoint_url = http://127.0.0.1:9000\n")
    config = _config(resolve_storage_options(S3, {}, environ={}))
    assert config["access_key_id"] == "AKPROFILE" and config["secret_access_key"] == "profile-secret"
    assert config["region"] == "eu-west-3" and config["endpoint"] == "http://127.0.0.1:9000"
    assert resolve_storage_options(S3, {}, environ={}).allow_http  # an http endpoint


def test_named_profile_and_file_locations(home: Path, tmp_path: Path) -> None:
    _aws_files(home, "[default]\naws_access_key_id = AKDEFAULT\n[dev]\naws_access_key_id = AKDEV\n",
               "[default]\nregion = us-west-1\n[profile dev]\nregion = ap-south-1\n")
    config = _config(resolve_storage_options(S3, {}, environ={"AWS_PROFILE": "dev"}))
    assert (config["access_key_id"], config["region"]) == ("AKDEV", "ap-south-1")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "config").write_text("[default]\nregion = sa-east-1\n")
    (elsewhere / "creds").write_text("[default]\naws_access_key_id = AKFILE\n")
    env = {"AWS_CONFIG_FILE": str(elsewhere / "config"), "AWS_SHARED_CREDENTIALS_FILE": str(elsewhere / "creds")}
    config = _config(resolve_storage_options(S3, {}, environ=env))
    assert (config["access_key_id"], config["region"]) == ("AKFILE", "sa-east-1")


def test_no_settings_at_all(home: Path) -> None:
    options = resolve_storage_options(S3, {}, environ={})
    assert _config(options) == {"region": "us-east-1"} and not options.allow_http
    assert not options.unsafe_conditional_create


def test_environment_beats_profile(home: Path) -> None:
    _aws_files(home, "[default]\naws_access_key_id = AKPROFILE\naws_secret_access_key = profile-secret\n")
    env = {"AWS_ACCESS_KEY_ID": "AKENV", "AWS_SECRET_ACCESS_KEY": "env-secret", "AWS_SESSION_TOKEN": "tok",
           "AWS_DEFAULT_REGION": "eu-central-1", "AWS_ENDPOINT_URL_S3": "https://s3.example.com"}
    config = _config(resolve_storage_options(S3, {}, environ=env))
    assert config == {"access_key_id": "AKENV", "secret_access_key": "env-secret", "session_token": "tok",
                      "region": "eu-central-1", "endpoint": "https://s3.example.com"}
    assert resolve_storage_options(S3, {}, environ={"AWS_ALLOW_HTTP": "true"}).allow_http


def test_the_drivers_environment_carried_as_options_beats_the_workers(home: Path) -> None:
    """A Spark worker inherits the JVM's environment, not variables the driver set later: the driver's
    travel as hoodie.storage.env.* options and win over the worker's; Hadoop keys still win over them."""
    driver = {"AWS_ACCESS_KEY_ID": "AKDRIVER", "AWS_SECRET_ACCESS_KEY": "driver-secret", "HOME": "/ignored"}
    carried = environment_options(driver)
    assert carried == {"hoodie.storage.env.aws_access_key_id": "AKDRIVER",
                       "hoodie.storage.env.aws_secret_access_key": "driver-secret"}
    worker = {"AWS_ACCESS_KEY_ID": "AKWORKER", "AWS_SECRET_ACCESS_KEY": "worker-secret", "AWS_REGION": "eu-west-1"}
    config = _config(resolve_storage_options(S3, carried, environ=worker))
    assert config == {"access_key_id": "AKDRIVER", "secret_access_key": "driver-secret", "region": "eu-west-1"}
    hadoop = {**carried, "spark.hadoop.fs.s3a.access.key": "AKHADOOP"}
    assert _config(resolve_storage_options(S3, hadoop, environ=worker))["access_key_id"] == "AKHADOOP"


def test_hadoop_s3a_keys_beat_environment(home: Path) -> None:
    env = {"AWS_ACCESS_KEY_ID": "AKENV", "AWS_SECRET_ACCESS_KEY": "env-secret", "AWS_REGION": "eu-west-1"}
    options = {
        "spark.hadoop.fs.s3a.access.key": "AKHADOOP",
        "spark.hadoop.fs.s3a.secret.key": "hadoop-secret",
        "spark.hadoop.fs.s3a.bucket.bucket.secret.key": "bucket-secret",  # per bucket beats global
        "spark.hadoop.fs.s3a.bucket.other.access.key": "AKOTHER",  # another bucket's: ignored
        "spark.hadoop.fs.s3a.endpoint": "minio.local:9000",  # a bare host, as Hadoop users write it
        "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.endpoint.region": "us-west-2",
    }
    resolved = resolve_storage_options(S3, options, environ=env)
    config = _config(resolved)
    assert config["access_key_id"] == "AKHADOOP" and config["secret_access_key"] == "bucket-secret"
    assert config["endpoint"] == "http://minio.local:9000" and resolved.allow_http
    assert config["virtual_hosted_style_request"] == "false" and config["region"] == "us-west-2"
    https = _config(resolve_storage_options(S3, {"spark.hadoop.fs.s3a.endpoint": "s3.example.com"}, environ={}))
    assert https["endpoint"] == "https://s3.example.com"


def test_hoodie_storage_options_beat_everything(home: Path) -> None:
    env = {"AWS_ACCESS_KEY_ID": "AKENV", "AWS_SECRET_ACCESS_KEY": "env-secret"}
    options = {
        "spark.hadoop.fs.s3a.access.key": "AKHADOOP",
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "hoodie.storage.s3.access.key": "AKHOODIE",
        "hoodie.storage.s3.secret.key": "hoodie-secret",
        "hoodie.storage.s3.endpoint": "http://127.0.0.1:9000",
        "hoodie.storage.s3.region": "af-south-1",
        "hoodie.storage.s3.path.style.access": "false",
        "hoodie.storage.conditional.create.unsafe": "true",
    }
    resolved = resolve_storage_options(S3, options, environ=env)
    config = _config(resolved)
    assert (config["access_key_id"], config["secret_access_key"]) == ("AKHOODIE", "hoodie-secret")
    assert config["region"] == "af-south-1" and config["virtual_hosted_style_request"] == "true"
    assert resolved.allow_http and resolved.unsafe_conditional_create
    no_http = resolve_storage_options(S3, {**options, "hoodie.storage.allow.http": "false"}, environ=env)
    assert not no_http.allow_http  # the explicit option wins over the endpoint's scheme


def test_s3a_and_s3_name_the_same_table(home: Path, monkeypatch) -> None:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(key, raising=False)
    uris = ("s3://bucket/warehouse/t", "s3a://bucket/warehouse/t/", "s3n://bucket/warehouse/t")
    assert {parse_table_uri(u).uri for u in uris} == {"s3://bucket/warehouse/t"}
    options = {"hoodie.storage.s3.endpoint": "http://127.0.0.1:9", "hoodie.storage.s3.access.key": "k",
               "hoodie.storage.s3.secret.key": "s"}
    assert len({resolve_storage_options(parse_table_uri(u), options) for u in uris}) == 1
    opened = [open_storage(u, options) for u in uris]  # no request is made until a file is touched
    assert opened[0] is opened[1] is opened[2] and opened[0].uri == "s3://bucket/warehouse/t"


def test_connection_string_parsing() -> None:
    key = "a2V5a2V5a2V5"
    parsed = parse_connection_string(
        f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={key};"
        f"BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;QueueEndpoint=http://127.0.0.1:10001/x;")
    assert parsed == {"account_name": "devstoreaccount1", "account_key": key,
                      "endpoint": "http://127.0.0.1:10000/devstoreaccount1"}
    sas = parse_connection_string("BlobEndpoint=https://acct.blob.core.windows.net/;SharedAccessSignature=sv=2019&sig=a%3D")
    assert sas == {"endpoint": "https://acct.blob.core.windows.net/", "sas_key": "sv=2019&sig=a%3D"}  # '=' inside kept


def test_azure_precedence() -> None:
    table = parse_table_uri("abfss://container@acct.dfs.core.windows.net/warehouse/t")
    assert (table.bucket, table.account, table.key) == ("container", "acct", "warehouse/t")
    env = {"AZURE_STORAGE_ACCOUNT_NAME": "envacct", "AZURE_STORAGE_ACCOUNT_KEY": "env-key"}
    assert _config(resolve_storage_options(table, {}, environ=env)) == {"account_name": "acct", "account_key": "env-key"}
    hadoop = {"spark.hadoop.fs.azure.account.key.acct.dfs.core.windows.net": "hadoop-key"}
    assert _config(resolve_storage_options(table, hadoop, environ=env))["account_key"] == "hadoop-key"
    hoodie = {**hadoop, "hoodie.storage.azure.account.key": "hoodie-key",
              "hoodie.storage.azure.endpoint": "http://127.0.0.1:10000/acct"}
    resolved = resolve_storage_options(table, hoodie, environ=env)
    assert _config(resolved)["account_key"] == "hoodie-key" and resolved.allow_http
    plain = parse_table_uri("az://container/t")
    assert _config(resolve_storage_options(plain, {}, environ=env))["account_name"] == "envacct"
    connection = {"AZURE_STORAGE_CONNECTION_STRING": "AccountName=cs;AccountKey=cs-key;BlobEndpoint=http://h/cs"}
    from_string = _config(resolve_storage_options(plain, {}, environ={**env, **connection}))
    assert from_string == {"account_name": "cs", "account_key": "cs-key", "endpoint": "http://h/cs"}


def test_gcs_service_account() -> None:
    table = parse_table_uri("gs://bucket/t")
    env = {"GOOGLE_APPLICATION_CREDENTIALS": "/keys/env.json"}
    assert _config(resolve_storage_options(table, {}, environ=env)) == {"service_account_path": "/keys/env.json"}
    option = {"hoodie.storage.gcs.service.account.path": "/keys/option.json"}
    assert _config(resolve_storage_options(table, option, environ=env)) == {"service_account_path": "/keys/option.json"}


def test_secrets_are_redacted(home: Path) -> None:
    secrets = ("s3-secret-value", "s3-session-token-value")
    options = {"hoodie.storage.s3.access.key": "AKVISIBLE", "hoodie.storage.s3.secret.key": secrets[0],
               "hoodie.storage.s3.session.token": secrets[1], "hoodie.storage.s3.endpoint": "http://127.0.0.1:9"}
    resolved = resolve_storage_options(S3, options, environ={})
    storage = open_storage("s3://bucket/warehouse/redacted", resolved)
    for shown in (repr(resolved), str(resolved), f"{resolved}", repr(storage), str(storage)):
        assert not any(secret in shown for secret in secrets), shown
    assert "***" in repr(resolved)
    connection = "AccountName=a;AccountKey=azure-key-value;SharedAccessSignature=sig=sas-value"
    azure = resolve_storage_options(parse_table_uri("az://c/t"), {"hoodie.storage.azure.connection.string": connection},
                                    environ={})
    assert "azure-key-value" not in repr(azure) and "sas-value" not in str(azure)
