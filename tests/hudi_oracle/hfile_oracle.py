"""Java Hudi's own HFile classes as the oracle of ours: ``HFileDump.java`` (Hudi's native reader,
``org.apache.hudi.io.hfile.HFileReaderImpl``, the metadata table's reader in 0.15 and 1.x) and
``HBaseHFile.java`` (the HBase 2.4 reader and writer Hudi 0.15 carries shaded and writes its metadata table
with), each run as a single-file Java program on a Hudi bundle from ``make oracle``, in a process that
answers one command a line (the protocol is in each program's header). Bytes cross as base64."""

from __future__ import annotations

import base64
import shutil
import subprocess
from pathlib import Path

from tests.conftest import _missing
from tests.hudi_oracle import ORACLE_DIR, require_oracle

HERE = Path(__file__).parent
INFO_NAMES = (b"hfile.LASTKEY", b"hfile.AVG_KEY_LEN", b"hfile.AVG_VALUE_LEN", b"KEY_VALUE_VERSION",
              b"MAX_MEMSTORE_TS_KEY", b"schema", b"minRecordKey", b"maxRecordKey", b"bloomFilterTypeCode")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _bytes(text: str) -> bytes | None:
    return None if text == "-" else base64.b64decode(text)


class JavaHFiles:
    """One JVM running ``program`` (``HFileDump`` or ``HBaseHFile``) on the Hudi ``version`` bundle."""

    def __init__(self, program: str, version: str, log: Path) -> None:
        self.version = version
        jar = require_oracle(version)
        spark_jars = sorted(ORACLE_DIR.glob("venv/lib/python3*/site-packages/pyspark/jars"))
        if not spark_jars or shutil.which("javac") is None:
            _missing("the HFile oracle needs the oracle venv's Spark jars (make oracle) and a JDK (javac) to run a "
                     "single-file Java program")
        self.log = open(log, "w")  # noqa: SIM115 - open for the process's lifetime
        self.process = subprocess.Popen(
            ["java", "-cp", f"{jar}:{spark_jars[0]}/*", str(HERE / f"{program}.java")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True, encoding="utf-8")
        ready = self.process.stdout.readline().strip()
        assert ready == "ready", f"{program} did not start ({ready!r}); see {log}"

    def ask(self, *words: str) -> list[str]:
        """The lines the program answers to one command, up to its ``end``."""
        self.process.stdin.write(" ".join(words) + "\n")
        self.process.stdin.flush()
        lines = []
        while True:
            line = self.process.stdout.readline()
            assert line, f"the Java HFile oracle died; see {self.log.name}"
            line = line.rstrip("\n")
            if line.startswith("error "):
                raise RuntimeError(line[len("error "):])
            if line == "end":
                return lines
            lines.append(line)

    def cells(self, path: Path) -> list[tuple[bytes, bytes]]:
        """Every cell the reader gives, in order (checked against the count it reports)."""
        count, *rows = self.ask("cells", str(path))
        cells = [tuple(base64.b64decode(part) for part in row.split(" ")) for row in rows if " " in row
                 and not row.startswith(("info ", "checksumFailures "))]
        assert count == f"count {len(cells)}"
        return cells

    def hbase_details(self, path: Path) -> tuple[dict[bytes, bytes], int]:
        """HBaseHFile's file info and how many blocks failed HBase's checksum verification."""
        lines = self.ask("cells", str(path))
        info = {base64.b64decode(k): base64.b64decode(v) for _, k, v in
                (line.split(" ") for line in lines if line.startswith("info "))}
        failures = next(int(line.split(" ")[1]) for line in lines if line.startswith("checksumFailures "))
        return info, failures

    def info(self, path: Path, names=INFO_NAMES) -> dict[bytes, bytes]:
        """The file info entries among ``names`` that Hudi's reader finds."""
        found = (line.split(" ") for line in self.ask("info", str(path), *map(_b64, names)))
        return {base64.b64decode(name): value for name, text in found if (value := _bytes(text)) is not None}

    def meta(self, path: Path, name: str) -> bytes | None:
        (text,) = self.ask("meta", str(path), name)
        return _bytes(text)

    def seek(self, path: Path, keys: list[bytes]) -> list[tuple[int, bytes | None]]:
        """Hudi's ``seekTo`` of each key (ascending): its result code (0: found) and the value found."""
        answers = (line.split(" ") for line in self.ask("seek", str(path), *map(_b64, keys)))
        return [(int(code), _bytes(value)) for code, value in answers]

    def bloom(self, path: Path, keys: list[bytes]) -> list[bool]:
        """The file's bloom filter's ``mightContain`` of each key, as Hudi deserializes it."""
        return [line == "1" for line in self.ask("bloom", str(path), *map(_b64, keys))]

    def write(self, path: Path, cells: list[tuple[bytes, bytes]], block_size: int, codec: str,
              index_chunk: int = 128 * 1024) -> None:
        """An HFile of ``cells`` written by HBase as Hudi 0.15 writes one (``HBaseHFile`` only)."""
        source = path.with_suffix(".cells")
        source.write_text("".join(f"{_b64(k)} {_b64(v)}\n" for k, v in cells))
        self.ask("write", str(path), str(block_size), codec, str(index_chunk), str(source))

    def close(self) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()
        self.log.close()
