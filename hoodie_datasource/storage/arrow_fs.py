"""Tables on any ``pyarrow.fs.FileSystem``, and on HDFS through pyarrow's ``HadoopFileSystem`` (libhdfs).

``ArrowFileSystemStorage`` maps the ``Storage`` contract onto pyarrow.fs calls under a root path (the
table's base path on that file system). Whole-file writes go to a hidden temporary name beside the
target (``.<name>.<uuid>.tmp``: the core skips names starting with ``.`` when it reads partitions), then
are moved onto it, so a reader sees the old content or the new.

The commit point, ``create_once``, needs a create that fails when the name exists. pyarrow.fs has none:
``open_output_stream`` overwrites, and ``move`` replaces an existing file on every file system, HDFS
included (Arrow's ``HadoopFileSystem::Move`` retries a refused rename after deleting the destination,
"allow file -> file clobber"), although Hadoop's own ``rename`` refuses an existing destination. So
``create_once`` here checks, then moves: two writers racing for one instant file can both win. HDFS
tables therefore commit only with ``hoodie.storage.conditional.create.unsafe=true`` (a promise that one
writer commits at a time), the rule object stores without conditional puts follow.
"""

from __future__ import annotations

import functools
import logging
import posixpath
import re
import uuid

import pyarrow as pa
import pyarrow.fs as pafs

from hoodie_datasource.errors import (
    CommitConflictError,
    ConditionalCreateUnsupportedError,
    StorageAccessError,
    StorageError,
    UnsupportedStorageError,
)
from hoodie_datasource.storage.options import StorageOptions
from hoodie_datasource.storage.storage import FileInfo, Listing, Storage, inside_table, join
from hoodie_datasource.storage.uri import TableUri, parse_table_uri

logger = logging.getLogger(__name__)

# what pyarrow's OSError says when libhdfs, the JVM or the Hadoop jars cannot be loaded
_NO_HADOOP_CLIENT = re.compile(r"libhdfs|libjvm|JAVA_HOME|CLASSPATH|HADOOP_HOME|ARROW_LIBHDFS_DIR|NoClassDefFound")


class ArrowFileSystemStorage(Storage):
    """A table under ``root`` on ``fs``; ``uri`` is the table's URI, for messages and file paths."""

    def __init__(self, fs: pafs.FileSystem, root: str, uri: str) -> None:
        self.fs = fs
        self.root = root.rstrip("/") or "/"
        self.uri = uri.rstrip("/")
        self.scheme = uri.split(":", 1)[0].lower()

    def __reduce__(self):
        """Pickled with its file system (pyarrow file systems pickle as their settings)."""
        return ArrowFileSystemStorage, (self.fs, self.root, self.uri)

    def _path(self, rel: str) -> str:
        return posixpath.join(self.root, inside_table(rel)) if rel else self.root

    def _fail(self, exc: OSError, rel: str, verb: str) -> Exception:
        """``FileNotFoundError`` for a missing file, else a StorageError naming the URI (pyarrow's
        messages name the path and the cause, no secret; only their first line is kept)."""
        where = self.uri_of(rel)
        if isinstance(exc, FileNotFoundError):
            return FileNotFoundError(where)
        first = (str(exc).splitlines() or [type(exc).__name__])[0][:300]
        if isinstance(exc, PermissionError) or "AccessControlException" in str(exc):
            return StorageAccessError(
                f"Cannot {verb} {where}: permission denied ({first}). Check the user the file system sees "
                f"(hoodie.storage.hdfs.user or HADOOP_USER_NAME on HDFS), its Kerberos ticket and the "
                f"directory's permissions")
        return StorageError(f"Cannot {verb} {where}: {first}")

    def read(self, rel: str) -> bytes:
        try:
            with self.fs.open_input_file(self._path(rel)) as source:
                return source.read()
        except OSError as exc:
            raise self._fail(exc, rel, "read") from None

    def open_input(self, rel: str, size: int | None = None) -> pa.NativeFile:
        try:
            return self.fs.open_input_file(self._path(rel))
        except OSError as exc:
            raise self._fail(exc, rel, "open") from None

    def _temporary_copy(self, rel: str, data: bytes) -> str:
        """``data`` written to a hidden name beside ``rel``; returns that file's path."""
        path = self._path(rel)
        parent, name = posixpath.split(path)
        tmp = posixpath.join(parent, f".{name}.{uuid.uuid4().hex}.tmp")
        try:
            self.fs.create_dir(parent, recursive=True)
            with self.fs.open_output_stream(tmp, compression=None) as sink:
                sink.write(data)
        except OSError as exc:
            self._discard(tmp)
            raise self._fail(exc, rel, "write") from None
        return tmp

    def _discard(self, path: str) -> None:
        try:
            self.fs.delete_file(path)
        except OSError:
            logger.debug("no temporary file %s to delete", path)

    def write(self, rel: str, data: bytes) -> None:
        """Through a temporary file moved onto ``rel``. A rename onto an existing file is atomic on local
        disk; HDFS has no atomic replace (pyarrow deletes the old file, then renames), which only
        ``hoodie.properties`` meets: it is the one file the core ever overwrites."""
        tmp = self._temporary_copy(rel, data)
        try:
            self.fs.move(tmp, self._path(rel))
        except OSError as exc:
            self._discard(tmp)
            raise self._fail(exc, rel, "write") from None

    def create_once(self, rel: str, data: bytes) -> None:
        """Check, then move the temporary file onto ``rel``: racy (see the module's docstring)."""
        tmp = self._temporary_copy(rel, data)
        moved = False
        try:
            if self.exists(rel):
                raise CommitConflictError(f"{self.uri_of(rel)} already exists; it is never overwritten")
            self.fs.move(tmp, self._path(rel))
            moved = True
        except OSError as exc:
            raise self._fail(exc, rel, "create") from None
        finally:
            if not moved:
                self._discard(tmp)

    def _select(self, rel: str, recursive: bool) -> list[pafs.FileInfo]:
        """The entries under ``rel``; none when it is missing or a file."""
        try:
            return self.fs.get_file_info(pafs.FileSelector(self._path(rel), recursive=recursive, allow_not_found=True))
        except NotADirectoryError:
            return []
        except OSError as exc:
            raise self._fail(exc, rel, "list") from None

    def _rel_of(self, rel: str, info: pafs.FileInfo) -> str:
        """The table-relative path of an entry listed under ``rel`` (HDFS may list full URIs)."""
        base = self._path(rel).rstrip("/") + "/"
        at = info.path.find(base)
        return join(rel, info.path[at + len(base):] if at >= 0 else info.base_name)

    def list_dir(self, rel: str = "") -> Listing:
        listing = Listing()
        for info in self._select(rel, recursive=False):
            if info.type == pafs.FileType.Directory:
                listing.dirs.append(info.base_name)
            elif info.type == pafs.FileType.File:
                listing.files.append(FileInfo(join(rel, info.base_name), info.size, info.mtime_ns or 0))
        listing.files.sort(key=lambda f: f.path)
        listing.dirs.sort()
        return listing

    def list_tree(self, rel: str = "") -> list[FileInfo]:
        found = [FileInfo(self._rel_of(rel, i), i.size, i.mtime_ns or 0)
                 for i in self._select(rel, recursive=True) if i.type == pafs.FileType.File]
        return sorted(found, key=lambda f: f.path)

    def stat(self, rel: str) -> FileInfo | None:
        try:
            info = self.fs.get_file_info(self._path(rel))
        except NotADirectoryError:
            return None
        except OSError as exc:
            raise self._fail(exc, rel, "stat") from None
        return FileInfo(rel, info.size, info.mtime_ns or 0) if info.type == pafs.FileType.File else None

    def is_dir(self, rel: str) -> bool:
        return bool(self._select(rel, recursive=False))

    def _missing(self, rel: str) -> bool:
        """Whether nothing is at ``rel``: asked after a failed delete, as libhdfs reports deleting a
        missing path as EIO, not ENOENT."""
        try:
            return self.fs.get_file_info(self._path(rel)).type == pafs.FileType.NotFound
        except OSError:
            return False

    def delete(self, rel: str) -> bool:
        try:
            self.fs.delete_file(self._path(rel))
        except OSError as exc:
            if isinstance(exc, FileNotFoundError) or self._missing(rel):
                return False
            raise self._fail(exc, rel, "delete") from None
        return True

    def delete_tree(self, rel: str) -> int:
        count = len(self.list_tree(rel))
        try:
            self.fs.delete_dir(self._path(rel))
        except OSError as exc:
            if not isinstance(exc, (FileNotFoundError, NotADirectoryError)) and not self._missing(rel):
                raise self._fail(exc, rel, "delete") from None
        return count

    def make_dirs(self, rel: str) -> None:
        try:
            self.fs.create_dir(self._path(rel), recursive=True)
        except OSError as exc:
            raise self._fail(exc, rel, "create the directory") from None

    def move(self, src: str, dst: str) -> None:
        try:
            self.fs.create_dir(posixpath.dirname(self._path(dst)), recursive=True)
            self.fs.move(self._path(src), self._path(dst))
        except OSError as exc:
            raise self._fail(exc, src, "move") from None


class HdfsStorage(ArrowFileSystemStorage):
    """A table on HDFS (``hdfs://`` or ``viewfs://``), opened again by each process that unpickles it."""

    def __init__(self, fs: pafs.FileSystem, table: TableUri, options: StorageOptions) -> None:
        super().__init__(fs, f"/{table.key}", table.uri)
        self.options = options

    def __reduce__(self):
        """Pickled as its URI and settings: a Spark worker connects itself (once per process)."""
        return open_hdfs_storage, (self.uri, self.options)

    def create_once(self, rel: str, data: bytes) -> None:
        if not self.options.unsafe_conditional_create:
            raise ConditionalCreateUnsupportedError(
                f"Cannot create {self.uri_of(rel)} only if it is absent: pyarrow's HadoopFileSystem has no "
                f"exclusive create (its move replaces an existing file), so two writers committing at once "
                f"could overwrite each other's instant files. Set hoodie.storage.conditional.create.unsafe=true "
                f"if only one writer ever commits to this table")
        super().create_once(rel, data)


def hadoop_endpoint(table: TableUri) -> tuple[str, int]:
    """The host and port ``HadoopFileSystem`` takes for the URI's authority, as Arrow's own
    ``HadoopFileSystem.from_uri`` builds them: ``default`` for fs.defaultFS (``hdfs:///p``,
    ``hdfs://default/p``), else ``scheme://host`` with port 0 when none is written (an HA nameservice)."""
    host, _, port = table.host.rpartition(":") if ":" in table.host else (table.host, "", "")
    if not host or host == "default":
        return "default", 0
    return f"{table.scheme}://{host}", int(port) if port else 0


@functools.lru_cache(maxsize=64)
def open_hdfs_storage(uri: str, options: StorageOptions) -> HdfsStorage:
    """The process's one ``HdfsStorage`` for ``uri`` and ``options``; ``UnsupportedStorageError``
    naming what to install when pyarrow cannot load libhdfs, the JVM or the Hadoop jars."""
    table = parse_table_uri(uri)
    host, port = hadoop_endpoint(table)
    settings = dict(options.config)
    try:
        fs = pafs.HadoopFileSystem(host, port, user=settings.get("user"), kerb_ticket=settings.get("kerb_ticket"),
                                   extra_conf=dict(options.hadoop_conf) or None)
    except OSError as exc:
        first = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
        if _NO_HADOOP_CLIENT.search(str(exc)):
            raise UnsupportedStorageError(
                f"Cannot open {table.uri}: pyarrow's HadoopFileSystem could not load the Hadoop client ({first}). "
                f"It needs libhdfs.so (set HADOOP_HOME, or ARROW_LIBHDFS_DIR to the directory holding it), "
                f"a JVM (JAVA_HOME) and the Hadoop jars (CLASSPATH=$(hadoop classpath --glob))") from None
        raise StorageError(f"Cannot connect to the HDFS of {table.uri}: {first}") from None
    return HdfsStorage(fs, table, options)
