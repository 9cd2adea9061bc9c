"""Clustering procedures with Hudi 0.15's arguments and result columns (``RunClusteringProcedure``,
``ShowClusteringProcedure``): ``timestamp``, ``input_group_size``, ``state`` and ``involved_partitions``
(``*`` unless ``show_involved_partition``) of each clustering instant."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from hoodie_datasource.config import keys as k
from hoodie_datasource.config.property import parse_bool, parse_int
from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.hoodie_table import HoodieTable
from hoodie_datasource.procedures.procedure import Parameter, Procedure, Rows, parse_options, refuse_unsupported
from hoodie_datasource.timeline.timeline import Timeline

_CLUSTERINGS = pa.schema([("timestamp", pa.string()), ("input_group_size", pa.int32()), ("state", pa.string()),
                          ("involved_partitions", pa.string())])
_OPS = ("schedule", "execute", "scheduleandexecute")


def _clusterings(timeline: Timeline, show_partitions: bool, only: list[str] | None = None) -> Rows:
    """The clustering instants (every state), newest first: ``only`` those when given."""
    rows = []
    for instant in reversed(timeline.instants):
        if only is not None and instant.timestamp not in only:
            continue
        plan = timeline.clustering_plan(instant)
        if plan is None:
            continue
        groups = plan.get("inputGroups") or ()
        partitions = sorted({s.get("partitionPath") or "" for g in groups for s in g.get("slices") or ()})
        rows.append((instant.timestamp, len(groups), instant.state.name,
                     ",".join(partitions) if show_partitions else "*"))
    return rows


def _run_clustering(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    """``op``: ``schedule`` a plan, ``execute`` the pending plans (or ``instants``), ``scheduleAndExecute`` (the
    default) both. ``order`` and ``order_strategy`` set the sort columns and the layout; ``selected_partitions``
    the partitions a new plan looks at."""
    refuse_unsupported(table, "run_clustering", args, predicate=None)
    op = (args["op"] or "scheduleAndExecute").lower()
    if op not in _OPS:
        raise HoodieConfigError(f"CALL run_clustering: op {args['op']!r} is not one of schedule, execute, "
                                "scheduleAndExecute")
    options = {**conf, **parse_options(args["options"])}
    if args["order"]:
        options[k.CLUSTERING_SORT_COLUMNS.key] = args["order"]
    if args["order_strategy"]:
        options[k.LAYOUT_OPTIMIZE_STRATEGY.key] = args["order_strategy"]
    if args["selected_partitions"]:
        options[k.CLUSTERING_PARTITIONS_SELECTED.key] = args["selected_partitions"]
    pending = [p.instant_time for p in table.pending_clustering()]
    chosen = pending
    if args["instants"]:
        chosen = sorted(t.strip() for t in args["instants"].split(",") if t.strip())
        missing = [t for t in chosen if t not in pending]
        if missing:
            raise HoodieConfigError(f"CALL run_clustering: no pending clustering {', '.join(missing)}; pending: "
                                    f"{', '.join(pending) or 'none'}")
        op = "execute"
    if op != "execute":
        scheduled = table.schedule_clustering(**options)
        chosen = [scheduled] if scheduled else ([] if op == "schedule" else chosen)
    if op != "schedule":
        for instant_time in chosen:
            table.run_clustering(instant_time, **options)
    return _clusterings(table.timeline(), args["show_involved_partition"], chosen)


def _show_clustering(table: HoodieTable, args: dict[str, Any], conf: dict[str, str]) -> Rows:
    return _clusterings(table.timeline(), args["show_involved_partition"])[:args["limit"]]


CLUSTERING_PROCEDURES = (
    Procedure("run_clustering", (
        Parameter("table"), Parameter("path"), Parameter("predicate"), Parameter("order"),
        Parameter("show_involved_partition", default=False, parse=parse_bool), Parameter("op"),
        Parameter("order_strategy"), Parameter("options"), Parameter("instants"), Parameter("selected_partitions"),
    ), _CLUSTERINGS, _run_clustering,
              doc="Clustering: `op => 'schedule'` plans one, `'execute'` runs the pending plans (or `instants`), "
                  "`'scheduleAndExecute'` (the default) both; `order` and `order_strategy` (linear, z-order, "
                  "hilbert) set the sort columns and layout, `selected_partitions` the partitions. The `predicate` "
                  "argument is refused. Returns the clusterings run."),
    Procedure("show_clustering", (
        Parameter("table"), Parameter("path"), Parameter("limit", default=20, parse=parse_int),
        Parameter("show_involved_partition", default=False, parse=parse_bool),
    ), _CLUSTERINGS, _show_clustering, doc="The clusterings on the timeline, newest first, with their state."),
)
