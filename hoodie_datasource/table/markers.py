"""Marker files: every data file a write is about to create is recorded first.

``.hoodie/.temp/<instant>/<partition>/<file>.marker.<CREATE|MERGE|APPEND>`` (Hudi's direct
markers, ``DirectWriteMarkers``): an empty file, or an empty object on an object store. A rollback
deletes exactly the marked files of a failed instant, and a commit deletes marked files that are not
in its write stats (left by failed or retried task attempts).
"""

from __future__ import annotations

from collections.abc import Iterable

from hoodie_datasource.config.table_config import METAFOLDER
from hoodie_datasource.storage.storage import Storage, join

MARKER_SUFFIX = ".marker."


def marker_dir(instant: str) -> str:
    """The markers of ``instant``, relative to the table."""
    return join(METAFOLDER, ".temp", instant)


def create_marker(storage: Storage, instant: str, partition: str, file_name: str, io_type: str) -> None:
    storage.write(marker_path(instant, partition, file_name, io_type), b"")


def create_markers(storage: Storage, instant: str, files: Iterable[tuple[str, str, str]]) -> None:
    """The markers of ``(partition, file name, io type)`` of a task's files, written together."""
    storage.write_all([(marker_path(instant, *file), b"") for file in files])


def marker_path(instant: str, partition: str, file_name: str, io_type: str) -> str:
    return join(marker_dir(instant), partition, f"{file_name}{MARKER_SUFFIX}{io_type}")


def marked_files(storage: Storage, instant: str) -> list[str]:
    """Paths (relative to the table) of the data files marked for ``instant``: one listing."""
    root = marker_dir(instant)
    found = []
    for info in storage.list_tree(root):
        if MARKER_SUFFIX in info.name:
            found.append(info.path[len(root) + 1:].split(MARKER_SUFFIX, 1)[0])
    return sorted(found)


def delete_markers_of(storage: Storage, instant: str, files: Iterable[str]) -> None:
    """Delete the markers of ``files`` (paths relative to the table) from one listing of the instant's
    markers; the marker folder too when it holds no other marker. Only for an instant that is no longer
    pending: a marker created after the listing then belongs to a task attempt that removes its own."""
    root, mine = marker_dir(instant), set(files)
    listed = [info.path for info in storage.list_tree(root) if MARKER_SUFFIX in info.name]
    own = [path for path in listed if path[len(root) + 1:].split(MARKER_SUFFIX, 1)[0] in mine]
    for path in own:
        storage.delete(path)
    if len(own) == len(listed):
        storage.delete_tree(root)


def delete_marker_dir(storage: Storage, instant: str) -> None:
    storage.delete_tree(marker_dir(instant))
