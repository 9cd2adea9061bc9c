"""``python -m docs.gen``: write the generated pages of the documentation; ``--check`` only compares them
with what is committed and fails, naming the stale files, when they differ."""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from pathlib import Path

from .diagrams import render_all
from .reference import errors_page, options_page, procedures_page

DOCS = Path(__file__).resolve().parents[1]
logger = logging.getLogger("docs.gen")


def generated() -> dict[Path, str]:
    """Every generated file, by its path under docs/, with its content."""
    with tempfile.TemporaryDirectory(prefix="hoodie-docs-gen-") as work:
        diagrams = render_all(Path(work))
    return {
        DOCS / "reference" / "options.md": options_page(),
        DOCS / "reference" / "errors.md": errors_page(),
        DOCS / "reference" / "procedures.md": procedures_page(),
        **{DOCS / "concepts" / "img" / name: svg for name, svg in diagrams.items()},
    }


def stale(files: dict[Path, str]) -> list[Path]:
    return [path for path, text in files.items() if not path.is_file() or path.read_text(encoding="utf-8") != text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m docs.gen", description=__doc__)
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 when a page is stale")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("hoodie_datasource").setLevel(logging.WARNING)  # the diagrams' tables log every commit
    files = generated()
    outdated = stale(files)
    if args.check:
        for path in outdated:
            logger.error("stale: %s (run `make docs`)", path.relative_to(DOCS.parent))
        return 1 if outdated else 0
    for path in outdated:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(files[path], encoding="utf-8")
        logger.info("wrote %s", path.relative_to(DOCS.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
