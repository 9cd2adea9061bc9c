"""``df.writeStream.format("hoodie")...start(path)``: the streaming query runs ``spark.stream_sink``.

``install()`` (called by ``register()``) patches the classic ``pyspark.sql.streaming.DataStreamWriter``
and, when Connect's client imports, ``pyspark.sql.connect.streaming.readwriter.DataStreamWriter``:
``format``, ``option``, ``options``, ``partitionBy``, ``outputMode`` and ``queryName`` do what they did
and also remember their arguments on the Python object (classic keeps them only in the JVM). ``start``
of a hoodie format resolves and checks the write options at once (a bad option fails at ``start()``, not
in the first micro-batch), then starts the query with ``foreachBatch(HoodieStreamSink(...))`` in place
of the format; trigger, checkpoint location and query name stay Spark's. Other formats are untouched.

The sink's options: any batch write option, the operation defaulting to ``upsert``; ``partitionBy(...)``
sets the partition path field; ``outputMode("complete")`` replaces the table with each batch
(``insert_overwrite_table``); ``append`` and ``update`` run the operation. The checkpoint location
(option ``checkpointLocation``, or ``spark.sql.streaming.checkpointLocation`` with the query name, as
Spark resolves it) is the query's identity in the commits it writes.
"""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import SparkSession

from hoodie_datasource.config import keys as k
from hoodie_datasource.config.streaming_config import resolve_streaming_config
from hoodie_datasource.config.table_config import load_table_config, table_exists
from hoodie_datasource.config.write_config import resolve_write_config
from hoodie_datasource.config.write_operation import WriteOperation
from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.spark.storage_keys import session_storage_keys
from hoodie_datasource.spark.stream_sink import UNNAMED_QUERY, HoodieStreamSink
from hoodie_datasource.spark.writer_recording import recording_setters
from hoodie_datasource.storage.registry import open_storage

CHECKPOINT_OPTION = "checkpointlocation"
_PATCHED = ("format", "option", "options", "partitionBy", "outputMode", "queryName", "start")
_ORIGINALS = "_hoodie_stream_originals"  # class attribute: the unpatched methods; marks a patched class

FORMAT = "hoodie"


@dataclass
class _StreamState:
    format: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    partition_by: list[str] = field(default_factory=list)
    output_mode: str | None = None
    query_name: str | None = None


def _state(writer: Any) -> _StreamState:
    state = getattr(writer, "_hoodie_stream_state", None)
    if state is None:
        state = writer._hoodie_stream_state = _StreamState()
    return state


def _operation(options: Mapping[str, str], output_mode: str | None) -> WriteOperation:
    given = k.CATALOG.resolve(options, k.OPERATION) if any(n.lower() in options for n in k.OPERATION.names) else None
    if (output_mode or "append").lower() != "complete":
        return given or WriteOperation.UPSERT
    if given not in (None, WriteOperation.INSERT_OVERWRITE_TABLE):
        raise HoodieConfigError(
            f"outputMode('complete') emits the whole result each micro-batch, which replaces the table "
            f"(insert_overwrite_table); it cannot run operation {given.value!r} (use outputMode('append') or "
            "'update' with that operation)")
    return WriteOperation.INSERT_OVERWRITE_TABLE


def _query_identity(spark: SparkSession, checkpoint: str | None, query_name: str | None) -> str:
    """The checkpoint location the query runs with, as Spark resolves it; a query Spark gives a fresh
    folder of its own (no location and no name) can never resume, so any unique name will do."""
    if not checkpoint:
        root = spark.conf.get("spark.sql.streaming.checkpointLocation", None)
        if not (root and query_name):
            return f"{UNNAMED_QUERY}{uuid.uuid4().hex}"
        checkpoint = f"{root.rstrip('/')}/{query_name}"
    # a local path is resolved against the working directory, as Hadoop qualifies it
    return checkpoint if "://" in checkpoint or checkpoint.startswith("file:") else os.path.abspath(checkpoint)


def stream_sink(spark: SparkSession, state: _StreamState, path: str | None) -> HoodieStreamSink:
    """The sink of a query with these settings, its options resolved and checked against the table."""
    opts = {key.lower(): value for key, value in state.options.items()}
    path = path or opts.pop("path", None)
    if not path:
        raise HoodieConfigError("A table path is required: .start(path) or option('path', ...)")
    query = _query_identity(spark, opts.pop(CHECKPOINT_OPTION, None), state.query_name)
    if state.partition_by:
        opts[k.PARTITION_PATH.key] = ",".join(state.partition_by)
    opts.update(session_storage_keys(spark, opts))
    operation = _operation(opts, state.output_mode)
    for name in k.OPERATION.names:
        opts.pop(name.lower(), None)
    opts[k.OPERATION.key] = operation.value
    config = resolve_streaming_config(opts)
    storage = open_storage(path, opts)
    resolve_write_config(opts, load_table_config(storage) if table_exists(storage) else None)
    return HoodieStreamSink(path, opts, config, query)


def _writer_classes() -> list[tuple[type, Callable[[Any], SparkSession]]]:
    """Each DataStreamWriter class, with how to get the session of the query it starts."""
    from pyspark.sql.streaming.readwriter import DataStreamWriter

    classes: list[tuple[type, Callable[[Any], SparkSession]]] = [(DataStreamWriter, lambda writer: writer._spark)]
    try:
        from pyspark.sql.connect.streaming.readwriter import DataStreamWriter as ConnectWriter
    except ImportError:  # Connect's client dependencies (grpcio, ...) are optional
        return classes
    classes.append((ConnectWriter, lambda writer: writer._session))
    return classes


def _patch(cls: type, session_of: Callable[[Any], SparkSession]) -> None:
    original = {name: vars(cls)[name] for name in _PATCHED}

    @functools.wraps(original["outputMode"])
    def outputMode(self, outputMode):
        original["outputMode"](self, outputMode)
        _state(self).output_mode = outputMode
        return self

    @functools.wraps(original["queryName"])
    def queryName(self, queryName):
        original["queryName"](self, queryName)
        _state(self).query_name = queryName
        return self

    @functools.wraps(original["start"])
    def start(self, path=None, format=None, outputMode=None, partitionBy=None, queryName=None, **opts):
        self.options(**opts)
        if outputMode is not None:
            self.outputMode(outputMode)
        if partitionBy is not None:
            self.partitionBy(partitionBy)
        if format is not None:
            self.format(format)
        if queryName is not None:
            self.queryName(queryName)
        state = _state(self)
        if (state.format or "").lower() != FORMAT:
            return original["start"](self, path)
        self.foreachBatch(stream_sink(session_of(self), state, path))
        return original["start"](self)

    patched = {**recording_setters(original, _state), "outputMode": outputMode, "queryName": queryName, "start": start}
    for name, fn in patched.items():
        setattr(cls, name, fn)
    setattr(cls, _ORIGINALS, original)


def install() -> None:
    """Run ``writeStream.format("hoodie")...start()`` through the hoodie sink; idempotent."""
    for cls, session_of in _writer_classes():
        if _ORIGINALS not in vars(cls):
            _patch(cls, session_of)


def uninstall() -> None:
    """Restore the original DataStreamWriter methods (for tests)."""
    for cls, _ in _writer_classes():
        for name, fn in vars(cls).get(_ORIGINALS, {}).items():
            setattr(cls, name, fn)
        if _ORIGINALS in vars(cls):
            delattr(cls, _ORIGINALS)
