"""Code run in child processes by the commit race and crash tests (tests/storage/test_commit_races.py,
tests/storage/test_writer_kill.py).

Each function is the whole life of one child started with the ``spawn`` context: it opens the table
itself (a separate process, as a second writer on another machine would), meets the other child at a
``multiprocessing.Barrier`` so both act at the same moment or stops at a given point and sets an
``Event`` (to be killed there or let go), and reports through a queue. Patching a
module attribute here changes only this child.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from multiprocessing.synchronize import Barrier, Event
from typing import Any

import pyarrow as pa

from hoodie_datasource.client import write_client
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.errors import CommitConflictError
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.table import instant_rollback
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.instant import COMMIT, Instant, State
from hoodie_datasource.timeline.transitions import transition_to_completed

logger = logging.getLogger(__name__)
BARRIER_TIMEOUT_S = 120.0  # only guards against a hang when the other child died


def _outcome(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def complete_rounds(uri: str, options: Mapping[str, str], instants: list[str], tag: str, barrier: Barrier,
                    results: Any) -> None:
    """Load the timeline once, then for each inflight commit in ``instants`` wait for the other child and
    complete it with content naming ``tag``; put ``(tag, ["won" | "lost" | error, ...])`` on ``results``."""
    table = Table.load(open_storage(uri, options))
    outcome = []
    for instant_time in instants:
        inflight = Instant(instant_time, COMMIT, State.INFLIGHT)
        content = json.dumps({"writer": tag, "instant": instant_time}).encode()
        barrier.wait(BARRIER_TIMEOUT_S)
        try:
            transition_to_completed(table, inflight, content)
            outcome.append("won")
        except CommitConflictError:
            outcome.append("lost")
        except Exception as exc:  # reported to the test, which fails with it
            outcome.append(_outcome(exc))
    results.put((tag, outcome))


def write_rounds(uri: str, options: Mapping[str, str], rounds: list[tuple[str, pa.Table]], tag: str,
                 barrier: Barrier, results: Any) -> None:
    """Whole writes, one per round, whose new instant time is forced to the round's (two writers whose
    clocks agree to the millisecond); puts ``(tag, ["committed" | error, ...])`` on ``results``.

    Both writers load the timeline, find nothing pending and pick the same instant time; the barrier
    then releases them together at the creation of its requested file, the first exclusive step. (A
    writer that loads the timeline after the other's requested file exists rolls it back as a failed
    write: the single-writer model, until heartbeats tell live writers from dead ones.)"""
    create_requested = write_client.create_requested

    def create_together(table: Table, instant_time: str, action: str, content: bytes = b"") -> Instant:
        barrier.wait(BARRIER_TIMEOUT_S)
        return create_requested(table, instant_time, action, content)

    write_client.create_requested = create_together
    outcome = []
    for instant_time, data in rounds:
        write_client.new_instant_time = lambda after=None, forced=instant_time: forced
        try:
            write_local(uri, data, options)
            outcome.append("committed")
        except Exception as exc:  # the outcome is what the test checks
            outcome.append(_outcome(exc))
        barrier.wait(BARRIER_TIMEOUT_S)  # the next round starts when both are done with this one
    results.put((tag, outcome))


def write_until_commit_point(uri: str, options: Mapping[str, str], data: pa.Table, at_commit_point: Event) -> None:
    """A write that stops just before creating its completed instant: its data files, partition
    metadata and inflight instant are written, the files of failed attempts are already pruned. It
    sets ``at_commit_point`` and sleeps there until the test kills it."""

    def stop_here(table: Table, inflight: Instant, content: bytes) -> Instant:
        logger.info("At the commit point of %s: waiting to be killed", inflight.timestamp)
        at_commit_point.set()
        time.sleep(3600)
        raise AssertionError("not killed")

    write_client.transition_to_completed = stop_here
    write_local(uri, data, options)


def write_until_rollback_midway(uri: str, options: Mapping[str, str], data: pa.Table, midway: Event) -> None:
    """A write whose rollback of a failed write stops midway: the rollback is planned and inflight and
    the failed write's data files are deleted, but not its markers nor its instant files. It sets
    ``midway`` and sleeps there until the test kills it."""

    def stop_here(storage: Any, instant_time: str) -> None:
        logger.info("Rolling back %s: its data files are deleted; waiting to be killed", instant_time)
        midway.set()
        time.sleep(3600)
        raise AssertionError("not killed")

    instant_rollback.delete_marker_dir = stop_here
    write_local(uri, data, options)


def write_paused_at_commit_point(uri: str, options: Mapping[str, str], data: pa.Table, at_commit_point: Event,
                                 go: Event, results: Any) -> None:
    """A write that waits at its commit point until ``go``: its data files and inflight instant are written,
    its heartbeat beats, its conflict check and completion are still to come. Then it commits; puts
    ``"committed"`` or the error on ``results``."""
    complete = write_client.WriteSession._complete

    def pause_here(session: write_client.WriteSession, content: bytes, touched: Any) -> Table:
        at_commit_point.set()
        go.wait(BARRIER_TIMEOUT_S)
        return complete(session, content, touched)

    write_client.WriteSession._complete = pause_here
    try:
        write_local(uri, data, options)
        results.put("committed")
    except Exception as exc:  # the outcome is what the test checks
        results.put(_outcome(exc))
