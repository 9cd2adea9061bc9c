"""Peak resident memory of one measured run, per process (Linux).

``resource.getrusage(...).ru_maxrss`` is a process's high-water mark over its whole life, so in a
warm session it cannot tell what one run used. Linux keeps the same figure per process as
``VmHWM`` in ``/proc/PID/status`` and sets it back to the current RSS when ``5`` is written to
``/proc/PID/clear_refs``. Before each run the marks of this Python process (the driver, where
delta-rs, pyiceberg and the pyarrow floor run), the Spark JVM and its Python workers are reset;
after it they are read:

* driver: peak RSS during the run minus RSS at its start (what the run added),
* JVM: peak RSS during the run,
* workers: the sum of each live Python worker's peak RSS during the run (pages shared by the
  forked workers count once per worker; a worker that exits during the run is not seen).

Where ``clear_refs`` cannot be written the marks are lifetime peaks (``ru_maxrss`` semantics), and
``resettable`` says so.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

logger = logging.getLogger(__name__)
MB = 1 << 20


def _status_bytes(pid: int, field: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    return None


def _parents() -> dict[int, int]:
    parents = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
        parents[int(entry)] = int(fields[1])
    return parents


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, parent in _parents().items():
        children.setdefault(parent, []).append(pid)
    found, stack = [], list(children.get(root, []))
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return found


def _reset(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


@dataclass
class Peak:
    driver_mb: float
    jvm_mb: float | None
    workers_mb: float | None


class PeakMemory:
    def __init__(self, jvm_pid: int | None):
        self.jvm_pid = jvm_pid
        self.resettable = True
        self._driver_start = 0

    def _watched(self) -> list[int]:
        pids = [os.getpid()]
        if self.jvm_pid is not None:
            pids += [self.jvm_pid, *descendants(self.jvm_pid)]
        return pids

    def reset(self) -> None:
        for pid in self._watched():
            if not _reset(pid) and pid in (os.getpid(), self.jvm_pid) and self.resettable:
                logger.warning("cannot reset the peak RSS of process %d: peaks are lifetime peaks", pid)
                self.resettable = False
        self._driver_start = _status_bytes(os.getpid(), "VmRSS") or 0

    def read(self) -> Peak:
        driver = max(0, (_status_bytes(os.getpid(), "VmHWM") or 0) - self._driver_start)
        if self.jvm_pid is None:
            return Peak(driver / MB, None, None)
        jvm = _status_bytes(self.jvm_pid, "VmHWM")
        workers = [_status_bytes(pid, "VmHWM") for pid in descendants(self.jvm_pid)]
        return Peak(driver / MB, jvm / MB if jvm is not None else None, sum(w for w in workers if w) / MB)
