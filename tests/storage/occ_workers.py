"""Code run in child processes by the several-writers tests (tests/storage/test_concurrent_writers.py).

Each function is the whole life of one spawned child: it opens the table itself, as a writer on
another machine would, meets the other child at a ``multiprocessing.Barrier`` so both act at once, or
stops at a given point and sets an ``Event`` (to be killed there), and reports through a queue."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from multiprocessing.synchronize import Barrier, Event
from typing import Any

import pyarrow as pa

from hoodie_datasource import fault_points
from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.errors import HoodieWriteConflictError
from hoodie_datasource.hoodie_table import HoodieTable
from hoodie_datasource.storage.registry import open_storage
from hoodie_datasource.transaction.storage_lock import StorageLockProvider

logger = logging.getLogger(__name__)
BARRIER_TIMEOUT_S = 120.0  # only guards against a hang when the other child died
COUNTER = "counter"


def write_batches(uri: str, options: Mapping[str, str], batches: list[pa.Table], tag: str, barrier: Barrier,
                  results: Any) -> None:
    """One write per batch, each started together with the other child's; puts ``(tag, outcomes)`` on
    ``results``, an outcome being ``("committed", instant)`` or ``("conflict", message)``."""
    outcome = []
    for data in batches:
        barrier.wait(BARRIER_TIMEOUT_S)
        try:
            outcome.append(("committed", write_local(uri, data, options)))
        except HoodieWriteConflictError as exc:
            outcome.append(("conflict", str(exc)))
    results.put((tag, outcome))


_overlap: list[Barrier] = []  # the barrier the fault hook below meets, once


def meet_the_other_writer(point: str, **context) -> None:
    """A fault hook (``after_data_file_written``): wait, once, until the other child has written its
    file too, so each write starts before the other commits."""
    if _overlap:
        _overlap.pop().wait(BARRIER_TIMEOUT_S)


def write_overlapping(uri: str, options: Mapping[str, str], data: pa.Table, tag: str, barrier: Barrier,
                      results: Any) -> None:
    """One write that has written its data file before the other child's write commits (and the other
    way round): of two writes of the same keys, exactly one can commit. Puts ``(tag, outcome)``."""
    os.environ[fault_points.ENV_VAR] = f"{fault_points.AFTER_DATA_FILE_WRITTEN}={__name__}:meet_the_other_writer"
    _overlap.append(barrier)
    barrier.wait(BARRIER_TIMEOUT_S)
    try:
        results.put((tag, ("committed", write_local(uri, data, options))))
    except HoodieWriteConflictError as exc:
        results.put((tag, ("conflict", str(exc))))


def increment_rounds(uri: str, options: Mapping[str, str], rounds: int, barrier: Barrier, results: Any) -> None:
    """``rounds`` times: take the storage lock, read the counter file, write it plus one, unlock."""
    storage = open_storage(uri, options)
    provider = StorageLockProvider(storage, validity_s=60, renew_interval_s=20)
    barrier.wait(BARRIER_TIMEOUT_S)
    for _ in range(rounds):
        if not provider.try_lock(60):
            results.put("timed out")
            return
        value = int(storage.read(COUNTER))
        storage.write(COUNTER, str(value + 1).encode())
        provider.unlock()
    results.put("done")


def hold_lock_until_killed(uri: str, options: Mapping[str, str], validity_s: float, holding: Event) -> None:
    """Take the storage lock (renewing its lease), set ``holding`` and sleep until killed."""
    provider = StorageLockProvider(open_storage(uri, options), validity_s=validity_s, renew_interval_s=validity_s / 4)
    assert provider.try_lock(30)
    logger.info("Holding %s as %s", provider.describe(), provider.owner)
    holding.set()
    time.sleep(3600)


def compact_rounds(uri: str, options: Mapping[str, str], rounds: int, tag: str, barrier: Barrier, results: Any) -> None:
    """Each round, together with the other child's write: compact the table (``HoodieTable.compact``,
    scheduling and completing under the table lock); puts ``(tag, [compaction instants per round])``."""
    table = HoodieTable(uri, options)
    outcome = []
    for _ in range(rounds):
        barrier.wait(BARRIER_TIMEOUT_S)
        outcome.append(table.compact(**options))
    results.put((tag, outcome))
