"""Another writer process for tests/storage/test_zookeeper_lock.py: its own ``ZookeeperLockProvider`` (its
own ZooKeeper session) on the lock the test names, and one of three jobs:

- ``hold``: take the lock, print ``locked``, hold it until stdin closes or says anything, then release
  it and print ``released`` (the test SIGKILLs it instead, to see the lock outlive it until its session
  expires);
- ``try <timeout_s>``: one ``try_lock``, then print ``{"acquired": ..., "elapsed": ...}`` and release;
- ``count <file> <rounds>``: print ``ready``, wait for a line on stdin, then ``rounds`` times: lock, read
  the integer in ``file``, wait a little, write it plus one, unlock (without the lock, two such workers
  lose increments); print ``done``.

Arguments: ``<port> <base_path> <lock_key> <session_timeout_ms> <job> [job arguments]``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from hoodie_datasource.config.concurrency_config import ZookeeperLockConfig
from hoodie_datasource.transaction.zookeeper_lock import ZookeeperLockProvider

GAP_S = 0.005  # between reading and writing the counter: wide enough for another writer to step in


def _count(provider: ZookeeperLockProvider, counter: Path, rounds: int) -> None:
    print("ready", flush=True)
    sys.stdin.readline()  # the test starts every worker's rounds at once
    for _ in range(rounds):
        if not provider.try_lock(30):
            raise SystemExit("the lock was not acquired within 30 s")
        try:
            value = int(counter.read_text())
            time.sleep(GAP_S)
            counter.write_text(str(value + 1))
        finally:
            provider.unlock()
    print("done", flush=True)


def main(port: str, base_path: str, lock_key: str, session_ms: str, job: str, *args: str) -> None:
    config = ZookeeperLockConfig("127.0.0.1", int(port), base_path, lock_key, int(session_ms), 5000)
    provider = ZookeeperLockProvider(config)
    try:
        if job == "hold":
            if not provider.try_lock(30):
                raise SystemExit("the lock was not acquired within 30 s")
            print("locked", flush=True)
            sys.stdin.readline()
            provider.unlock()
            print("released", flush=True)
        elif job == "try":
            start = time.monotonic()
            acquired = provider.try_lock(float(args[0]))
            print(json.dumps({"acquired": acquired, "elapsed": time.monotonic() - start}), flush=True)
        elif job == "count":
            _count(provider, Path(args[0]), int(args[1]))
        else:
            raise SystemExit(f"unknown job {job!r}")
    finally:
        provider.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
