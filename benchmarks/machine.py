"""What the figures were measured on: machine facts and library versions."""

from __future__ import annotations

import os
import platform
from importlib.metadata import PackageNotFoundError, version

PACKAGES = ("pyspark", "pyarrow", "deltalake", "pyiceberg", "hoodie-datasource")


def _first(path: str, prefix: str) -> str | None:
    try:
        with open(path) as lines:
            for line in lines:
                if line.startswith(prefix):
                    return line.split(":" if ":" in line else "=", 1)[1].strip().strip('"')
    except OSError:
        return None
    return None


def facts(java: str) -> dict[str, str]:
    memory_kb = _first("/proc/meminfo", "MemTotal")
    return {
        "CPU": _first("/proc/cpuinfo", "model name") or platform.processor() or platform.machine(),
        "cores": str(os.cpu_count()),
        "RAM": f"{int(memory_kb.split()[0]) / 2**20:.1f} GiB" if memory_kb else "unknown",
        "OS": f"{_first('/etc/os-release', 'PRETTY_NAME=') or platform.system()}, kernel {platform.release()}",
        "Python": platform.python_version(),
        "Java": java,
    }


def versions() -> dict[str, str]:
    found = {}
    for package in PACKAGES:
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = "not installed"
    return found


def load_average() -> str:
    return ", ".join(f"{load:.1f}" for load in os.getloadavg())
