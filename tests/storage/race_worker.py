"""A second process for tests/storage: unpickles a ``Storage``, reads the file the test left for it,
then races the other worker to ``create_once`` the same names, one round each, and prints the outcome.

Protocol (stdin/stdout, one line each): prints ``ready <content of greeting>``, waits for ``go <start>``,
then makes round ``i`` at ``start + i * SLOT`` (wall clock, so both workers fire together), and prints a
JSON list with ``"won"``, ``"lost"`` (CommitConflictError) or the error text, per round.
"""

from __future__ import annotations

import json
import pickle
import sys
import time

from hoodie_datasource.errors import CommitConflictError
from hoodie_datasource.storage.storage import join

SLOT = 0.04  # seconds per round: longer than one conditional put on a loopback server


def main(pickled: str, rounds: int, tag: str) -> None:
    with open(pickled, "rb") as handle:
        storage = pickle.load(handle)
    print("ready", storage.read("greeting").decode(), flush=True)
    command, _, start = sys.stdin.readline().partition(" ")
    if command != "go":
        return
    outcome = []
    for i in range(rounds):
        time.sleep(max(0.0, float(start) + i * SLOT - time.time()))
        try:
            storage.create_once(join("race", f"{i:04d}"), tag.encode())
            outcome.append("won")
        except CommitConflictError:
            outcome.append("lost")
        except Exception as exc:  # reported to the test, which fails with it
            outcome.append(f"{type(exc).__name__}: {exc}")
    print(json.dumps(outcome), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
