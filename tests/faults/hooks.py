"""What the fault-injection tests make a fault point do (``HOODIE_FAULT_POINTS=<point>=tests.faults.hooks:<fail|kill>``).

``kill`` sends SIGKILL to every process of the writer's session: the test starts each writer in a
session of its own, which holds the writer's Python process and, when it runs Spark, the JVM and every
Python worker (PySpark's worker daemon makes a process group of its own, but stays in the session).
Nothing runs after it: no ``finally``, no rollback, no lock release."""

from __future__ import annotations

import os
import signal


class InjectedFault(RuntimeError):
    """The exception a ``fail`` point raises (not a ``HoodieError``: it stands for any failure)."""


def fail(point: str, **context: object) -> None:
    raise InjectedFault(f"injected at {point}")


def session_processes(session: int) -> list[int]:
    """The live processes of ``session`` (zombies, dead but not yet reaped by a parent, do not count)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                state, _, _, sid = f.read().rsplit(")", 1)[1].split()[:4]
        except OSError:  # gone meanwhile
            continue
        if int(sid) == session and state != "Z":
            found.append(int(entry))
    return found


def kill(point: str, **context: object) -> None:
    me = os.getpid()
    for pid in session_processes(os.getsid(0)):
        if pid != me:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:  # it exited between the listing and the kill
                pass
    os.kill(me, signal.SIGKILL)
