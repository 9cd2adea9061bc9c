"""Hudi operations as save modes: ``df.write.format("hoodie").mode("upsert").save(path)``.

Why this module exists (see ``pyspark-datasource-facts.md``, Q2 and Q5):

- Spark knows only the save modes append, overwrite, ignore and error. Classic PySpark passes
  ``mode("upsert")`` straight to the JVM, which rejects it at the ``.mode()`` call with
  ``[INVALID_SAVE_MODE]``. Spark Connect accepts it at ``.mode()`` but rejects it client-side at
  ``save()`` with ``[UNSUPPORTED_OPERATION] upsert is not supported``.
- A hoodie write must not go through Spark's DataSource V2 save anyway: the write is a DAG of
  DataFrame operations run from the driver by a Python save handler.

What it touches: ``install()`` patches the classic ``pyspark.sql.readwriter.DataFrameWriter`` and,
when Connect's client dependencies import, ``pyspark.sql.connect.readwriter.DataFrameWriter``:

- ``format``, ``option``, ``options``, ``partitionBy`` and ``mode`` do what they did, and also
  remember their arguments on the Python writer object (classic keeps them only in the JVM,
  Connect only in its proto). ``mode`` accepts the Hudi operations (any case, before or after
  ``format``) and passes ``"append"`` to Spark, so Spark's own writer state stays valid.
- ``save`` calls the handler when the format is a hoodie format, and Spark's ``save`` otherwise.
- The other write methods (``parquet``, ``saveAsTable``, ``insertInto``, ...) are unchanged except
  that they refuse a Hudi operation as the mode, where they would otherwise silently append.

A Hudi operation with any other format fails with ``InvalidSaveModeError`` (``[INVALID_SAVE_MODE]``),
raised at the write call rather than at ``.mode()`` because the format may come later in the chain.
A mode that is neither Spark's nor a Hudi operation fails at ``.mode()`` (``unknown_mode_error``), as on
classic Spark, but the message lists the Hudi operations too and suggests the closest spelling.
``uninstall()`` restores the original methods.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from pyspark.errors import AnalysisException, PySparkValueError
from pyspark.sql import DataFrame

from hoodie_datasource.config.property import did_you_mean
from hoodie_datasource.config.write_operation import WriteOperation
from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.spark.writer_recording import recording_setters

HOODIE_WRITE_OPERATIONS = frozenset(op.value for op in WriteOperation)
SPARK_SAVE_MODES = ("append", "overwrite", "ignore", "error", "errorifexists", "default")
PARTITION_FIELD_OPTION = "hoodie.datasource.write.partitionpath.field"

SaveHandler = Callable[[DataFrame, dict[str, str], str | None, str | None], None]
"""``(df, options with lower-cased keys, mode lower-cased or None, path or None)``."""

_PATCHED = ("format", "option", "options", "partitionBy", "mode", "save")
_OTHER_WRITES = ("parquet", "json", "csv", "orc", "text", "xml", "jdbc", "saveAsTable", "insertInto")
_ORIGINALS = "_hoodie_save_modes_originals"  # class attribute: the unpatched methods; marks a patched class

_handler: SaveHandler | None = None
_formats: frozenset[str] = frozenset({"hoodie"})


class InvalidSaveModeError(HoodieConfigError, PySparkValueError, AnalysisException):
    """``.mode()`` got a mode that is neither Spark's nor a Hudi operation, or a Hudi operation was used as the
    save mode of a write that is not a hoodie ``save()``.

    It is also the kind of error plain PySpark raises for an unknown save mode (AnalysisException
    INVALID_SAVE_MODE on classic, PySparkValueError on Connect), so existing ``except`` clauses still catch it.

    What to do: the message lists the valid modes (with a "did you mean"); Hudi operations work only with
    ``format("hoodie")`` and ``save()``.
    """

    def getSqlState(self) -> str:
        return "42000"  # Spark's SQLSTATE for INVALID_SAVE_MODE


@dataclass
class _WriterState:
    format: str | None = None
    mode: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    partition_by: list[str] = field(default_factory=list)
    writing: str | None = None  # set while a non-save write method (parquet, saveAsTable, ...) runs


def _state(writer: Any) -> _WriterState:
    state = getattr(writer, "_hoodie_state", None)
    if state is None:
        state = writer._hoodie_state = _WriterState()
    return state


def _operation(mode: Any) -> str | None:
    """The Hudi operation ``mode`` names, or None."""
    return mode.lower() if isinstance(mode, str) and mode.lower() in HOODIE_WRITE_OPERATIONS else None


def _invalid_mode(mode: str, target: str) -> InvalidSaveModeError:
    hoodie = _format_names()
    valid = ", ".join(f'"{m}"' for m in SPARK_SAVE_MODES)
    return InvalidSaveModeError(
        message=f'The specified save mode "{mode}" is invalid for {target}: it is a Hudi write operation and only '
        f"applies to format {hoodie} with save(). Valid save modes for {target} are {valid}.",
        errorClass="INVALID_SAVE_MODE",
        messageParameters={"mode": mode, "target": target},
    )


def unknown_mode_error(mode: str) -> InvalidSaveModeError:
    """A save mode that is neither Spark's nor a Hudi operation: name both lists and the closest spelling.

    Plain Spark's message lists only its own modes, which hides the Hudi operations from a user who
    misspelt one (``mode("upsret")``)."""
    operations = sorted(HOODIE_WRITE_OPERATIONS)
    hint = did_you_mean(mode, [*SPARK_SAVE_MODES, *operations]) or "."
    return InvalidSaveModeError(
        message=f'The specified save mode "{mode}" is invalid{hint} '
        f"Spark's save modes are {', '.join(SPARK_SAVE_MODES)}; format {_format_names()} also takes the Hudi "
        f"write operations {', '.join(operations)}.",
        errorClass="INVALID_SAVE_MODE",
        messageParameters={"mode": mode},
    )


def _format_names() -> str:
    return " or ".join(f"'{name}'" for name in sorted(_formats))


def _writer_classes() -> list[tuple[type, Callable[[Any], DataFrame]]]:
    """Each DataFrameWriter class, with how to get the DataFrame it writes."""
    from pyspark.sql.readwriter import DataFrameWriter

    classes: list[tuple[type, Callable[[Any], DataFrame]]] = [(DataFrameWriter, lambda writer: writer._df)]
    try:
        from pyspark.sql.connect.dataframe import DataFrame as ConnectDataFrame
        from pyspark.sql.connect.readwriter import DataFrameWriter as ConnectWriter
    except ImportError:  # Connect's client dependencies (grpcio, ...) are optional
        return classes
    # The Connect writer holds the DataFrame's logical plan, not the DataFrame.
    classes.append((ConnectWriter, lambda writer: ConnectDataFrame(writer._df, writer._spark)))
    return classes


def _patch(cls: type, dataframe_of: Callable[[Any], DataFrame]) -> None:
    original = {name: vars(cls)[name] for name in (*_PATCHED, *_OTHER_WRITES) if name in vars(cls)}

    @functools.wraps(original["mode"])
    def mode(self, saveMode):
        state = _state(self)
        operation = _operation(saveMode)
        if operation and state.writing:
            raise _invalid_mode(operation, state.writing)
        if isinstance(saveMode, str) and not operation and saveMode.lower() not in SPARK_SAVE_MODES:
            raise unknown_mode_error(saveMode)  # classic Spark would reject it here, Connect only at save()
        original["mode"](self, "append" if operation else saveMode)
        if saveMode is not None:  # like Spark, mode(None) keeps the current mode
            state.mode = str(saveMode).lower()
        return self

    @functools.wraps(original["save"])
    def save(self, path=None, format=None, mode=None, partitionBy=None, **opts):
        self.mode(mode).options(**opts)
        if partitionBy is not None:
            self.partitionBy(partitionBy)
        if format is not None:
            self.format(format)
        state = _state(self)
        if _handler is not None and (state.format or "").lower() in _formats:
            handler_options = dict(state.options)
            if state.partition_by:
                handler_options[PARTITION_FIELD_OPTION] = ",".join(state.partition_by)
            _handler(dataframe_of(self), handler_options, state.mode, path if path is not None else
                     handler_options.get("path"))
            return None
        if state.mode in HOODIE_WRITE_OPERATIONS:
            raise _invalid_mode(state.mode, f'format "{state.format}"' if state.format else "the default format")
        return original["save"](self, path)

    def refuse_operations(name: str) -> Callable:
        write = original[name]
        target = f"{name}()" if name in ("saveAsTable", "insertInto") else f'format "{name}"'

        @functools.wraps(write)
        def guarded(self, *args, **kwargs):
            state = _state(self)
            if state.mode in HOODIE_WRITE_OPERATIONS:
                raise _invalid_mode(state.mode, target)
            state.writing = target  # a mode passed as an argument reaches mode() inside write()
            try:
                return write(self, *args, **kwargs)
            finally:
                state.writing = None

        return guarded

    patched = {**recording_setters(original, _state, lambda name: str(name).lower()), "mode": mode, "save": save}
    patched.update({name: refuse_operations(name) for name in original if name in _OTHER_WRITES})
    for name, fn in patched.items():
        setattr(cls, name, fn)
    setattr(cls, _ORIGINALS, original)


def install(save_handler: SaveHandler, format_names: Collection[str] = ("hoodie",)) -> None:
    """Route ``save()`` of ``format_names`` (any case) to ``save_handler``; idempotent.

    Calling it again replaces the handler and the format names; the classes are patched once.
    """
    global _handler, _formats
    if isinstance(format_names, str):
        format_names = (format_names,)
    _handler = save_handler
    _formats = frozenset(name.lower() for name in format_names)
    for cls, dataframe_of in _writer_classes():
        if _ORIGINALS not in vars(cls):
            _patch(cls, dataframe_of)


def uninstall() -> None:
    """Restore the original DataFrameWriter methods (for tests)."""
    global _handler, _formats
    for cls, _ in _writer_classes():
        for name, fn in vars(cls).get(_ORIGINALS, {}).items():
            setattr(cls, name, fn)
        if _ORIGINALS in vars(cls):
            delattr(cls, _ORIGINALS)
    _handler = None
    _formats = frozenset({"hoodie"})
