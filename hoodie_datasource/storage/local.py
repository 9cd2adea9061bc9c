"""Local file system operations the table format relies on.

The commit point of a Hudi write is the creation of the completed instant file, so that file
must appear atomically and exactly once. ``create_once`` writes the content to a private
temporary name, then ``os.link``s it to the final name: ``link`` fails if the target exists
(unlike ``rename``, which may overwrite), and readers never see a partially written file.
``child_paths``, ``glob_paths`` and ``content_summary`` list and size what is under a path (for
``show_fs_path_detail``), so no module above walks the file system itself.
"""

from __future__ import annotations

import glob
import os
import uuid
from pathlib import Path

from hoodie_datasource.errors import CommitConflictError


def local_path(uri: str) -> str:
    """A plain local path for ``uri`` (accepts ``file:/x``, ``file:///x`` and plain paths)."""
    if uri.startswith("file://"):
        uri = uri[len("file://"):]
    elif uri.startswith("file:"):
        uri = uri[len("file:"):]
    return os.path.abspath(uri)


def create_once(path: str | Path, content: bytes) -> None:
    """Create ``path`` with ``content`` atomically; raise CommitConflictError if it exists."""
    path = str(path)
    tmp = f"{path}.{uuid.uuid4().hex}.tmp"
    with open(tmp, "wb") as handle:
        handle.write(content)
        handle.flush()
        os.fsync(handle.fileno())
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise CommitConflictError(f"{path} already exists; an instant file is never overwritten") from None
    finally:
        os.unlink(tmp)


def write_atomic(path: str | Path, content: bytes) -> None:
    """Replace ``path`` with ``content`` atomically (for files that may be rewritten)."""
    path = str(path)
    tmp = f"{path}.{uuid.uuid4().hex}.tmp"
    with open(tmp, "wb") as handle:
        handle.write(content)
    os.replace(tmp, path)


def remove_if_exists(path: str | Path) -> bool:
    try:
        os.unlink(path)
        return True
    except FileNotFoundError:
        return False


def list_names(directory: str) -> list[str]:
    """The names of the entries directly under ``directory``; none when it does not exist."""
    try:
        return os.listdir(directory)
    except FileNotFoundError:
        return []


def child_paths(directory: str) -> list[str]:
    """The entries directly under ``directory``, as full paths, sorted."""
    return sorted(os.path.join(directory, name) for name in os.listdir(directory))


def glob_paths(pattern: str) -> list[str]:
    """The paths the glob ``pattern`` matches, sorted."""
    return sorted(glob.glob(pattern))


def content_summary(path: str) -> tuple[int, int, int]:
    """(directories, files, bytes) under ``path``, itself included, as Hadoop's ``ContentSummary`` counts."""
    if not os.path.isdir(path):
        return 0, 1, os.path.getsize(path)
    dirs, files, size = 0, 0, 0
    for root, _, names in os.walk(path):
        dirs += 1
        files += len(names)
        size += sum(os.path.getsize(os.path.join(root, n)) for n in names)
    return dirs, files, size
