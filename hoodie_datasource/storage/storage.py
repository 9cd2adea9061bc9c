"""The storage interface: every file of a table is named by a path relative to the table's base URI.

Modelled on hudi-rs's ``Storage { base_url, object_store }`` and pyiceberg's ``FileIO``: the core
never joins an absolute path or calls the operating system; it asks the table's ``Storage``. The
commit point of a write is ``create_once`` of the completed instant file, so every backend must make
it atomic and exclusive (Hudi's ``HoodieStorage.createImmutableFileInPath``): a local link, an S3
``If-None-Match: *`` put, an Azure ``If-None-Match`` put, a GCS ``ifGenerationMatch=0`` upload. A
backend that cannot (HDFS through pyarrow) commits only with ``hoodie.storage.conditional.create.unsafe``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field

import pyarrow as pa

from hoodie_datasource.errors import StorageError


@dataclass(frozen=True)
class FileInfo:
    """A file under the table: ``path`` relative to the table's base, '/'-separated."""

    path: str
    size: int
    modified_ns: int = 0

    @property
    def name(self) -> str:
        return self.path.rpartition("/")[2]  # posixpath.basename's answer, without its per-call overhead


@dataclass(frozen=True)
class Listing:
    """The files and the sub-directory names directly under one directory."""

    files: list[FileInfo] = field(default_factory=list)
    dirs: list[str] = field(default_factory=list)


def join(*parts: str) -> str:
    """A relative path from parts, skipping empty ones (the table root is "")."""
    return "/".join(p.strip("/") for p in parts if p and p.strip("/"))


def inside_table(rel: str) -> str:
    """``rel`` if it names a place under the table's base: not absolute, no ``..`` segment. The backends
    whose paths the operating system or a file system resolves check every path with it, so no value
    that reached a path (a partition value, a file name from metadata) can name a file outside the table."""
    if rel.startswith("/") or ".." in rel.split("/"):
        raise StorageError(f"{rel!r} is not a path inside the table: refused")
    return rel


CONCURRENT_CREATES = 16  # requests (or fsyncs) in flight at once in ``create_all_once`` and ``write_all``
# one pool per process (its threads start on first use and stay: a task of a few file groups would
# otherwise spend more time starting threads than waiting on them); only callers outside it submit
POOL = ThreadPoolExecutor(max_workers=CONCURRENT_CREATES, thread_name_prefix="hoodie-storage")


def run_together(call: Callable[[str, bytes], None], files: Sequence[tuple[str, bytes]]) -> None:
    """``call(rel, data)`` of every file, up to ``CONCURRENT_CREATES`` at once; the first error is raised
    after all ran."""
    if len(files) <= 1:
        for rel, data in files:
            call(rel, data)
        return
    raise_first_error([POOL.submit(call, rel, data) for rel, data in files])


def raise_first_error(futures) -> None:
    """Wait for every future; raise the exception of the first that failed."""
    wait(futures)
    for future in futures:
        error = future.exception()
        if error is not None:
            raise error


class Storage(ABC):
    """One table's files. ``uri`` is the table's base URI; every ``rel`` is relative to it."""

    uri: str
    scheme: str

    def uri_of(self, rel: str) -> str:
        """The full URI of ``rel``, for messages, commit metadata and Spark file paths."""
        return f"{self.uri}/{rel}" if rel else self.uri

    @abstractmethod
    def read(self, rel: str) -> bytes:
        """The whole content of a file; ``FileNotFoundError`` when it does not exist."""

    def read_buffer(self, rel: str) -> pa.Buffer:
        """The whole content as an Arrow buffer (the local backend maps the file instead of copying)."""
        return pa.py_buffer(self.read(rel))

    @abstractmethod
    def open_input(self, rel: str, size: int | None = None) -> pa.NativeFile:
        """A random-access file for readers that seek (parquet footers); ``size``, when the caller
        knows it from a listing, spares an object store the request that would ask it."""

    @abstractmethod
    def write(self, rel: str, data: bytes) -> None:
        """Write a whole file; a reader sees the old content or the new, never a part of it."""

    @abstractmethod
    def create_once(self, rel: str, data: bytes) -> None:
        """Create ``rel`` only if absent, atomically; ``CommitConflictError`` if it exists."""

    def create_all_once(self, files: Sequence[tuple[str, bytes]]) -> None:
        """``create_once`` of every ``(rel, data)``, the requests in flight together (a write task's log
        files: one round trip's latency for all, not one each). Every name is tried; the first
        ``CommitConflictError`` (or other error) is raised after all were."""
        run_together(self.create_once, files)

    def write_all(self, files: Sequence[tuple[str, bytes]]) -> None:
        """``write`` of every ``(rel, data)``, the requests in flight together (a task's markers)."""
        run_together(self.write, files)

    @abstractmethod
    def list_dir(self, rel: str = "") -> Listing:
        """The files and sub-directories directly under ``rel`` (empty when it does not exist)."""

    @abstractmethod
    def list_tree(self, rel: str = "") -> list[FileInfo]:
        """Every file under ``rel``, at any depth (empty when it does not exist)."""

    @abstractmethod
    def stat(self, rel: str) -> FileInfo | None:
        """The file's size and time, or None when it does not exist."""

    @abstractmethod
    def is_dir(self, rel: str) -> bool:
        """Whether ``rel`` is a directory holding anything (object stores have no empty ones)."""

    @abstractmethod
    def delete(self, rel: str) -> bool:
        """Delete a file; False when it did not exist."""

    @abstractmethod
    def delete_tree(self, rel: str) -> int:
        """Delete everything under ``rel``; returns the number of files deleted."""

    @abstractmethod
    def move(self, src: str, dst: str) -> None:
        """Move a file within the table (a rename where the store has one, else copy and delete)."""

    def make_dirs(self, rel: str) -> None:  # noqa: B027 - a no-op where there are no directories
        """Create an empty directory where the store has directories (object stores have none)."""

    def exists(self, rel: str) -> bool:
        return self.stat(rel) is not None

    def signed_url(self, rel: str, expires_in_s: int) -> str | None:
        """A URL that reads ``rel`` without credentials until ``expires_in_s`` seconds from now (a pre-signed
        GET of the object store); None where the store has none (local files)."""
        return None

    def list_names(self, rel: str = "") -> list[str]:
        """The names of the files directly under ``rel``."""
        return [f.name for f in self.list_dir(rel).files]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.uri!r})"
