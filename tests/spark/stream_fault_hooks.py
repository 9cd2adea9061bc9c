"""Fault-point hooks of the streaming replay test (named in ``HOODIE_FAULT_POINTS`` of its child process)."""

from __future__ import annotations

import os
import signal


def kill_this_process(point: str, **context) -> None:
    """SIGKILL the query's driver where it stands: no ``finally``, no atexit, and Spark never learns that
    the micro-batch was written (its JVM, a child that reads this process's pipe, exits with it)."""
    os.kill(os.getpid(), signal.SIGKILL)
