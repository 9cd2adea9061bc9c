"""What a user sets on a DataFrameWriter or DataStreamWriter (format, options, partition columns),
recorded beside what Spark records, so that a patched ``save()`` (``spark.save_modes``) or ``start()``
(``spark.stream_start``) can see it: PySpark keeps these in the JVM (classic) or in a plan (Connect),
where Python cannot read them back."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from pyspark.sql.utils import to_str


def recording_setters(original: Mapping[str, Callable], state_of: Callable[[Any], Any],
                      key: Callable[[Any], str] = str) -> dict[str, Callable]:
    """``format``, ``option``, ``options`` and ``partitionBy`` that call the ``original`` methods and record
    their arguments in ``state_of(writer)`` (its ``format``, ``options`` and ``partition_by``); option
    names go through ``key``."""

    @functools.wraps(original["format"])
    def format(self, source):
        original["format"](self, source)
        state_of(self).format = source
        return self

    @functools.wraps(original["option"])
    def option(self, name, value):
        original["option"](self, name, value)
        if value is not None:
            state_of(self).options[key(name)] = to_str(value)
        return self

    @functools.wraps(original["options"])
    def options(self, **opts):
        original["options"](self, **opts)
        state_of(self).options.update({key(name): to_str(value) for name, value in opts.items() if value is not None})
        return self

    @functools.wraps(original["partitionBy"])
    def partitionBy(self, *cols):
        original["partitionBy"](self, *cols)
        state_of(self).partition_by = list(cols[0] if len(cols) == 1 and isinstance(cols[0], (list, tuple)) else cols)
        return self

    return {"format": format, "option": option, "options": options, "partitionBy": partitionBy}
