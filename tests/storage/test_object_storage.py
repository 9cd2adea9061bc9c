"""The Storage contract on local disk, S3 (moto's server), Azure Blob (Azurite) and the generic pyarrow
file system backend (on pyarrow's LocalFileSystem: the class HDFS tables use) alike.

Every backend must behave the same to the core: relative paths, whole-file writes, an exclusive
``create_once`` (the commit point: two processes racing for one name get one winner), listings with
no empty directories, and errors that name the URI and what to check, never a secret. No JVM; the
servers start once per session (tests/object_stores.py).
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from hoodie_datasource.errors import (
    CommitConflictError,
    ConditionalCreateUnsupportedError,
    StorageAccessError,
    StorageNotFoundError,
    UnsupportedStorageError,
)
from hoodie_datasource.storage.arrow_fs import ArrowFileSystemStorage
from hoodie_datasource.storage.object_store import TAIL_PREFETCH
from hoodie_datasource.storage.parquet import read_parquet, read_parquet_metadata, read_parquet_schema
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.storage.storage import FileInfo, Storage
from tests.conftest import REPO
from tests.object_stores import AZURE_ACCOUNT, AZURE_KEY, AzureContainer, MotoAuth, S3Bucket, azure_account_sas

BACKENDS = ["local", "s3", "azure", "arrow-local"]
RACE_ROUNDS = 25


@pytest.fixture(params=BACKENDS)
def storage(request, tmp_path: Path) -> Storage:
    """A new, empty table location on each backend."""
    if request.param == "local":
        return open_storage(str(tmp_path / "table"))
    if request.param == "arrow-local":
        return ArrowFileSystemStorage(pafs.LocalFileSystem(), str(tmp_path / "table"), f"file://{tmp_path}/table")
    place = request.getfixturevalue("s3_bucket" if request.param == "s3" else "azure_container")
    return open_storage(place.uri("warehouse/table"), place.options)


def _names(files: list[FileInfo]) -> list[str]:
    return [f.path for f in files]


def test_write_read_stat(storage: Storage) -> None:
    assert storage.stat("a/b.txt") is None and not storage.exists("a/b.txt")
    with pytest.raises(FileNotFoundError):
        storage.read("a/b.txt")
    storage.write("a/b.txt", b"hello")
    assert storage.read("a/b.txt") == b"hello"
    assert storage.read_buffer("a/b.txt").to_pybytes() == b"hello"
    info = storage.stat("a/b.txt")
    assert info is not None and (info.path, info.size, info.name) == ("a/b.txt", 5, "b.txt")
    assert info.modified_ns > 0
    storage.write("a/b.txt", pa.py_buffer(b"replaced"))  # whole-file replace, Arrow buffers accepted
    assert storage.read("a/b.txt") == b"replaced"
    assert storage.uri_of("a/b.txt") == f"{storage.uri}/a/b.txt" and storage.uri_of("") == storage.uri


def test_create_once_is_exclusive(storage: Storage) -> None:
    storage.create_once(".hoodie/001.commit", b"first")
    with pytest.raises(CommitConflictError, match="001.commit"):
        storage.create_once(".hoodie/001.commit", b"second")
    assert storage.read(".hoodie/001.commit") == b"first"
    storage.create_once(".hoodie/002.commit", b"")  # empty files (markers) too
    assert storage.stat(".hoodie/002.commit").size == 0


def test_write_all_writes_every_file(storage: Storage) -> None:
    storage.write("m/0.marker", b"old")
    files = [(f"m/{i}.marker", str(i).encode()) for i in range(20)]
    storage.write_all(files)
    assert {f.path: storage.read(f.path) for f in storage.list_tree("")} == dict(files)


def test_create_all_once_creates_every_absent_name_and_refuses_a_taken_one(storage: Storage) -> None:
    storage.create_once("p1/taken.log.1", b"first")
    files = [(f"p{i % 3}/f{i}.log.1", f"content {i}".encode()) for i in range(20)]
    storage.create_all_once(files)
    with pytest.raises(CommitConflictError, match="taken.log.1"):
        storage.create_all_once([("p2/new.log.1", b"new"), ("p1/taken.log.1", b"second"), ("p0/other.log.1", b"")])
    assert storage.read("p1/taken.log.1") == b"first"
    expected = {**dict(files), "p1/taken.log.1": b"first", "p2/new.log.1": b"new", "p0/other.log.1": b""}
    assert {f.path: storage.read(f.path) for f in storage.list_tree("")} == expected  # no temporary file left


def test_listings(storage: Storage) -> None:
    for rel in ("root.txt", "p1/a.parquet", "p1/b.log", "p1/deep/c.txt", "p2/d.txt"):
        storage.write(rel, rel.encode())
    top = storage.list_dir("")
    assert _names(top.files) == ["root.txt"] and top.dirs == ["p1", "p2"]
    p1 = storage.list_dir("p1")
    assert _names(p1.files) == ["p1/a.parquet", "p1/b.log"] and p1.dirs == ["deep"]
    assert [f.size for f in p1.files] == [len("p1/a.parquet"), len("p1/b.log")]
    assert storage.list_names("p1") == ["a.parquet", "b.log"]
    assert _names(storage.list_tree("p1")) == ["p1/a.parquet", "p1/b.log", "p1/deep/c.txt"]
    assert _names(storage.list_tree("")) == ["p1/a.parquet", "p1/b.log", "p1/deep/c.txt", "p2/d.txt", "root.txt"]
    assert storage.list_dir("missing").files == [] and storage.list_tree("missing") == []
    assert storage.is_dir("p1") and storage.is_dir("p1/deep") and not storage.is_dir("missing")
    assert not storage.is_dir("root.txt")
    # a prefix of a name is not a directory
    assert _names(storage.list_tree("p")) == [] and storage.list_dir("p").dirs == []


def test_delete_and_move(storage: Storage) -> None:
    for rel in ("x/1", "x/2", "x/y/3", "keep"):
        storage.write(rel, b"1")
    assert storage.delete("x/1") is True
    assert storage.delete("x/1") is False
    assert storage.delete_tree("x") == 2
    assert not storage.is_dir("x") and storage.list_tree("x") == []
    assert storage.delete_tree("x") == 0
    storage.move("keep", "moved/keep")
    assert not storage.exists("keep") and storage.read("moved/keep") == b"1"
    storage.make_dirs("empty")  # a no-op on object stores; never an error
    assert _names(storage.list_tree("")) == ["moved/keep"]


def test_parquet_through_storage(storage: Storage) -> None:
    table = pa.table({"key": [f"k{i}" for i in range(1000)], "value": list(range(1000))})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="snappy")
    storage.write("p/f.parquet", sink.getvalue())
    size = sink.getvalue().size
    assert storage.stat("p/f.parquet").size == size
    metadata = read_parquet_metadata(storage, "p/f.parquet")  # a footer read through open_input
    assert metadata.num_rows == 1000 and metadata.num_columns == 2
    assert read_parquet_schema(storage, "p/f.parquet").names == ["key", "value"]
    with storage.open_input("p/f.parquet") as source:
        source.seek(-4, os.SEEK_END)
        assert source.read(4) == b"PAR1"
    assert read_parquet(storage, "p/f.parquet", columns=["value"]).column("value").to_pylist() == list(range(1000))
    # columns stored dictionary encoded read as dictionaries (one stored plain, or absent, as it is)
    sink = pa.BufferOutputStream()
    pq.write_table(table.append_column("plain", table.column("key")), sink, use_dictionary=["key"])
    storage.write("p/g.parquet", sink.getvalue())
    read = read_parquet(storage, "p/g.parquet", skip=["value"], dictionary=["key", "plain", "absent"])
    assert read.schema == pa.schema([("key", pa.dictionary(pa.int32(), pa.string())), ("plain", pa.string())])
    assert read.column("key").cast(pa.string()).equals(table.column("key"))


def test_random_access_across_the_prefetched_tail(storage: Storage) -> None:
    """``open_input`` serves any range of a file bigger than the tail it fetches up front, with or without
    the size from a listing, and a zero-byte file too."""
    data = bytes(range(256)) * ((TAIL_PREFETCH + 300_000) // 256)
    storage.write("big.bin", data)
    for size in (None, len(data)):
        with storage.open_input("big.bin", size) as source:
            assert source.size() == len(data)
            for start, length in ((0, 10), (len(data) - TAIL_PREFETCH - 5, 20), (len(data) - 8, 8),
                                  (100_000, 250_000), (len(data) - 3, 100)):
                source.seek(start)
                assert source.read(length) == data[start:start + length]
    storage.write("empty.bin", b"")
    with storage.open_input("empty.bin") as source:
        assert source.read() == b""


def test_two_processes_race_for_each_name(storage: Storage, tmp_path: Path) -> None:
    """The pickled storage works in another process, and two processes creating the same names at the
    same time get exactly one winner per name; the loser sees CommitConflictError, never an overwrite."""
    if isinstance(storage, ArrowFileSystemStorage):
        pytest.skip("pyarrow.fs has no exclusive create (its move replaces an existing file), so the generic "
                    "backend's create_once is check-then-move and two racing processes can both win")
    storage.write("greeting", b"hello from the parent")
    pickled = tmp_path / "storage.pickle"
    pickled.write_bytes(pickle.dumps(storage))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    workers = [subprocess.Popen([sys.executable, "-m", "tests.storage.race_worker", str(pickled), str(RACE_ROUNDS), tag],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                cwd=REPO, env=env) for tag in ("A", "B")]
    try:
        for worker in workers:
            line = worker.stdout.readline()
            assert line.strip() == "ready hello from the parent", worker.stderr.read() if not line else line
        start = time.time() + 0.2
        for worker in workers:
            worker.stdin.write(f"go {start}\n")
            worker.stdin.flush()
        outcomes = []
        for worker in workers:
            out, err = worker.communicate(timeout=120)
            assert worker.returncode == 0, err
            outcomes.append(json.loads(out))
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
    a, b = outcomes
    errors = [o for o in a + b if o not in ("won", "lost")]
    assert errors == []
    for i, pair in enumerate(zip(a, b)):
        assert sorted(pair) == ["lost", "won"], f"round {i}: {pair}"
        winner = "A" if pair[0] == "won" else "B"
        assert storage.read(f"race/{i:04d}") == winner.encode()


def test_unknown_scheme_is_refused_without_touching_the_disk(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for uri in ("foo://bucket/table", "ftp://host/table"):
        with pytest.raises(UnsupportedStorageError, match="scheme"):
            open_storage(uri)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("backend", ["s3", "azure"])
def test_missing_bucket_names_the_uri(backend: str, request) -> None:
    place = request.getfixturevalue("s3_bucket" if backend == "s3" else "azure_container")
    uri = f"{place.uri('')[:-len(place.name)]}no-such-bucket-{place.name[-8:]}/t"
    storage = open_storage(uri, place.options)
    for attempt in (lambda: storage.read("a"), lambda: storage.write("a", b"1"), lambda: storage.list_dir(""),
                    lambda: storage.list_tree("")):
        with pytest.raises(StorageNotFoundError) as failure:
            attempt()
        assert storage.uri in str(failure.value) and "does not exist" in str(failure.value)


def _assert_refused(storage: Storage, secret: str, *, reads_refused: bool) -> None:
    attempts = [lambda: storage.write("b", b"1"), lambda: storage.create_once("c", b"1")]
    if reads_refused:
        attempts += [lambda: storage.read("a"), lambda: storage.stat("a"), lambda: storage.list_dir("")]
    for attempt in attempts:
        with pytest.raises(StorageAccessError) as failure:
            attempt()
        message = str(failure.value)
        assert storage.uri in message
        assert secret not in message and secret not in repr(storage) and secret not in str(storage.options)


def test_s3_wrong_credentials(moto_auth: MotoAuth) -> None:
    bucket = moto_auth.new_bucket()
    good = open_storage(bucket.uri(), bucket.options)
    good.write("a", b"1")
    wrong_secret = "wrong-secret-" + "x" * 20
    wrong = open_storage(bucket.uri(), {**bucket.options, "hoodie.storage.s3.secret.key": wrong_secret})
    _assert_refused(wrong, wrong_secret, reads_refused=True)
    unknown = open_storage(bucket.uri(), {**bucket.options, "hoodie.storage.s3.access.key": "AKIAUNKNOWNUNKNOWN"})
    _assert_refused(unknown, bucket.secret_key, reads_refused=True)


def test_s3_no_permission(moto_auth: MotoAuth) -> None:
    bucket = moto_auth.new_bucket()
    open_storage(bucket.uri(), bucket.options).write("a", b"1")
    reader = S3Bucket(bucket.name, bucket.server, *moto_auth.reader)
    storage = open_storage(reader.uri(), reader.options)
    # (moto's signature check rejects every signed listing with a query, so only reads are checked here)
    assert storage.read("a") == b"1" and storage.stat("a").size == 1
    _assert_refused(storage, reader.secret_key, reads_refused=False)


def test_azure_wrong_key(azure_container: AzureContainer) -> None:
    good = open_storage(azure_container.uri(), azure_container.options)
    good.write("a", b"1")
    wrong_key = "d3Jvbmcta2V5" * 8
    storage = open_storage(azure_container.uri(),
                           {**azure_container.options, "hoodie.storage.azure.account.key": wrong_key})
    _assert_refused(storage, wrong_key, reads_refused=True)
    assert AZURE_KEY not in str(storage.options)


def test_azure_sas_without_write_permission(azure_container: AzureContainer) -> None:
    open_storage(azure_container.uri(), azure_container.options).write("a", b"1")
    sas = azure_account_sas("rl")
    connection = f"AccountName={AZURE_ACCOUNT};BlobEndpoint={azure_container.endpoint};SharedAccessSignature={sas}"
    storage = open_storage(azure_container.uri(), {"hoodie.storage.azure.connection.string": connection})
    assert storage.read("a") == b"1"
    signature = dict(p.split("=", 1) for p in sas.split("&"))["sig"]
    _assert_refused(storage, signature, reads_refused=False)


def test_settings_from_the_environment(s3_env: S3Bucket, azure_env: AzureContainer) -> None:
    for place in (s3_env, azure_env):
        storage = open_storage(place.uri("from-env"))
        storage.write("x", b"1")
        assert storage.read("x") == b"1"
    assert open_storage(azure_env.uri("from-env"), azure_env.options).read("x") == b"1"


def test_s3a_and_s3_name_the_same_table(s3_bucket: S3Bucket) -> None:
    open_storage(s3_bucket.uri().replace("s3://", "s3a://"), s3_bucket.options).write("f", b"1")
    storage = open_storage(s3_bucket.uri(), s3_bucket.options)
    assert storage.read("f") == b"1" and storage.uri.startswith("s3://")


def test_store_ignoring_if_none_match(s3_bucket: S3Bucket, no_conditional_put_proxy: str) -> None:
    options = {**s3_bucket.options, "hoodie.storage.s3.endpoint": no_conditional_put_proxy}
    storage = open_storage(s3_bucket.uri(), options)
    with pytest.raises(ConditionalCreateUnsupportedError, match="conditional.create.unsafe"):
        storage.create_once(".hoodie/001.commit", b"1")
    assert not storage.exists(".hoodie/001.commit") and storage.list_tree("") == []  # the probe left nothing
    unsafe = open_storage(s3_bucket.uri(), {**options, "hoodie.storage.conditional.create.unsafe": "true"})
    unsafe.create_once(".hoodie/001.commit", b"1")
    assert unsafe.read(".hoodie/001.commit") == b"1"
    with pytest.raises(CommitConflictError):  # check-then-put still refuses an existing name
        unsafe.create_once(".hoodie/001.commit", b"2")
    assert unsafe.read(".hoodie/001.commit") == b"1"


def test_requests_are_counted(s3_bucket: S3Bucket) -> None:
    """The access-log helper benchmarks and request-count tests rely on. obstore deletes one object
    with a batch delete (POST ?delete); ``delete`` asks HEAD first to tell whether it existed."""
    storage = open_storage(s3_bucket.uri(), s3_bucket.options)
    mark = s3_bucket.server.mark()
    storage.write("a/1", b"1")
    storage.list_dir("a")
    storage.list_tree("")
    storage.stat("a/1")
    storage.read("a/1")
    storage.delete("a/1")
    assert s3_bucket.server.requests_since(mark) == {"PUT": 1, "LIST": 2, "HEAD": 2, "GET": 1, "POST": 1}


def test_footer_reads_cost_one_get(s3_bucket: S3Bucket, azure_container: AzureContainer) -> None:
    """A parquet footer read is one GET of the file's tail: S3 answers a suffix range with the object's
    size; Azure has no suffix ranges, so there an unknown size costs a HEAD first."""
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table({"k": list(range(100_000))}), sink)
    for place, unknown_size in ((s3_bucket, {"GET": 1}), (azure_container, {"HEAD": 1, "GET": 1})):
        storage = open_storage(place.uri(), place.options)
        storage.write("f.parquet", sink.getvalue())
        mark = place.server.mark()
        assert read_parquet_metadata(storage, "f.parquet").num_rows == 100_000
        assert place.server.requests_since(mark) == unknown_size
        mark = place.server.mark()
        assert read_parquet_metadata(storage, "f.parquet", sink.getvalue().size).num_rows == 100_000
        assert place.server.requests_since(mark) == {"GET": 1}


def test_azurite_requests_are_counted(azure_container: AzureContainer) -> None:
    storage = open_storage(azure_container.uri(), azure_container.options)
    mark = azure_container.server.mark()
    storage.write("a/1", b"1")
    storage.list_dir("a")
    storage.read("a/1")
    assert azure_container.server.requests_since(mark) == {"PUT": 1, "LIST": 1, "GET": 1}
