"""The ``HoodieError`` a Spark task raised, raised again in the caller with its own message first.

A ``HoodieError`` raised inside a task (a null record key, a corrupt file, ...) reaches the driver as
Spark's ``PythonException`` ("An exception was thrown from the Python worker", classic or Connect),
whose text holds the worker's Python traceback. Its last line naming a ``hoodie_datasource.errors``
class is the error the task raised: ``hoodie_datasource.errors.InvalidRecordError: <message>``. That
line is the stable part (Python's traceback format); what Spark puts around it differs between
classic, Connect and versions, so nothing else is parsed.
"""

from __future__ import annotations

import re

from hoodie_datasource import errors
from hoodie_datasource.errors import HoodieError

_RAISED = re.compile(r"^hoodie_datasource\.errors\.(\w+): ", re.MULTILINE)
_AFTER_MESSAGE = re.compile(r"^\s*(SQLSTATE: |JVM stacktrace:|at \S+\(|$)")


def task_error(exc: BaseException) -> HoodieError | None:
    """The ``HoodieError`` (same class, same message) a task raised, if ``exc`` reports one."""
    text = str(exc)
    found = list(_RAISED.finditer(text))
    if not found:
        return None
    cls = getattr(errors, found[-1].group(1), None)
    if not (isinstance(cls, type) and issubclass(cls, HoodieError)):
        return None
    lines = text[found[-1].end():].split("\n")
    message = [lines[0]]
    for line in lines[1:]:  # a message of several lines, up to what Spark appends after the traceback
        if _AFTER_MESSAGE.match(line):
            break
        message.append(line)
    return cls("\n".join(message).rstrip())
