"""The HFiles inside the shared Hudi tables, for the HFile tests: every ``.hfile`` base file of a metadata
table, and every HFILE_DATA block of its log files written out as a file of its own (a block's content is a
whole HFile). The tables with a metadata table are Hudi 1.0's (through HBase 2.4, as Hudi 0.14/0.15 write
them) and Hudi 1.1's (Hudi's own writer); the version-6 tables have none."""

from __future__ import annotations

import zipfile
from pathlib import Path

from hoodie_datasource.log.log_format import BlockType, read_log_blocks
from hoodie_datasource.storage.local import LocalStorage
from tests.conftest import SHARED_TABLES, require_shared, shared_zips, unzip_table


def zips_with_hfiles() -> list[str]:
    """The shared tables whose zip holds an HFile (all of version 8 or 9)."""
    if not SHARED_TABLES.is_dir():
        return shared_zips()
    return [rel for rel in shared_zips() if any(name.endswith(".hfile") and not name.startswith("__MACOSX")
                                                for name in zipfile.ZipFile(SHARED_TABLES / rel).namelist())]


def shared_hfiles(dest: Path) -> list[Path]:
    """Every shared table's HFiles, unzipped under ``dest``: base files and HFILE_DATA blocks (as
    ``<log file>.block<n>.hfile``), sorted."""
    require_shared()
    found: list[Path] = []
    for rel in zips_with_hfiles():
        base = unzip_table(rel, dest / Path(rel).parent)  # two zips share a name (cow/, mor/)
        storage = LocalStorage(str(base))
        metadata = base / ".hoodie" / "metadata"
        found += metadata.rglob("*.hfile")
        for log in sorted(metadata.rglob(".*.log.*")):
            for number, block in enumerate(read_log_blocks(storage, str(log.relative_to(base)))):
                if block.block_type == BlockType.HFILE_DATA:
                    path = log.with_name(f"{log.name}.block{number}.hfile")
                    path.write_bytes(block.content)
                    found.append(path)
    return sorted(found)
