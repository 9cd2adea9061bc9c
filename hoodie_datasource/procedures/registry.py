"""Apache Hudi's SQL procedures by name (``CALL show_commits(table => 't', limit => 10)``): the lookup,
and ``call``, which binds the arguments and runs the procedure on the table.

A procedure takes its arguments by name or position as strings (SQL literals) and returns an Arrow table
of its result columns. The jvm-shim resolves ``table`` to the table's location (``path``); everything
else, the argument checks included, is in this package, so an unknown procedure or argument gets a clear
error listing the valid ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyarrow as pa

from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.hoodie_table import HoodieTable
from hoodie_datasource.procedures.clustering_procedures import CLUSTERING_PROCEDURES
from hoodie_datasource.procedures.commit_procedures import COMMIT_PROCEDURES
from hoodie_datasource.procedures.fs_procedures import FS_PROCEDURES
from hoodie_datasource.procedures.metadata_procedures import METADATA_PROCEDURES
from hoodie_datasource.procedures.procedure import Procedure
from hoodie_datasource.procedures.savepoint_procedures import SAVEPOINT_PROCEDURES
from hoodie_datasource.procedures.stats_procedures import STATS_PROCEDURES
from hoodie_datasource.procedures.timeline_procedures import TIMELINE_PROCEDURES

PROCEDURES = {p.name: p for p in (*TIMELINE_PROCEDURES, *COMMIT_PROCEDURES, *STATS_PROCEDURES, *FS_PROCEDURES,
                                  *METADATA_PROCEDURES, *SAVEPOINT_PROCEDURES, *CLUSTERING_PROCEDURES)}


def procedure(name: str) -> Procedure:
    found = PROCEDURES.get(name.lower())
    if found is None:
        raise HoodieConfigError(f"Unknown procedure {name!r}; the procedures are: {', '.join(sorted(PROCEDURES))}")
    return found


def call(name: str, path: str | None, named: Mapping[str, str], positional: Sequence[str],
         conf: Mapping[str, str] | None = None) -> pa.Table:
    """Run procedure ``name`` on the table at ``path`` (the ``table`` or ``path`` argument, resolved).
    ``conf``: the session's ``hoodie.*`` options, which the procedure's ``options`` and arguments override
    (Hudi's ``HoodieCLIUtils.createHoodieWriteClient``: session conf < specified conf); the table's storage
    is opened with them (credentials and endpoints)."""
    proc = procedure(name)
    proc.bind(named, positional)  # the arguments checked before the table is opened
    if not path:
        raise HoodieConfigError(f"CALL {proc.name}: name the table with table => '<name>' (or path => '<path>')")
    session = dict(conf or {})
    return run_procedure(name, HoodieTable(path, session), named, positional, session)


def run_procedure(name: str, table: HoodieTable, named: Mapping[str, str], positional: Sequence[str] = (),
                  conf: Mapping[str, str] | None = None) -> pa.Table:
    """Run procedure ``name`` on ``table``, already open (the ``hoodie`` command line's way in): its ``table``
    argument is ``table``'s path unless given; ``conf`` as ``call``'s."""
    proc = procedure(name)
    if not positional and any(p.name == "table" for p in proc.parameters):
        named = {"table": table.path, **named}
    rows = proc.run(table, proc.bind(named, positional), dict(conf or {}))
    return pa.Table.from_pylist([dict(zip(proc.output.names, row)) for row in rows], schema=proc.output)
