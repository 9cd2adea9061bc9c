"""The HBase table of the HBase index, as Apache Hudi's ``SparkHoodieHBaseIndex`` lays it out, read and written
through the cluster's Thrift gateway with happybase.

A row per record key, column family ``_s``, qualifiers ``commit_ts`` (the instant that placed the key),
``file_name`` (its file group id) and ``partition_path``, each value the string's UTF-8 bytes (Hudi's
``Bytes.toBytes(String)``): a table Java Hudi's HBase index keeps is this one, and the other way round.

Requests go in batches paced by Hudi's rate limiter (``index.rate_limiter``): gets ``get.batch.size`` keys at a
time, at most ten batches a second (``locationTagFunction``); mutations a batch of the put rate at a time, at most
that many a second (``updateLocationFunction``). Each process keeps one connection per gateway, as Hudi keeps one
HBase connection per JVM. A request that fails or outlasts ``zk.connection_timeout_ms`` raises
``HBaseIndexUnavailableError`` naming the cluster; a connection that broke (a gateway restarted since this process
last used it) is opened again once first.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa

from hoodie_datasource.config.hbase_index_config import HBaseIndexConfig
from hoodie_datasource.errors import HBaseIndexUnavailableError, HoodieIndexError, PythonEnvironmentError
from hoodie_datasource.index.rate_limiter import RateLimiter

logger = logging.getLogger(__name__)

FAMILY = b"_s"
COMMIT_TS = b"_s:commit_ts"
FILE_NAME = b"_s:file_name"
PARTITION_PATH = b"_s:partition_path"
COLUMNS = [COMMIT_TS, FILE_NAME, PARTITION_PATH]
# a key's entry: the instant that placed it, its file group, its partition
ENTRY_SCHEMA = pa.schema([("key", pa.string()), ("commit_ts", pa.string()), ("file_name", pa.string()),
                          ("partition_path", pa.string())])
GETS_PER_BATCH_INTERVAL = 10  # Hudi: "multiGetBatchSize is intended to be a batch per 100ms"
# mutations in one request: a second's worth of a large put rate is sent in parts, as Hudi's BufferedMutator sends
# its buffer in parts (hbase.client.write.buffer, 2 MB), so that no request outlasts the timeout
MUTATIONS_PER_REQUEST = 2000

VERSIONS_READ = 10  # the most versions of an entry read when its latest names a failed write
_connections: dict[tuple[str, int], Any] = {}  # this process's connection to each gateway
_tables_seen: set[tuple[str, int, str]] = set()  # tables this process found on each gateway
T = TypeVar("T")


def _happybase():
    try:
        import happybase
        from thriftpy2.thrift import TException
    except ImportError as exc:
        raise PythonEnvironmentError(
            f"hoodie.index.type=HBASE talks to HBase's Thrift gateway with happybase ({exc}): "
            "pip install 'hoodie-datasource[hbase]'") from exc
    return happybase, TException


def _chunks(items: list, size: int):
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _entries(rows: list[tuple[bytes, dict[bytes, bytes]]]) -> pa.Table:
    """The ``ENTRY_SCHEMA`` rows of happybase's ``(row, cells)`` results."""
    columns: list[list[str | None]] = [[], [], [], []]
    for row, cells in rows:
        columns[0].append(row.decode())
        for at, column in enumerate(COLUMNS, start=1):
            value = cells.get(column)
            columns[at].append(None if value is None else value.decode())
    return pa.Table.from_arrays([pa.array(c, pa.string()) for c in columns], schema=ENTRY_SCHEMA)


class HBaseIndexTable:
    """The index's table on the cluster ``config`` names."""

    def __init__(self, config: HBaseIndexConfig) -> None:
        self.config = config

    # -- the connection

    def _connection(self) -> Any:
        address = (self.config.thrift_host, self.config.thrift_port)
        connection = _connections.get(address)
        if connection is None:
            happybase, _ = _happybase()
            connection = happybase.Connection(*address, timeout=self.config.timeout_ms, autoconnect=False)
            connection.open()
            _connections[address] = connection
        return connection

    def _drop(self) -> None:
        connection = _connections.pop((self.config.thrift_host, self.config.thrift_port), None)
        if connection is not None:
            try:
                connection.close()
            except Exception:  # closing a broken connection: nothing left to release
                logger.debug("Closing a broken HBase Thrift connection failed", exc_info=True)

    def _call(self, what: str, request: Callable[[Any], T]) -> T:
        """``request(table)``; a broken connection is opened again once, a timeout is not retried."""
        _, thrift_error = _happybase()
        for attempt in (1, 2):
            try:
                connection = self._connection()
                self._check_table(connection)
                return request(connection.table(self.config.table))
            except (thrift_error, OSError, EOFError) as exc:
                self._drop()
                message = str(getattr(exc, "message", "") or exc)[:500]
                timed_out = isinstance(exc, socket.timeout) or "timed out" in message
                if attempt == 2 or timed_out:
                    raise HBaseIndexUnavailableError(
                        f"{what} failed: {self.config.where} did not answer"
                        f"{f' within {self.config.timeout_ms} ms' if timed_out else ''} "
                        f"(hoodie.index.hbase.zk.connection_timeout_ms): {type(exc).__name__}: {message}") from None
        raise AssertionError("unreachable")

    def _check_table(self, connection: Any) -> None:
        """The table exists (once per process): the gateway's own client would retry a missing table's region
        lookups until the request times out."""
        seen = (self.config.thrift_host, self.config.thrift_port, self.config.table)
        if seen in _tables_seen:
            return
        if self.config.table.encode() not in connection.tables():
            raise HoodieIndexError(
                f"{self.config.where} has no table {self.config.table!r}: create it with column family '_s' "
                f"(HBase shell: create '{self.config.table}', {{NAME => '_s', VERSIONS => 2}}); Apache Hudi does "
                "not create it either")
        _tables_seen.add(seen)

    # -- what the index does with it

    def entries(self, keys: list[str]) -> pa.Table:
        """The entries (``ENTRY_SCHEMA``) of those of ``keys`` the table holds, in batched gets paced as Hudi's
        tagging paces them."""
        size = self.config.get_batch_size
        limiter = RateLimiter(size * GETS_PER_BATCH_INTERVAL)
        parts = [ENTRY_SCHEMA.empty_table()]
        for batch in _chunks([k.encode() for k in keys], size):
            limiter.acquire(len(batch))
            rows = self._call("Looking keys up in the HBase index", lambda t, b=batch: t.rows(b, columns=COLUMNS))
            parts.append(_entries(rows))
        return pa.concat_tables(parts)

    def earlier_entries(self, keys: list[str], valid: Callable[[list[str]], np.ndarray]) -> pa.Table:
        """For each of ``keys``, its newest entry whose ``commit_ts`` is ``valid`` among the versions the table
        keeps (two calls per key: for the keys whose latest entry a failed write put)."""
        rows = []
        for key in keys:
            row = key.encode()
            versions = self._call("Reading an HBase index entry's versions", lambda t, r=row: t.cells(
                r, COMMIT_TS, versions=VERSIONS_READ, include_timestamp=True))
            ok = valid([v.decode() for v, _ in versions]) if versions else []
            cell_time = next((ts for (_, ts), good in zip(versions, ok) if good), None)
            if cell_time is not None:  # the entry's three cells were put together, at one cell time
                cells = self._call("Reading an HBase index entry", lambda t, r=row, at=cell_time: t.row(
                    r, columns=COLUMNS, timestamp=at + 1))
                rows.append((row, cells))
        return _entries(rows)

    def mutate(self, puts: pa.Table, deletes: list[str], per_second: int) -> None:
        """Write ``puts`` (``ENTRY_SCHEMA`` rows) and delete the rows of ``deletes``, ``per_second`` mutations
        a batch and a second (Hudi's ``doMutations``)."""
        limiter = RateLimiter(per_second)
        step = min(per_second, MUTATIONS_PER_REQUEST)
        for keys in _chunks(deletes, step):
            limiter.acquire(len(keys))
            batch = [(k.encode(), None) for k in keys]
            self._call("Updating the HBase index", lambda t, b=batch: self._send(t, b))
        for start in range(0, puts.num_rows, step):  # a slice at a time: a large commit's keys stay in Arrow
            rows = zip(*(puts.column(n).slice(start, step).to_pylist() for n in ENTRY_SCHEMA.names))
            batch = [(key.encode(), {COMMIT_TS: ts.encode(), FILE_NAME: name.encode(), PARTITION_PATH: path.encode()})
                     for key, ts, name, path in rows]
            limiter.acquire(len(batch))
            self._call("Updating the HBase index", lambda t, b=batch: self._send(t, b))

    @staticmethod
    def _send(table: Any, batch: list[tuple[bytes, dict[bytes, bytes] | None]]) -> None:
        with table.batch() as writer:
            for row, cells in batch:
                if cells is None:
                    writer.delete(row, columns=[FAMILY])
                else:
                    writer.put(row, cells)

    def region_servers(self) -> int:
        """The region servers holding the table's regions (``getNumRegionServersAliveForTable``)."""
        regions = self._call("Listing the HBase index's regions", lambda t: t.regions())
        return max(1, len({r.get("server_name") for r in regions}))

    def written_since(self, since_ms: int) -> list[str]:
        """The keys whose entry was written at or after ``since_ms`` (HBase cell time, epoch milliseconds): a scan
        of the table, as Hudi's ``rollbackCommit`` scans it (Hudi's scan bounds the cell time on the server;
        HBase's Thrift 1 scan has no time range, so the cells' times are compared here)."""
        def scan(table: Any) -> list[str]:
            return [row.decode() for row, cells in table.scan(columns=[COMMIT_TS], include_timestamp=True,
                                                              batch_size=1000)
                    if cells[COMMIT_TS][1] >= since_ms]
        return self._call("Scanning the HBase index", scan)

    def entries_before(self, keys: list[str], before_ms: int) -> pa.Table:
        """The latest entry older than ``before_ms`` of each of ``keys`` that has one (the table keeps several
        versions: ``VERSIONS => 2`` or more)."""
        parts = [ENTRY_SCHEMA.empty_table()]
        for batch in _chunks([k.encode() for k in keys], self.config.get_batch_size):
            rows = self._call("Reading the HBase index's previous entries",
                              lambda t, b=batch: t.rows(b, columns=COLUMNS, timestamp=before_ms))
            parts.append(_entries(rows))
        return pa.concat_tables(parts)
