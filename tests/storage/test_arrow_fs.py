"""HDFS tables and the generic pyarrow file system backend, without an HDFS cluster.

This machine has no libhdfs, JVM or Hadoop client, so what is checked here is the refusal naming what to
install, the settings handed to ``HadoopFileSystem``, and ``HdfsStorage`` itself on pyarrow's
LocalFileSystem (the class, not a connection). The contract suite runs the generic class as
``arrow-local`` in test_object_storage.py.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.errors import (
    CommitConflictError,
    ConditionalCreateUnsupportedError,
    StorageError,
    UnsupportedStorageError,
)
from hoodie_datasource.read.file_reader import read_file_slice
from hoodie_datasource.read.planner import plan_read
from hoodie_datasource.storage.arrow_fs import ArrowFileSystemStorage, HdfsStorage, hadoop_endpoint
from hoodie_datasource.storage.options import resolve_storage_options
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.storage.uri import parse_table_uri
from hoodie_datasource.table.table import Table
from tests.unit.small_tables import batch

OPTS = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts"}


def _arrow_local(tmp_path: Path) -> ArrowFileSystemStorage:
    return ArrowFileSystemStorage(pafs.LocalFileSystem(), str(tmp_path / "t"), f"file://{tmp_path}/t")


def test_hdfs_without_a_hadoop_client_is_refused_naming_what_to_install(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for uri in ("hdfs://namenode:8020/t", "hdfs:///warehouse/t", "viewfs://cluster/t"):
        with pytest.raises(UnsupportedStorageError) as refused:
            open_storage(uri, {"hoodie.storage.hdfs.user": "etl"})
        message = str(refused.value)
        assert uri in message and "CLASSPATH" in message and "HADOOP_HOME" in message and "JAVA_HOME" in message
    assert os.listdir(tmp_path) == []


def test_hadoop_endpoint_of_the_uri() -> None:
    assert hadoop_endpoint(parse_table_uri("hdfs://namenode:8020/t")) == ("hdfs://namenode", 8020)
    assert hadoop_endpoint(parse_table_uri("hdfs://nameservice1/t")) == ("hdfs://nameservice1", 0)  # HA: no port
    assert hadoop_endpoint(parse_table_uri("hdfs:///t")) == ("default", 0)
    assert hadoop_endpoint(parse_table_uri("hdfs://default/t")) == ("default", 0)
    assert hadoop_endpoint(parse_table_uri("viewfs://cluster/a/t")) == ("viewfs://cluster", 0)
    assert parse_table_uri("hdfs:///warehouse/t").uri == "hdfs:///warehouse/t"


def test_hdfs_settings_keep_hadoop_key_case_and_redact_secrets() -> None:
    options = resolve_storage_options(parse_table_uri("hdfs://ns1/t"), {
        "hoodie.storage.hdfs.user": "etl",
        "hoodie.storage.hdfs.kerberos.ticket.cache.path": "/tmp/krb5cc_1000",
        "spark.hadoop.fs.defaultFS": "hdfs://ns1",
        "spark.hadoop.dfs.ha.namenodes.ns1": "nn1,nn2",
        "spark.hadoop.dfs.replication": "2",
        "hoodie.storage.hdfs.conf.dfs.replication": "1",  # the table's own key wins
        "spark.hadoop.fs.s3a.secret.key": "very-secret",
        "spark.hadoop.hive.metastore.uris": "thrift://m:9083",  # neither dfs.* nor fs.*
    })
    assert dict(options.config) == {"user": "etl", "kerb_ticket": "/tmp/krb5cc_1000"}
    assert dict(options.hadoop_conf) == {"fs.defaultFS": "hdfs://ns1", "dfs.ha.namenodes.ns1": "nn1,nn2",
                                         "dfs.replication": "1", "fs.s3a.secret.key": "very-secret"}
    assert "very-secret" not in repr(options) and "fs.defaultFS" in repr(options)
    hash(options)  # options key the per-process cache of open stores


def test_hdfs_storage_commits_only_when_the_user_accepts_the_race(tmp_path: Path) -> None:
    """HdfsStorage on pyarrow's LocalFileSystem: the class HDFS tables use, without a namenode."""
    table = parse_table_uri(f"hdfs://namenode:8020{tmp_path}/t")
    safe = HdfsStorage(pafs.LocalFileSystem(), table, resolve_storage_options(table, {}))
    with pytest.raises(ConditionalCreateUnsupportedError, match="conditional.create.unsafe"):
        safe.create_once(".hoodie/001.commit", b"1")
    assert safe.list_tree("") == []
    unsafe = HdfsStorage(pafs.LocalFileSystem(), table,
                         resolve_storage_options(table, {"hoodie.storage.conditional.create.unsafe": "true"}))
    unsafe.create_once(".hoodie/001.commit", b"1")
    with pytest.raises(CommitConflictError, match="hdfs://namenode:8020/.*001.commit"):
        unsafe.create_once(".hoodie/001.commit", b"2")
    assert safe.read(".hoodie/001.commit") == b"1" and (tmp_path / "t" / ".hoodie" / "001.commit").exists()
    with pytest.raises(FileNotFoundError, match="hdfs://namenode:8020/"):
        safe.read("missing")


def test_arrow_storage_pickles_with_its_file_system(tmp_path: Path) -> None:
    storage = _arrow_local(tmp_path)
    storage.write("a/b", b"1")
    copy = pickle.loads(pickle.dumps(storage))
    assert copy.uri == storage.uri and copy.read("a/b") == b"1"


def test_temporary_files_are_hidden_and_removed(tmp_path: Path) -> None:
    storage = _arrow_local(tmp_path)
    storage.write("p/f", b"1")
    storage.write("p/f", b"2")
    storage.create_once("p/g", b"3")
    with pytest.raises(CommitConflictError):
        storage.create_once("p/g", b"4")
    assert sorted(os.listdir(tmp_path / "t" / "p")) == ["f", "g"]


def test_file_system_errors_name_the_uri(tmp_path: Path) -> None:
    storage = _arrow_local(tmp_path)
    storage.write("dir/x", b"1")
    with pytest.raises(StorageError, match=f"Cannot read file://{tmp_path}/t/dir: .*directory"):
        storage.read("dir")
    assert storage.delete("dir/missing") is False and storage.delete_tree("missing") == 0


def test_table_written_and_read_through_the_generic_backend(tmp_path: Path) -> None:
    storage = _arrow_local(tmp_path)
    write_local(storage, batch([("a", 1, "x", 1), ("b", 1, "y", 2)]), OPTS)
    write_local(storage, batch([("a", 2, "x", 10), ("c", 2, "y", 3)]), OPTS)
    plan = plan_read(Table.load(storage), ReadConfig())
    rows = sorted((r["id"], r["v"]) for s in plan.slices for b in read_file_slice(plan, s, plan.commit_filter())
                  for r in b.to_pylist())
    assert rows == [("a", 10), ("b", 2), ("c", 3)]
    assert storage.exists(".hoodie/hoodie.properties")
    assert not [f.path for f in storage.list_tree("") if f.name.startswith(".") and f.name.endswith(".tmp")]
