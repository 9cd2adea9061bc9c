"""CPU seconds of the processes a case runs in (Linux ``/proc``): less sensitive than wall time to what else
runs on a busy machine, which delays a run's work without adding to its CPU time."""

from __future__ import annotations

import os
from dataclasses import dataclass

from benchmarks.memory import descendants

TICK = os.sysconf("SC_CLK_TCK")


def _ticks(pid: int, fields: slice) -> int:
    """Sum of the ``/proc/PID/stat`` fields ``fields`` (counted after the command name); 0 once it exited."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return sum(int(f) for f in stat.read().rsplit(")", 1)[1].split()[fields])
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return 0


def own_seconds(pid: int) -> float:
    """CPU time of process ``pid`` itself (user and system), not of its children."""
    return _ticks(pid, slice(11, 13)) / TICK


def tree_seconds(pid: int) -> float:
    """CPU time of process ``pid`` and its descendants, the exited ones they waited for included."""
    return sum(_ticks(p, slice(11, 15)) for p in (pid, *descendants(pid))) / TICK


@dataclass(frozen=True)
class CpuClock:
    """A Spark session's CPU time: its Python driver alone (other children of it, a peer's process, are not
    its work) and its JVM with the JVM's descendants (the Python workers)."""

    driver_pid: int
    jvm_pid: int

    def seconds(self) -> float:
        return own_seconds(self.driver_pid) + tree_seconds(self.jvm_pid)
