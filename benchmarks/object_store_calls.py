"""What one storage call costs: obstore (our object-store backend) against pyarrow's S3FileSystem on the
same loopback S3 server (moto), with the local backend as the floor.

    python benchmarks/object_store_calls.py            # writes benchmarks/results/object_store_calls.md

The calls a table operation is made of: HEAD, a small GET (an instant file), a small PUT and a
conditional create (instant files), a LIST of 100 objects (a partition), a whole 100k-row parquet file
read and parsed (a base file), and a parquet footer read (the bloom index). Median of N calls each.
moto is a Python server, so absolute numbers are mostly its own latency; the comparison is what matters.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tests.conftest  # noqa: E402, F401 - first: tests.object_stores imports from it
from hoodie_datasource.storage.parquet import read_parquet, read_parquet_metadata  # noqa: E402
from hoodie_datasource.storage.registry import open_storage  # noqa: E402
from tests.object_stores import REGION, S3_KEY, S3_SECRET, new_s3_bucket, start_moto  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "object_store_calls.md"
N = 30


def timed(call, n: int = N) -> float:
    """Median milliseconds of ``n`` calls."""
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def parquet_bytes() -> bytes:
    table = pa.table({"key": [f"key-{i:08d}" for i in range(100_000)], "value": list(range(100_000))})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def measure(storage, arrow_fs, arrow_root: str, data: bytes) -> dict[str, float]:
    storage.write("small", b"x" * 1024)
    storage.write("base.parquet", data)
    for i in range(100):
        storage.write(f"part/{i:03d}", b"x")
    ours = {
        "HEAD": timed(lambda: storage.stat("small")),
        "GET 1 KB": timed(lambda: storage.read("small")),
        "PUT 1 KB": timed(lambda: storage.write("small", b"y" * 1024)),
        "conditional create 1 KB": timed(lambda: storage.create_once(f"c/{uuid.uuid4().hex}", b"z" * 1024)),
        "LIST 100 objects": timed(lambda: storage.list_dir("part")),
        "parquet 100k rows, whole file": timed(lambda: read_parquet(storage, "base.parquet"), 10),
        "parquet footer": timed(lambda: read_parquet_metadata(storage, "base.parquet")),
    }
    if arrow_fs is None:
        return {name: (ms, None) for name, ms in ours.items()}

    def put():
        with arrow_fs.open_output_stream(f"{arrow_root}/small") as out:
            out.write(b"y" * 1024)

    try:
        put_ms = timed(put)
    except OSError:  # pyarrow writes through a multipart upload, which moto fails to complete
        put_ms = "failed (moto rejects its CompleteMultipartUpload)"
    theirs = {
        "HEAD": timed(lambda: arrow_fs.get_file_info(f"{arrow_root}/small")),
        "GET 1 KB": timed(lambda: arrow_fs.open_input_stream(f"{arrow_root}/small").read()),
        "PUT 1 KB": put_ms,
        "conditional create 1 KB": None,
        "LIST 100 objects": timed(lambda: arrow_fs.get_file_info(pafs.FileSelector(f"{arrow_root}/part"))),
        "parquet 100k rows, whole file": timed(lambda: pq.read_table(f"{arrow_root}/base.parquet",
                                                                     filesystem=arrow_fs), 10),
        "parquet footer": timed(lambda: pq.read_metadata(arrow_fs.open_input_file(f"{arrow_root}/base.parquet"))),
    }
    return {name: (ms, theirs[name]) for name, ms in ours.items()}


def main() -> None:
    data = parquet_bytes()
    with tempfile.TemporaryDirectory() as work:
        server = start_moto(Path(work))
        try:
            bucket = new_s3_bucket(server)
            s3 = open_storage(bucket.uri("calls"), bucket.options)
            arrow = pafs.S3FileSystem(access_key=S3_KEY, secret_key=S3_SECRET, region=REGION,
                                      endpoint_override=server.url, background_writes=False)
            remote = measure(s3, arrow, f"{bucket.name}/calls", data)
        finally:
            server.stop()
        local = measure(open_storage(str(Path(work) / "local")), None, "", data)
    lines = ["# One storage call: obstore vs pyarrow.fs (S3 on loopback moto) and local files", "",
             "`python benchmarks/object_store_calls.py`; median ms of 30 calls (10 for whole-file parquet).", "",
             "| call | obstore (ours) | pyarrow S3FileSystem | local backend |", "|---|---:|---:|---:|"]
    for name, (ours, theirs) in remote.items():
        shown = "n/a (no conditional put)" if theirs is None else theirs if isinstance(theirs, str) else f"{theirs:.2f}"
        lines.append(f"| {name} | {ours:.2f} | {shown} | {local[name][0]:.3f} |")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
