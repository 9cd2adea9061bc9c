"""Runs in the official client's own environment (``.tools/sharing-client/venv``: ``delta-sharing`` 1.4.2 pins a
pyarrow older than ours), never imported by the tests: ``python client_worker.py '<json request>'``.

Requests: ``{"op": "load_as_pandas", "url": ..., "version"?: n, "timestamp"?: iso, "as_json"?: true, "out": path}`` (parquet,
or JSON rows with ``as_json``),
``{"op": "load_table_changes_as_pandas", "url": ..., "starting_version"?, "ending_version"?, "starting_timestamp"?,
"ending_timestamp"?, "out": ...}``, ``{"op": "list_all_tables", "profile": ...}`` (prints JSON),
``{"op": "table_version", "url": ..., "starting_timestamp"?}`` (prints JSON)."""

import json
import os
import sys

import delta_sharing
import pyarrow as pa
import pyarrow.parquet as pq


def main() -> None:
    request = json.loads(sys.argv[1])
    op = request.pop("op")
    out = request.pop("out", None)
    if op == "list_all_tables":
        tables = delta_sharing.SharingClient(request["profile"]).list_all_tables()
        print(json.dumps([[t.share, t.schema, t.name] for t in tables]))
        return
    if op == "table_version":
        print(json.dumps(delta_sharing.get_table_version(request["url"], request.get("starting_timestamp"))))
        return
    as_json = request.pop("as_json", False)
    frame = getattr(delta_sharing, op)(**request)
    if as_json:  # columns pandas cannot give back to Arrow (maps of structs): the rows as JSON
        with open(out, "w") as handle:
            json.dump({"columns": list(frame.columns), "rows": frame.to_dict(orient="records")}, handle, default=_plain)
    else:
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), out)
    print(json.dumps({"rows": len(frame), "columns": list(frame.columns)}))


def _plain(value):
    """A value of a frame as JSON: numpy scalars and arrays as Python's, times in ISO 8601, the rest as text."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


if __name__ == "__main__":
    main()
    # The request is done and its output written. Arrow C++ can abort the interpreter's teardown right after a
    # dataset scan, as the client's reads are ("terminate called without an active exception", SIGABRT: a thread
    # pool's worker still alive while the pool is destroyed; apache/arrow#39862 and #34314, open in pyarrow 23):
    # seen here once in about 40 runs of a read, always after the result was printed. So the process ends without
    # that teardown; a request that failed has raised before this and exits non-zero as usual.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
