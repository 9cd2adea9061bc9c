"""Hudi's savepoint procedures (``CreateSavepointProcedure``, ``ShowSavepointsProcedure``,
``DeleteSavepointProcedure``, ``RollbackToSavepointProcedure``) with their argument names and result columns,
run through the ``HoodieTable`` facade (``services.savepoint``, ``services.restore``).

An empty ``commit_time`` or ``instant_time`` names the latest commit (``create_savepoint``) or the latest
savepoint (the others), as in Hudi; ``delete_savepoint`` takes several, comma-separated. Hudi's procedures answer
``false`` when the savepoint action fails; these raise the error, which says why."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from hoodie_datasource.errors import HoodieConfigError, SavepointError
from hoodie_datasource.hoodie_table import HoodieTable
from hoodie_datasource.procedures.procedure import Parameter, Procedure, Rows

_TABLE, _PATH = Parameter("table"), Parameter("path")


def _savepoint_named(table: HoodieTable, instant_time: str | None, name: str) -> list[str]:
    """The savepoints ``instant_time`` names (comma-separated), or the latest one when it is empty."""
    savepoints = [s.timestamp for s in table.timeline().savepoints]
    if not savepoints:
        raise SavepointError(f"CALL {name}: {table.path} has no savepoint")
    wanted = [t.strip() for t in (instant_time or "").split(",") if t.strip()] or savepoints[-1:]
    missing = [t for t in wanted if t not in savepoints]
    if missing:
        raise SavepointError(f"CALL {name}: no savepoint {', '.join(missing)} in {table.path}; its savepoints: "
                             f"{', '.join(savepoints)}")
    return wanted


def _create_savepoint(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    table.create_savepoint(args["commit_time"] or None, args["user"], args["comments"], **conf)
    return [(True,)]


def _show_savepoints(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    return [(s.instant_time,) for s in reversed(table.show_savepoints())]


def _delete_savepoint(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    for instant_time in _savepoint_named(table, args["instant_time"], "delete_savepoint"):
        table.delete_savepoint(instant_time, **conf)
    return [(True,)]


def _rollback_to_savepoint(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    named = _savepoint_named(table, args["instant_time"], "rollback_to_savepoint")
    if len(named) > 1:
        raise HoodieConfigError(f"CALL rollback_to_savepoint: name one savepoint, got {args['instant_time']!r}")
    table.rollback_to_savepoint(named[0], **conf)
    return [(True,)]


SAVEPOINT_PROCEDURES = (
    Procedure("create_savepoint", (_TABLE, Parameter("commit_time", default=""), Parameter("user", default=""),
                                   Parameter("comments", default=""), _PATH),
              pa.schema([("create_savepoint_result", pa.bool_())]), _create_savepoint,
              doc="Savepoint the completed commit `commit_time` (the latest when empty): the cleaner keeps its files "
                  "and `rollback_to_savepoint` can restore the table to it."),
    Procedure("show_savepoints", (_TABLE, _PATH), pa.schema([("savepoint_time", pa.string())]), _show_savepoints,
              doc="The savepoints, newest first."),
    Procedure("delete_savepoint", (_TABLE, Parameter("instant_time", default=""), _PATH),
              pa.schema([("delete_savepoint_result", pa.bool_())]), _delete_savepoint,
              doc="Delete the savepoints `instant_time` names (comma-separated; the latest when empty)."),
    Procedure("rollback_to_savepoint", (_TABLE, Parameter("instant_time", default=""), _PATH),
              pa.schema([("rollback_savepoint_result", pa.bool_())]), _rollback_to_savepoint,
              doc="Restore the table to the savepoint `instant_time` (the latest when empty): every commit, compaction "
                  "and clustering after it is rolled back, and the metadata table is built again."),
)
