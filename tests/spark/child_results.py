"""The results a child process prints, one ``RESULT <name> <json>`` line each (``connect_scenarios.py``,
``worker_python_job.py``)."""

from __future__ import annotations

import json


def named_results(stdout: str) -> dict[str, dict]:
    """Each ``RESULT <name> <json>`` line of ``stdout``, by name."""
    results = {}
    for line in stdout.splitlines():
        if line.startswith("RESULT "):
            name, payload = line[len("RESULT "):].split(" ", 1)
            results[name] = json.loads(payload)
    return results
