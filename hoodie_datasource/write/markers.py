"""Marker files: every data file a write is about to create is recorded first.

``.hoodie/.temp/<instant>/<partition>/<file>.marker.<CREATE|MERGE|APPEND>`` (Hudi's direct
markers). A rollback deletes exactly the marked files of a failed instant, and a commit deletes
marked files that are not in its write stats (left by failed or retried task attempts).
"""

from __future__ import annotations

import os
import shutil

from hoodie_datasource.table.table_config import METAFOLDER

MARKER_SUFFIX = ".marker."


def marker_dir(base_path: str, instant: str) -> str:
    return os.path.join(base_path, METAFOLDER, ".temp", instant)


def create_marker(base_path: str, instant: str, partition: str, file_name: str, io_type: str) -> None:
    directory = os.path.join(marker_dir(base_path, instant), partition) if partition else marker_dir(
        base_path, instant
    )
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, f"{file_name}{MARKER_SUFFIX}{io_type}"), "wb"):
        pass


def marked_files(base_path: str, instant: str) -> list[str]:
    """Relative paths of the data files marked for ``instant``."""
    root = marker_dir(base_path, instant)
    found = []
    for directory, _, files in os.walk(root):
        rel_dir = os.path.relpath(directory, root)
        for name in files:
            if MARKER_SUFFIX in name:
                data_name = name.split(MARKER_SUFFIX, 1)[0]
                found.append(data_name if rel_dir == "." else f"{rel_dir.replace(os.sep, '/')}/{data_name}")
    return sorted(found)


def delete_marker_dir(base_path: str, instant: str) -> None:
    shutil.rmtree(marker_dir(base_path, instant), ignore_errors=True)
