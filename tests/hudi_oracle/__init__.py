"""Apache Hudi itself as the oracle: its Spark 3.5 bundle, run in a process of its own, reads and writes
the tables our tests compare with ours.

``make oracle`` fetches the bundles (Maven) into ``.tools/hudi-oracle/jars`` and creates the venv
``.tools/hudi-oracle/venv`` (pyspark 3.5: Hudi 0.15 needs Spark 3.5 and Scala 2.12, our venv has
pyspark 4). ``HudiOracle`` starts ``driver.py`` under that venv (once per Hudi version: conftest) and sends
it one JSON command per call; results come back as parquet that Spark 3.5 wrote, read here with pyarrow.
Without the bundle or the venv the tests skip saying so, and fail under ``CI=true``
(``tests.conftest._missing``, as for the shared tables).
"""

from __future__ import annotations

import json
import logging
import os
import select
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import REPO, _missing

log = logging.getLogger(__name__)

ORACLE_DIR = REPO / ".tools" / "hudi-oracle"
ORACLE_PYTHON = ORACLE_DIR / "venv" / "bin" / "python"
DRIVER = Path(__file__).with_name("driver.py")
# The versions the Makefile's `oracle` target fetches (HUDI_ORACLE_VERSIONS there)
HUDI_0_15 = "0.15.0"
HUDI_1 = "1.1.1"
START_TIMEOUT = 300
COMMAND_TIMEOUT = 600


class HudiOracleError(RuntimeError):
    """A command Java Hudi refused or failed; the message is the Java exception's text."""


def bundle_jar(version: str) -> Path:
    return ORACLE_DIR / "jars" / f"hudi-spark3.5-bundle_2.12-{version}.jar"


def require_oracle(version: str) -> Path:
    """The bundle jar of ``version`` if it and the oracle venv are installed; else skip (fail under CI)."""
    jar = bundle_jar(version)
    for needed in (jar, ORACLE_PYTHON):
        if not needed.exists():
            _missing(f"the Apache Hudi oracle is not installed: {needed} is missing (run `make oracle`; it needs "
                     f"mvn and Java 17)")
    return jar


class HudiOracle:
    """One Java Hudi process (``driver.py``): a local[2] Spark 3.5 session with the Hudi ``version`` bundle.

    Hudi options are passed as Hudi names them (``hoodie.datasource.query.type``, ...)."""

    def __init__(self, version: str, workdir: Path):
        self.version = version
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.log_path = workdir / "driver.log"
        self.results = 0
        jar = require_oracle(version)
        started = time.monotonic()
        env = {**os.environ, "PYSPARK_PYTHON": str(ORACLE_PYTHON), "PYSPARK_DRIVER_PYTHON": str(ORACLE_PYTHON)}
        env.pop("PYTHONPATH", None)  # our package and pyspark 4 must not leak into the Spark 3.5 process
        env.pop("SPARK_HOME", None)
        with open(self.log_path, "w") as stderr:
            self.process = subprocess.Popen(
                [str(ORACLE_PYTHON), str(DRIVER), "--bundle", str(jar), "--warehouse", str(workdir / "warehouse")],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True, env=env, cwd=workdir)
        self.info = self._answer(START_TIMEOUT)
        log.info("Hudi oracle %s (Spark %s) started in %.1f s", version, self.info["spark"],
                 time.monotonic() - started)

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.process.stdin.write(json.dumps({"cmd": "stop"}) + "\n")
                self.process.stdin.close()
                self.process.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()

    def _answer(self, timeout: float) -> dict:
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        line = self.process.stdout.readline() if ready else ""
        if not line:
            self.process.kill()
            raise RuntimeError(f"the Hudi oracle {self.version} {'died' if ready else 'timed out'}; "
                               f"its log {self.log_path} ends with:\n{self._log_tail()}")
        return json.loads(line)

    def _log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def call(self, cmd: str, **args) -> dict:
        self.process.stdin.write(json.dumps({"cmd": cmd, **args}) + "\n")
        self.process.stdin.flush()
        answer = self._answer(COMMAND_TIMEOUT)
        if not answer.pop("ok"):
            raise HudiOracleError(answer["error"])
        return answer

    def _result_dir(self) -> str:
        self.results += 1
        return str(self.workdir / f"result-{self.results}")

    def read(self, path: str, options: Mapping[str, str] = (), where: str | None = None, **more: str) -> pa.Table:
        """Java Hudi's ``spark.read.format("hudi").options(...).load(path)``, filtered by the SQL ``where``."""
        out = self._result_dir()
        answer = self.call("read", path=str(path), options={**dict(options), **more}, out=out, where=where)
        table = pq.read_table(out)
        assert table.num_rows == answer["rows"]
        return table

    def write(self, path: str, data: pa.Table, options: Mapping[str, str], mode: str = "append") -> list[str]:
        """Java Hudi's ``df.write.format("hudi").options(...).mode(mode).save(path)`` of ``data``; the
        table's completed instants after it (``<time>.<action>``, oldest first)."""
        source = self._result_dir() + ".parquet"
        pq.write_table(data, source)
        return self.call("write", path=str(path), input=source, options=dict(options), mode=mode)["instants"]

    def partition_paths(self, options: Mapping[str, str], values: list, kind: str) -> list[str]:
        """Java's ``TimestampBasedAvroKeyGenerator.getPartitionPath`` of each value (``kind``: the Java type it is
        boxed as, long, double or string); a value Java refuses gives ``"ERROR: <message>"``."""
        return self.call("partition_paths", options=dict(options), values=list(values), kind=kind)["paths"]

    def compact(self, path: str, options: Mapping[str, str] = ()) -> list[str]:
        """``CALL run_compaction(op => 'scheduleandexecute', path => ...)``; the completed instants after it."""
        return self.call("compact", path=str(path), options=dict(options))["instants"]

    def clean(self, path: str, options: Mapping[str, str] = ()) -> list[str]:
        """``CALL run_clean(table => ...)`` on the table registered at ``path``; the completed instants after it."""
        return self.call("clean", path=str(path), options=dict(options))["instants"]

    def sql(self, statement: str, result: bool = False) -> pa.Table | int:
        """Runs ``statement``; its rows as a table when ``result``, else their count."""
        if not result:
            return self.call("sql", sql=statement)["rows"]
        out = self._result_dir()
        self.call("sql", sql=statement, out=out)
        return pq.read_table(out)


def by_key(table: pa.Table) -> list[dict]:
    """The rows of ``table`` ordered by Hudi's record key, then partition path (a key may repeat
    across partitions): the order a comparison needs, since neither reader promises one."""
    order = [("_hoodie_record_key", "ascending"), ("_hoodie_partition_path", "ascending")]
    return table.sort_by(order).to_pylist()


def _named_lists(data_type: pa.DataType) -> pa.DataType:
    """``data_type`` with every list's element field named ``element``: the name is the parquet writer's
    (Spark writes ``element``, Hudi's parquet-avro writer ``array``), not part of what a reader returns;
    the element's type and nullability stay."""
    if pa.types.is_list(data_type):
        item = data_type.value_field
        return pa.list_(pa.field("element", _named_lists(item.type), item.nullable))
    if pa.types.is_struct(data_type):
        return pa.struct([f.with_type(_named_lists(f.type)) for f in data_type])
    if pa.types.is_map(data_type):
        return pa.map_(_named_lists(data_type.key_type), data_type.item_field.with_type(_named_lists(data_type.item_type)))
    return data_type


def assert_same_table(java: pa.Table, ours: pa.Table) -> None:
    """The same columns (names and Arrow types) and the same rows, meta columns included; the rows are
    compared before the types, so a failure on the types says the values were equal. The columns'
    order is not compared: Hudi's Spark reads put the partition columns last (see
    test_hudi_reads_ours.test_column_order_as_hudi)."""
    assert sorted(ours.schema.names) == sorted(java.schema.names)
    ours_types, java_types = ({f.name: str(_named_lists(f.type)) for f in t.schema} for t in (ours, java))
    differing = {name: (ours_types[name], java_types[name]) for name in ours_types if ours_types[name] != java_types[name]}
    assert by_key(ours) == by_key(java)
    assert not differing, f"column types (ours, Java's) differ: {differing}"


def cdc_changes(table: pa.Table) -> list[tuple]:
    """A CDC query's rows (op, ts_ms, before, after), the images parsed from their JSON (the same change
    may be spelled with another key order or number format) and without the ``_hoodie_*`` meta fields:
    Java Hudi puts them in an image it reads from a data file (an insert's after image, a MOR image, an
    0.15 COW delete's before image) but not in one from a CDC log block; we never do."""
    def image(text):
        parsed = None if text is None else json.loads(text)
        return None if parsed is None else sorted((k, v) for k, v in parsed.items() if not k.startswith("_hoodie_"))
    return sorted((r["op"], r["ts_ms"], image(r["before"]), image(r["after"])) for r in table.to_pylist())


def skip_hudi_1_mor_cdc(hudi: HudiOracle, table_type: str) -> None:
    if hudi.version != HUDI_0_15 and table_type == "MERGE_ON_READ":
        pytest.skip(f"Hudi {hudi.version} fails a CDC query on a version-6 MOR table, also on one it wrote itself "
                    "(HoodieException: Fail to parse the base file and log files from DeltaCommit)")
