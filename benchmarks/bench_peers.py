"""The same upsert batch on the peers: delta-rs MERGE and pyiceberg upsert (SQLite catalog).

    python benchmarks/bench_peers.py --rows 1000000 --runs 3

Each run starts from a fresh copy of the loaded table (copy time not counted). Writes
``benchmarks/results/peers_<rows>.md``. Peers are benchmark-only (``pip install .[bench]``).
"""

from __future__ import annotations

import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa  # noqa: E402

from benchmarks.workload import base_table, size_arguments, upsert_batch  # noqa: E402


def delta_merge(base: pa.Table, batch: pa.Table, work: Path, runs: int) -> list[float]:
    from deltalake import DeltaTable, write_deltalake

    loaded = work / "delta-loaded"
    write_deltalake(str(loaded), base, partition_by=["dt"])
    times = []
    for i in range(runs):
        target = work / f"delta-{i}"
        shutil.copytree(loaded, target)
        started = time.perf_counter()
        (DeltaTable(str(target)).merge(source=batch, predicate="t.uuid = s.uuid AND t.dt = s.dt",
                                       source_alias="s", target_alias="t")
         .when_matched_update_all().when_not_matched_insert_all().execute())
        times.append(time.perf_counter() - started)
        shutil.rmtree(target)
    return times


def iceberg_upsert(base: pa.Table, batch: pa.Table, work: Path, runs: int) -> list[float]:
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.transforms import IdentityTransform

    times = []
    for i in range(runs):
        warehouse = work / f"iceberg-{i}"
        warehouse.mkdir()
        catalog = SqlCatalog("bench", uri=f"sqlite:///{warehouse}/catalog.db", warehouse=f"file://{warehouse}")
        catalog.create_namespace("b")
        table = catalog.create_table("b.trips", schema=base.schema)
        field_id = table.schema().find_field("dt").field_id
        spec = PartitionSpec(PartitionField(source_id=field_id, field_id=1000, transform=IdentityTransform(),
                                            name="dt"))
        catalog.drop_table("b.trips")
        table = catalog.create_table("b.trips", schema=table.schema(), partition_spec=spec)
        table.append(base)
        started = time.perf_counter()
        table.upsert(batch, join_cols=["uuid"])
        times.append(time.perf_counter() - started)
        shutil.rmtree(warehouse)
    return times


def main() -> None:
    args = size_arguments(__doc__)
    base, batch = base_table(args.rows), upsert_batch(args.rows)
    work = Path(tempfile.mkdtemp(prefix="hoodie-peers-"))
    results = {}
    try:
        results["delta-rs MERGE"] = delta_merge(base, batch, work, args.runs)
        results["pyiceberg upsert (SQLite catalog)"] = iceberg_upsert(base, batch, work, args.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    import deltalake
    import pyiceberg

    lines = [f"# Peers: the same {batch.num_rows:,}-row upsert batch into {args.rows:,} rows", "",
             f"`python benchmarks/bench_peers.py --rows {args.rows} --runs {args.runs}`; "
             f"deltalake {deltalake.__version__}, pyiceberg {pyiceberg.__version__}, "
             f"{platform.machine()}, Python {platform.python_version()}", "",
             "| peer | median s | runs |", "|---|---|---|"]
    lines += [f"| {name} | {statistics.median(t):.2f} | {', '.join(f'{x:.2f}' for x in t)} |"
              for name, t in results.items()]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"peers_{args.rows}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
