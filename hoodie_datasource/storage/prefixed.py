"""The files under one folder of a table's storage, as a storage of their own.

Apache Hudi's metadata table is a Hudi table inside the data table's meta folder (``.hoodie/metadata``):
with its own storage, the timeline, markers, file-system view and rollback code of any table serve it
unchanged. Every request goes to the parent storage (so counting, fault hooks and an object store's
connection are the parent's), with the folder put before each path and taken off each listed one.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from hoodie_datasource.storage.storage import FileInfo, Listing, Storage, join


class PrefixedStorage(Storage):
    def __init__(self, parent: Storage, prefix: str) -> None:
        self.parent = parent
        self.prefix = prefix.strip("/")
        self.uri = parent.uri_of(self.prefix)
        self.scheme = parent.scheme

    def _at(self, rel: str) -> str:
        return join(self.prefix, rel)

    def _back(self, info: FileInfo) -> FileInfo:
        return FileInfo(info.path[len(self.prefix) + 1:], info.size, info.modified_ns)

    def read(self, rel: str) -> bytes:
        return self.parent.read(self._at(rel))

    def read_buffer(self, rel: str) -> pa.Buffer:
        return self.parent.read_buffer(self._at(rel))

    def open_input(self, rel: str, size: int | None = None) -> pa.NativeFile:
        return self.parent.open_input(self._at(rel), size)

    def write(self, rel: str, data: bytes) -> None:
        self.parent.write(self._at(rel), data)

    def signed_url(self, rel: str, expires_in_s: int) -> str | None:
        return self.parent.signed_url(self._at(rel), expires_in_s)

    def create_once(self, rel: str, data: bytes) -> None:
        self.parent.create_once(self._at(rel), data)

    def create_all_once(self, files: Sequence[tuple[str, bytes]]) -> None:
        self.parent.create_all_once([(self._at(rel), data) for rel, data in files])

    def write_all(self, files: Sequence[tuple[str, bytes]]) -> None:
        self.parent.write_all([(self._at(rel), data) for rel, data in files])

    def list_dir(self, rel: str = "") -> Listing:
        listing = self.parent.list_dir(self._at(rel))
        return Listing([self._back(f) for f in listing.files], listing.dirs)

    def list_tree(self, rel: str = "") -> list[FileInfo]:
        return [self._back(f) for f in self.parent.list_tree(self._at(rel))]

    def stat(self, rel: str) -> FileInfo | None:
        info = self.parent.stat(self._at(rel))
        return None if info is None else FileInfo(rel, info.size, info.modified_ns)

    def is_dir(self, rel: str) -> bool:
        return self.parent.is_dir(self._at(rel))

    def delete(self, rel: str) -> bool:
        return self.parent.delete(self._at(rel))

    def delete_tree(self, rel: str) -> int:
        return self.parent.delete_tree(self._at(rel))

    def move(self, src: str, dst: str) -> None:
        self.parent.move(self._at(src), self._at(dst))

    def make_dirs(self, rel: str) -> None:
        self.parent.make_dirs(self._at(rel))

    def exists(self, rel: str) -> bool:
        return self.parent.exists(self._at(rel))
