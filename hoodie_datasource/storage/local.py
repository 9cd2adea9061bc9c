"""Local file system operations the table format relies on.

The commit point of a Hudi write is the creation of the completed instant file, so that file
must appear atomically and exactly once. ``create_once`` writes the content to a private
temporary name, then ``os.link``s it to the final name: ``link`` fails if the target exists
(unlike ``rename``, which may overwrite), and readers never see a partially written file.
"""

from __future__ import annotations

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
