"""Imports point down the layers: every module of the package imports only from its own layer or
the ones below, and no two modules import each other, even lazily inside a function (the package's
structure, checked rather than described; no JVM).

Layers, bottom first: shared definitions (errors, the Avro/Arrow schema mapping, option parsing),
storage, the table's config (``hoodie.properties``), the timeline, the table (its files, file-system
view, schema and the ``Table`` handle), resolved configs, log and HFile formats, the metadata table, the
file-slice merge (base file and logs), the index, write primitives, reads, table services, write clients, the
``HoodieTable`` facade and SQL procedures, the ``hoodie`` command line, Spark, the ingestion utility
(``streamer``), and the package's front door."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

PACKAGE = REPO / "hoodie_datasource"
# module-name prefixes, bottom layer first; a module takes the layer of its longest matching prefix
LAYERS: list[tuple[str, ...]] = [
    ("errors", "dependencies", "schema", "config.property", "fault_points"),
    ("storage",),
    # what a table is (hoodie.properties, as hudi-rs's config/table.rs): it says how the timeline is laid out
    ("config.table_config", "config.properties_file"),
    # the log files' framing and Avro record codec too: timeline layout 1 archives into a log file
    ("timeline", "log.log_format", "log.avro_codec"),
    ("table",),  # the table's files and the handle holding its config and timeline
    ("config",),
    ("log", "hfile"),
    ("metadata",),  # Apache Hudi's metadata table: its records, kept in HFiles and HFile log blocks
    # a file slice read as one, base file and logs merged: what reads, compaction and tagging share
    ("file_group",),
    ("index",),
    ("write",),
    ("read",),
    ("services",),
    ("transaction",),
    ("client",),
    ("hoodie_table", "procedures"),
    ("cli",),  # the ``hoodie`` command line: over the facade and the procedures, below Spark (it needs none)
    ("sharing",),  # the Delta Sharing server: reads tables as a client of the layers below, no Spark
    ("spark",),
    ("streamer",),  # the ingestion utility, a Spark application
    ("", "spark.demo"),  # hoodie_datasource/__init__.py, and the demo, which uses it as a user would
]


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _layer(module: str) -> int:
    best, length = None, -1
    for rank, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".") or prefix == "") and len(prefix) > length:
                best, length = rank, len(prefix)
    assert best is not None, module
    return best


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules ``path`` imports, at the top or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "hoodie_datasource":
            base = node.module.removeprefix("hoodie_datasource").lstrip(".")
            names = [f"{base}.{a.name}".lstrip(".") if f"{base}.{a.name}".lstrip(".") in modules else base
                     for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name.removeprefix("hoodie_datasource").lstrip(".") for a in node.names
                     if a.name.split(".")[0] == "hoodie_datasource"]
        found.update(n for n in names if n in modules)
    return found


def test_imports_point_down_the_layers() -> None:
    modules = _modules()
    upward = [f"{m} ({_layer(m)}) imports {t} ({_layer(t)})"
              for m, p in sorted(modules.items()) for t in sorted(_imports(p, modules)) if _layer(t) > _layer(m)]
    assert upward == []


def test_no_two_modules_import_each_other() -> None:
    modules = _modules()
    graph = {m: _imports(p, modules) - {m} for m, p in modules.items()}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(module: str, stack: list[str]) -> None:
        state[module] = 1
        stack.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                cycles.append(stack[stack.index(target):] + [target])
            elif target not in state:
                visit(target, stack)
        stack.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [])
    assert cycles == []


def test_the_layers_name_every_module() -> None:
    """A module no prefix names would fall through to the top layer, where anything may import it."""
    assert {m for m in _modules() if _layer(m) == len(LAYERS) - 1} == set(LAYERS[-1])
