"""Check ``spark.read.format("hoodie")...load(path)`` in the caller's process, before Spark does.

Why: Spark builds the Python data source in a Python worker, and an error raised there reaches the
user as ``AnalysisException: [PYTHON_DATA_SOURCE_ERROR] Failed to create Python data source instance``
wrapping the worker's traceback. What can be checked from the options alone (valid read options; a
Hudi table at the path) is checked here first, so the ``HoodieError`` itself is raised (e.g.
``TableNotFoundError`` naming the path); everything else is still the data source's job.

``install()`` patches the classic and (when its client dependencies import) the Spark Connect
``DataFrameReader``: ``format``, ``option`` and ``options`` do what they did and also remember their
arguments on the reader object (classic keeps them only in the JVM); ``load`` checks a hoodie read,
then calls Spark's ``load``. Reads with valid options are unchanged. ``uninstall()`` restores them.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping
from typing import Any

from pyspark.sql.utils import to_str

from hoodie_datasource.config.read_config import resolve_read_config
from hoodie_datasource.config.table_config import load_table_config
from hoodie_datasource.spark.datasource import table_path
from hoodie_datasource.spark.storage_keys import session_storage_keys
from hoodie_datasource.storage.registry import open_storage

_PATCHED = ("format", "option", "options", "load")
_ORIGINALS = "_hoodie_read_check_originals"  # class attribute: the unpatched methods; marks a patched class

_formats: frozenset[str] = frozenset({"hoodie"})


def check_read(options: Mapping[str, str], path: Any = None) -> None:
    """Raise the ``HoodieError`` the data source would raise for these read options and path."""
    opts = {str(key).lower(): value for key, value in options.items()}
    if path is not None:
        if not isinstance(path, str):
            return  # several paths: the data source itself says it reads one table
        opts["path"] = path
    resolve_read_config(opts)
    load_table_config(open_storage(table_path(opts), opts))  # TableNotFoundError naming the path


def _reader_classes() -> list[type]:
    from pyspark.sql.readwriter import DataFrameReader

    classes: list[type] = [DataFrameReader]
    try:
        from pyspark.sql.connect.readwriter import DataFrameReader as ConnectReader
    except ImportError:  # Connect's client dependencies (grpcio, ...) are optional
        return classes
    classes.append(ConnectReader)
    return classes


def _options(reader: Any) -> dict[str, str]:
    state = getattr(reader, "_hoodie_read_options", None)
    if state is None:
        state = reader._hoodie_read_options = {}
    return state


def _patch(cls: type) -> None:
    original = {name: vars(cls)[name] for name in _PATCHED}

    @functools.wraps(original["format"])
    def format(self, source):
        self._hoodie_read_format = source
        return original["format"](self, source)

    @functools.wraps(original["option"])
    def option(self, key, value):
        if value is not None:
            _options(self)[str(key).lower()] = to_str(value)
        return original["option"](self, key, value)

    @functools.wraps(original["options"])
    def options(self, **opts):
        _options(self).update({str(key).lower(): to_str(value) for key, value in opts.items() if value is not None})
        return original["options"](self, **opts)

    @functools.wraps(original["load"])
    def load(self, path=None, format=None, schema=None, **opts):
        source = format if format is not None else getattr(self, "_hoodie_read_format", None)
        if (source or "").lower() in _formats:
            given = {str(key).lower(): to_str(value) for key, value in opts.items() if value is not None}
            session = getattr(self, "_spark", None) or self._client  # classic / Spark Connect
            for key, value in session_storage_keys(session, {**_options(self), **given}).items():
                self.option(key, value)  # the data source's worker has no session to ask
            check_read({**_options(self), **given}, path)
        return original["load"](self, path, format, schema, **opts)

    for name, fn in {"format": format, "option": option, "options": options, "load": load}.items():
        setattr(cls, name, fn)
    setattr(cls, _ORIGINALS, original)


def install(format_names: Collection[str] = ("hoodie",)) -> None:
    """Check ``load()`` of ``format_names`` (any case) before Spark does; idempotent."""
    global _formats
    _formats = frozenset(name.lower() for name in ((format_names,) if isinstance(format_names, str)
                                                   else format_names))
    for cls in _reader_classes():
        if _ORIGINALS not in vars(cls):
            _patch(cls)


def uninstall() -> None:
    """Restore the original DataFrameReader methods (for tests)."""
    for cls in _reader_classes():
        for name, fn in vars(cls).get(_ORIGINALS, {}).items():
            setattr(cls, name, fn)
        if _ORIGINALS in vars(cls):
            delattr(cls, _ORIGINALS)
