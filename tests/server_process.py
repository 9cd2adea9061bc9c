"""What every server and child process the tests start shares: stopping it, reading the end of its log."""

from __future__ import annotations

import multiprocessing
import subprocess
from collections.abc import Iterable
from pathlib import Path


def stop_process(process: subprocess.Popen) -> None:
    """Terminate, then kill if it does not stop within 10 s."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def log_tail(path: Path, lines: int = 20) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def join_or_kill(children: Iterable[multiprocessing.Process], timeout_s: float = 30) -> None:
    """Wait for each child process, killing one that has not ended within ``timeout_s``."""
    for child in children:
        child.join(timeout_s)
        if child.is_alive():
            child.kill()
            child.join()
