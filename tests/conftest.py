"""Shared fixtures: one session-scoped local SparkSession, and the real Hudi tables in ../shared."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_TABLES = REPO.parent / "shared" / "hudi-tables"


def local_builder(app: str):
    """The builder of the test sessions: local[2], few shuffle partitions, no UI, UTC."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", os.sys.executable)
    return (
        SparkSession.builder.master("local[2]")
        .appName(app)
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "2g")
    )


@pytest.fixture(scope="session")
def spark():
    session = local_builder("hoodie-tests").getOrCreate()
    import hoodie_datasource

    hoodie_datasource.register(session)
    yield session
    session.stop()


def unzip_table(zip_rel: str, dest: Path) -> Path:
    """Unzip a shared Hudi test table into ``dest``; return its base path."""
    source = SHARED_TABLES / zip_rel
    if not source.exists():
        pytest.skip(f"shared Hudi tables not found at {SHARED_TABLES}")
    with zipfile.ZipFile(source) as archive:
        members = [m for m in archive.namelist() if not m.startswith("__MACOSX")]
        archive.extractall(dest, members)
    stem = Path(zip_rel).stem
    base = dest / stem
    if not base.exists():
        raise FileNotFoundError(f"{zip_rel} has no top folder {stem}")
    return base


@pytest.fixture
def table_path(tmp_path: Path) -> str:
    return str(tmp_path / "table")


