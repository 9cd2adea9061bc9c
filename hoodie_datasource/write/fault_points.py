"""Named fault points: places in a write where tests inject failures. No-ops in normal use.

A point does something only when the environment variable ``HOODIE_FAULT_POINTS`` names it with a
hook to call, as comma-separated ``<point>=<module>:<function>`` entries, e.g.
``HOODIE_FAULT_POINTS=after_data_file_written=tests.cluster.fault_hooks:after_data_file_written``.
The hook is called with the point's name and its context (keyword arguments) and may raise, sleep or
kill the process; the variable is read once per process, so on a Spark cluster it is set for the
executors (``spark.executorEnv.HOODIE_FAULT_POINTS``) and the hook module must be importable there.

Points:
    after_data_file_written   a base or log file was written (its marker first), before the task
                              reports its write stat; context: ``storage``, ``path`` (relative to the table)
    after_stream_batch_committed  the streaming sink committed a micro-batch, before it returns to Spark (which
                              then records the batch in its own checkpoint); context: ``path`` (the table),
                              ``batch_id``, ``instant``
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable

from hoodie_datasource.errors import HoodieConfigError

ENV_VAR = "HOODIE_FAULT_POINTS"
AFTER_DATA_FILE_WRITTEN = "after_data_file_written"
AFTER_STREAM_BATCH_COMMITTED = "after_stream_batch_committed"
POINTS = (AFTER_DATA_FILE_WRITTEN, AFTER_STREAM_BATCH_COMMITTED)


def reach(point: str, **context) -> None:
    """Call the hook ``HOODIE_FAULT_POINTS`` gives for ``point``, if any."""
    hook = _hooks().get(point)
    if hook is not None:
        hook(point, **context)


@functools.cache
def _hooks() -> dict[str, Callable[..., None]]:
    spec = os.environ.get(ENV_VAR, "").strip()
    hooks = {}
    for entry in filter(None, (e.strip() for e in spec.split(","))):
        point, _, target = entry.partition("=")
        module, _, function = target.partition(":")
        if point not in POINTS or not module or not function:
            raise HoodieConfigError(f"{ENV_VAR} entry {entry!r} is not <point>=<module>:<function> with a point "
                                    f"among {', '.join(POINTS)}")
        hooks[point] = getattr(importlib.import_module(module), function)
    return hooks
