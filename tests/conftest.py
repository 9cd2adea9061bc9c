"""Shared fixtures: one session-scoped local SparkSession, and the real Hudi tables in ../shared.

The real tables are test data kept beside the repository (``../shared/hudi-tables``). Locally a
missing copy skips the tests that need it, with the reason; under ``CI=true`` it fails them, so a CI
run without its fixtures can never pass green. Every test that needs the shared data goes through
``require_shared`` (directly, or through ``unzip_table``, ``shared_zips`` or the ``shared_tables``
fixture), and every optional test dependency through ``require_module``.

The SQL tests (tests/sql) need a session with the jvm-shim's static settings; one process has one
SparkSession at a time, so ``pytest_collection_modifyitems`` runs them after every other test, and
their ``sql`` fixture stops the classic session before starting its own (tests/sql/conftest.py).
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import os
import tempfile
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_TABLES = REPO.parent / "shared" / "hudi-tables"
IN_CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
MISSING_SHARED = "<shared tables missing>"
"""The one parameter value a list of shared tables collapses to when they are missing: its test
skips (locally) or fails (CI) through ``unzip_table``, instead of the list being silently empty."""


def _missing(message: str) -> None:
    if IN_CI:
        pytest.fail(f"{message} (CI=true: test data and test dependencies must be present)", pytrace=False)
    pytest.skip(message, allow_module_level=True)


def require_shared(path: Path = SHARED_TABLES) -> Path:
    """``path`` (the shared tables, or something in them) if it exists; else skip, or fail under CI."""
    if not SHARED_TABLES.is_dir():
        _missing(f"shared Hudi tables not found at {SHARED_TABLES} (clone them beside the repository)")
    if not path.exists():
        raise FileNotFoundError(f"{path} is not in the shared Hudi tables at {SHARED_TABLES}")
    return path


def require_module(name: str):
    """``pytest.importorskip`` that fails under CI, where every test dependency is installed."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        _missing(f"module {name!r} is not installed ({exc}); pip install -e '.[test]'")


def shared_zips(keep=lambda rel: True) -> list[str]:
    """The shared tables' zips (relative paths, sorted) that ``keep`` accepts, for ``parametrize``;
    ``[MISSING_SHARED]`` when the shared tables are absent, so the test still runs once and says so."""
    if not SHARED_TABLES.is_dir():
        return [MISSING_SHARED]
    return sorted(rel for rel in (str(p.relative_to(SHARED_TABLES)) for p in SHARED_TABLES.rglob("*.zip"))
                  if keep(rel))


@pytest.fixture
def shared_tables() -> Path:
    """The shared tables' folder; ``pytestmark = pytest.mark.usefixtures("shared_tables")`` guards a module."""
    return require_shared()


# a test JVM runs many short jobs on 2 busy cores: the client compiler alone and the serial collector spend far
# less CPU than the server compiler and G1's threads (as the Hudi oracle's JVM: tests/hudi_oracle/driver.py).
# Exported: the scripts the tests run in processes of their own start their JVMs with it too.
TEST_JVM_OPTIONS = os.environ.setdefault("HOODIE_TEST_JVM_OPTIONS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")


def local_builder(app: str, java_options: str = ""):
    """The builder of the test sessions: local[2], few shuffle partitions, no UI, UTC, the driver JVM started
    with ``TEST_JVM_OPTIONS`` and ``java_options``.

    The jvm-shim's jar (when built) is on every test JVM's classpath: the JVM starts once per process,
    so the SQL tests can start their session after a classic one was stopped. So is hadoop-aws, Hadoop's
    S3A (when ``make hadoop-aws`` fetched it: ``tests/hadoop_aws.py``), on the JVM's own class path: as one
    of ``spark.jars``, a local session would copy its 690 MB AWS SDK into a temporary folder at every start.
    So is Spark's Kafka connector (when ``make kafka`` fetched it: ``tests/kafka/server.py``)."""
    from pyspark.sql import SparkSession

    from hoodie_datasource.spark.shim import JAR
    from tests.hadoop_aws import s3a_jars
    from tests.kafka.server import spark_kafka_jars

    os.environ.setdefault("PYSPARK_PYTHON", os.sys.executable)
    builder = (
        SparkSession.builder.master("local[2]")
        .appName(app)
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "2g")
        .config("spark.driver.extraJavaOptions", f"{TEST_JVM_OPTIONS} {java_options}".strip())
        # past spark.ui.retainedStages (1000) stages the status store drops finished ones, skipped stages (no
        # completion time) first: late in a test process, a test reading its own jobs' stages found them gone
        .config("spark.ui.retainedStages", "100000")
    )
    class_path = s3a_jars() + spark_kafka_jars()
    if class_path:
        builder = builder.config("spark.driver.extraClassPath", os.pathsep.join(map(str, class_path)))
    return builder.config("spark.jars", str(JAR)) if JAR.is_file() else builder


@contextlib.contextmanager
def spark_connect_port_lock():
    """Held while a subprocess runs Spark Connect in local mode (``remote("local[2]")``), which always
    serves on port 15002: ``make test`` runs pytest processes at once, and their Spark Connect tests take
    turns through this lock (a ``flock``, released when its holder exits)."""
    with open(Path(tempfile.gettempdir()) / "hoodie-tests-spark-connect-15002.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.fixture
def spark_connect_port():
    """``spark_connect_port_lock`` held for the test."""
    with spark_connect_port_lock():
        yield


@pytest.fixture(scope="session")
def spark():
    session = local_builder("hoodie-tests").getOrCreate()
    import hoodie_datasource

    hoodie_datasource.register(session)
    yield session
    session.stop()


def pytest_collection_modifyitems(session, config, items):
    """The SQL tests last (a stable sort), so each kind of SparkSession starts once per process."""
    sql_dir = REPO / "tests" / "sql"
    items.sort(key=lambda item: Path(str(item.path)).is_relative_to(sql_dir))


def unzip_table(zip_rel: str, dest: Path) -> Path:
    """Unzip a shared Hudi test table into ``dest``; return its base path."""
    source = require_shared(SHARED_TABLES / zip_rel)
    with zipfile.ZipFile(source) as archive:
        members = [m for m in archive.namelist() if not m.startswith("__MACOSX")]
        archive.extractall(dest, members)
    stem = Path(zip_rel).stem
    base = dest / stem
    if not base.exists():
        raise FileNotFoundError(f"{zip_rel} has no top folder {stem}")
    return base


def table_listing(path: str) -> set[str]:
    """Every file under a table's base path, relative to it ('/'-separated)."""
    root = Path(path)
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def assert_failed_write_left_nothing(path: str, before: set[str]) -> None:
    """After a failed write: no data file of it (base or log) and no marker (``.hoodie/.temp/<instant>``)
    is left, and every data file from ``before`` is still there. Only timeline files (its rollback)
    may be new."""
    after = table_listing(path)
    leftovers = sorted(p for p in after - before if not p.startswith(".hoodie/") or p.startswith(".hoodie/.temp/"))
    assert leftovers == [], f"the failed write left {leftovers}"
    lost = sorted(p for p in before - after if not p.startswith(".hoodie/"))
    assert lost == [], f"the failed write removed {lost}"


@pytest.fixture
def table_path(tmp_path: Path) -> str:
    return str(tmp_path / "table")


# Spark's default shuffle partitions and adaptive execution for a test: tests/spark_stages.py
# Object-store servers (moto's S3, Azurite, fake-gcs-server) and a new bucket or container per test: tests/object_stores.py
from tests.object_stores import (  # noqa: E402, F401
    azure_container,
    azure_env,
    azurite,
    fake_gcs,
    gcs_bucket,
    moto,
    moto_auth,
    no_conditional_put_proxy,
    s3_bucket,
    s3_env,
)
from tests.spark_stages import spark_defaults  # noqa: E402, F401

# A ZooKeeper server (Debian's package) for the ZooKeeper lock's tests: tests/zookeeper_server.py
from tests.zookeeper_server import zookeeper  # noqa: E402, F401
