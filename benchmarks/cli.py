"""The command line of the benchmarks."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable, Collection
from pathlib import Path

from benchmarks.spark_session import DRIVER_MEMORY
from benchmarks.workload import VARIANTS

RESULTS = Path(__file__).parent / "results"


def _sizes(text: str) -> list[int]:
    sizes = sorted({int(part.replace("_", "")) for part in text.split(",") if part.strip()})
    if not sizes or sizes[0] < 1000:
        raise argparse.ArgumentTypeError("--rows takes sizes of at least 1000 rows, comma separated")
    return sizes


def _variants(choices: Collection[str]) -> Callable[[str], list[str]]:
    def parse(text: str) -> list[str]:
        names = [part.strip() for part in text.split(",") if part.strip()]
        unknown = [n for n in names if n not in choices]
        if unknown or not names:
            raise argparse.ArgumentTypeError(f"variants are {', '.join(choices)}; got {text!r}")
        return names
    return parse


def add_driver_memory(parser: argparse.ArgumentParser, default: str = DRIVER_MEMORY, why: str = "") -> None:
    """``--driver-memory``: the ``spark.driver.memory`` of the benchmark's Spark session (local mode: its heap)."""
    parser.add_argument("--driver-memory", default=default,
                        help=f"spark.driver.memory of each Spark session (default {default}){why}")


def parser(description: str) -> argparse.ArgumentParser:
    """The arguments every benchmark takes: sizes, runs and the results folder."""
    found = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    found.add_argument("--rows", type=_sizes, default=[1_000_000],
                       help="base table sizes, comma separated (e.g. 1000000,5000000,20000000); default 1000000")
    found.add_argument("--runs", type=int, default=3, help="measured runs per figure; the median is reported")
    found.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    return found


def parse_run(description: str, argv: list[str] | None = None, variants: Collection[str] = tuple(VARIANTS),
              name: str | None = None) -> argparse.Namespace:
    """The arguments of ``run.py`` (and of ``run_hudi.py``: its ``variants`` and default ``name``)."""
    found = parser(description)
    found.add_argument("--warmup", type=int, default=1, help="rounds run first and not counted (default 1)")
    found.add_argument("--variants", type=_variants(variants), default=list(variants),
                       help=f"batch variants to write, comma separated (default {','.join(variants)})")
    found.add_argument("--name", default=name,
                       help=f"results name: <out>/<name>.md and its charts (default {name or 'bench_<rows>'})")
    found.add_argument("--work", type=Path, help="folder for the scratch tables (default: the system's temporary one)")
    found.add_argument("--note", default="", help="a remark printed in the results (e.g. what else ran on the machine)")
    add_driver_memory(found)
    args = found.parse_args(argv)
    if args.runs < 1 or args.warmup < 0:
        found.error("--runs must be at least 1 and --warmup at least 0")
    if args.name is None:
        args.name = "bench_" + "_".join(str(rows) for rows in args.rows)
    return args


def command_line(script: str, argv: list[str]) -> str:
    """The command line that reproduces a run of ``script`` (the note is printed on its own)."""
    shown, skip = [], False
    for arg in argv:
        if not skip and not arg.startswith("--note"):
            shown.append(arg)
        skip = arg == "--note"
    return (f"python benchmarks/{script} " + shlex.join(shown)).rstrip()


def publish(text: str, out: Path | None) -> None:
    """A benchmark's results: written to ``out`` (``--out``) when given, else printed."""
    if out:
        out.write_text(text)
    else:
        print(text)  # noqa: T201 - the results are the output
