"""What every server and child process the tests start shares: stopping it, reading the end of its log."""

from __future__ import annotations

import multiprocessing
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
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


@dataclass
class ServerProcess:
    """A server the tests started: its port on loopback, its process and its log."""
    port: int
    process: subprocess.Popen
    log_path: Path

    def log_tail(self, lines: int = 20) -> str:
        return log_tail(self.log_path, lines)

    def stop(self) -> None:
        stop_process(self.process)


def join_or_kill(children: Iterable[multiprocessing.Process], timeout_s: float = 30) -> None:
    """Wait for each child process, killing one that has not ended within ``timeout_s``."""
    for child in children:
        child.join(timeout_s)
        if child.is_alive():
            child.kill()
            child.join()


def wait_until_ready(process: subprocess.Popen, name: str, where: str, ready: Callable[[], object], log_path: Path,
                     timeout: float, interval: float = 0.2) -> None:
    """Return once ``ready()`` returns without raising; if ``process`` exits first, or ``timeout`` passes (the
    process is then stopped), raise ``RuntimeError`` naming ``name``, ``where`` it was asked and its log's end."""
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with {process.returncode}: {log_tail(log_path)}")
        try:
            ready()
            return
        except Exception:  # noqa: BLE001 - whatever the client raises until the server answers
            if time.monotonic() > deadline:
                stop_process(process)
                raise RuntimeError(f"{name} did not answer on {where} within {timeout:.0f}s: "
                                   f"{log_tail(log_path)}") from None
            time.sleep(interval)
