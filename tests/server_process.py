"""What every server the tests start shares: stopping its process and reading the end of its log."""

from __future__ import annotations

import subprocess
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
