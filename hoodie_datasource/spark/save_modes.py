"""Hudi operations as save modes: ``df.write.format("hoodie").mode("upsert").save(path)``.

Why this module exists: Spark only knows the save modes append/overwrite/ignore/error. Classic
PySpark passes ``mode("upsert")`` to the JVM, which rejects it at once (INVALID_SAVE_MODE);
Spark Connect rejects it client-side when the plan is built. And a DataSource V2 save could not
run the write DAG anyway: the source gets the input as the user partitioned it, with no session.

What it touches: ``format``, ``option``, ``options``, ``mode`` and ``save`` of the classic and the
Connect ``DataFrameWriter``. Each call also records its argument on the Python object; ``mode``
accepts the Hudi operation names (recording them, and passing "append" to Spark so Spark's own
state stays valid); ``save`` calls the installed handler when the format is ``hoodie``. Every
other format behaves exactly as before.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from hoodie_datasource.errors import HoodieConfigError

HOODIE_WRITE_OPERATIONS = frozenset(
    {"upsert", "insert", "bulk_insert", "delete", "insert_overwrite", "insert_overwrite_table", "delete_partition"}
)
SaveHandler = Callable[[Any, dict, "str | None", "str | None"], None]

_PATCHED = ("format", "option", "options", "mode", "save")
_originals: dict[type, dict[str, Callable]] = {}
_handler: SaveHandler | None = None
_formats: frozenset[str] = frozenset({"hoodie"})


def _writer_classes() -> list[type]:
    from pyspark.sql.readwriter import DataFrameWriter

    classes: list[type] = [DataFrameWriter]
    try:
        from pyspark.sql.connect.readwriter import DataFrameWriter as ConnectWriter
    except Exception:  # Connect's client dependencies (grpc, ...) are optional
        return classes
    classes.append(ConnectWriter)
    return classes


def _state(writer: Any) -> dict[str, Any]:
    state = writer.__dict__.get("_hoodie_state")
    if state is None:
        state = {"format": None, "mode": None, "options": {}}
        writer.__dict__["_hoodie_state"] = state
    return state


def _dataframe(writer: Any) -> Any:
    """The DataFrame being written: classic writers hold it, Connect writers hold its plan."""
    from pyspark.sql import DataFrame

    if isinstance(writer._df, DataFrame):
        return writer._df
    from pyspark.sql.connect.dataframe import DataFrame as ConnectDataFrame

    return ConnectDataFrame(writer._df, writer._spark)


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _patch(cls: type) -> None:
    original = {name: getattr(cls, name) for name in _PATCHED}
    _originals[cls] = original

    def format(self, source):
        _state(self)["format"] = source
        original["format"](self, source)
        return self

    def option(self, key, value):
        _state(self)["options"][str(key).lower()] = _text(value)
        original["option"](self, key, value)
        return self

    def options(self, **opts):
        for key, value in opts.items():
            _state(self)["options"][str(key).lower()] = _text(value)
        original["options"](self, **opts)
        return self

    def mode(self, saveMode):
        lowered = saveMode.lower() if isinstance(saveMode, str) else None
        _state(self)["mode"] = lowered
        original["mode"](self, "append" if lowered in HOODIE_WRITE_OPERATIONS else saveMode)
        return self

    def save(self, path=None, format=None, mode=None, partitionBy=None, **opts):
        if format is not None:
            self.format(format)
        if mode is not None:
            self.mode(mode)
        if opts:
            self.options(**opts)
        state = _state(self)
        fmt = (state["format"] or "").lower()
        if fmt in _formats and _handler is not None:
            options = dict(state["options"])
            if partitionBy:
                fields = [partitionBy] if isinstance(partitionBy, str) else list(partitionBy)
                options["hoodie.datasource.write.partitionpath.field"] = ",".join(fields)
            return _handler(_dataframe(self), options, state["mode"], path)
        if state["mode"] in HOODIE_WRITE_OPERATIONS:
            raise HoodieConfigError(
                f"Save mode {state['mode']!r} is a Hudi write operation and only applies to format 'hoodie' "
                f"(format is {state['format']!r}); valid save modes here: append, overwrite, ignore, error"
            )
        return original["save"](self, path, partitionBy=partitionBy)

    for name, fn in (("format", format), ("option", option), ("options", options), ("mode", mode), ("save", save)):
        fn.__doc__ = original[name].__doc__
        setattr(cls, name, fn)


def install(save_handler: SaveHandler, format_names: Collection[str] = ("hoodie",)) -> None:
    """Route saves of ``format_names`` to ``save_handler`` (idempotent)."""
    global _handler, _formats
    _handler = save_handler
    _formats = frozenset(f.lower() for f in format_names)
    for cls in _writer_classes():
        if cls not in _originals:
            _patch(cls)


def uninstall() -> None:
    global _handler
    for cls, original in _originals.items():
        for name, fn in original.items():
            setattr(cls, name, fn)
    _originals.clear()
    _handler = None
