"""The documentation's markdown pages and the code samples in them, as the docs tests run them.

A sample is a fenced block whose info string is ``python`` or ``sql`` (other fences, ``text`` or ``bash``,
are for reading only). A page's samples run top to bottom in one namespace, so a later sample uses what
an earlier one defined. A page may say, in its front matter, ``samples: s3``: its samples then run with
the AWS settings of a moto S3 server in the environment, and a bucket ``my-bucket`` on it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import REPO

DOCS = REPO / "docs"
_FENCE = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<code>.*?)^```\s*$", re.M | re.S)
_FRONT_MATTER = re.compile(r"\A---\n(?P<body>.*?)\n---\n", re.S)


@dataclass(frozen=True)
class Sample:
    lang: str
    line: int
    code: str


def pages() -> list[Path]:
    """Every page of the site (the generator's folder is not part of it), and the README."""
    return [REPO / "README.md", *sorted(p for p in DOCS.rglob("*.md") if "gen" not in p.relative_to(DOCS).parts)]


def samples(page: Path) -> list[Sample]:
    text = page.read_text(encoding="utf-8")
    return [Sample(m["lang"], text.count("\n", 0, m.start()) + 1, m["code"])
            for m in _FENCE.finditer(text) if m["lang"] in ("python", "sql")]


def front_matter(page: Path) -> dict[str, str]:
    found = _FRONT_MATTER.match(page.read_text(encoding="utf-8"))
    if not found:
        return {}
    pairs = (line.split(":", 1) for line in found["body"].splitlines() if ":" in line)
    return {key.strip(): value.strip() for key, value in pairs}


def sql_statements(code: str) -> list[str]:
    """The statements of a SQL sample: split at a ``;`` that ends a line; ``--`` comments dropped."""
    lines = [re.sub(r"\s--.*$|^--.*$", "", line) for line in code.splitlines()]
    return [s.strip() for s in re.split(r";\s*$", "\n".join(lines), flags=re.M) if s.strip()]
