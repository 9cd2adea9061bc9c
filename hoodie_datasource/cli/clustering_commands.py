"""The clustering commands: ``clustering show|schedule|run``, over ``HoodieTable``'s clustering API and the
``show_clustering`` procedure (Hudi's ``ClusteringCommand``: ``clustering schedule``, ``clustering run``,
``clustering scheduleAndExecute``). They run in this process (the local engine: no Spark)."""

from __future__ import annotations

import click
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.cli.context import Invocation, table_command
from hoodie_datasource.cli.plan_runs import report_completed, report_scheduled, run_plans
from hoodie_datasource.procedures import run_procedure

_ALL = str(2 ** 31 - 1)
_PLAN_COLUMNS = ["instant_time", "input_groups", "input_files", "input_bytes", "partitions", "state"]


@click.group(short_help="Show, schedule and run clustering.")
def clustering() -> None:
    """Clustering: small file groups rewritten into fewer, larger (and sorted) ones, as a replacecommit (Hudi's
    'clustering')."""


def _clusterings(run: Invocation, instants: list[str] | None = None) -> pa.Table:
    rows = run_procedure("show_clustering", run.table, {"limit": _ALL, "show_involved_partition": "true"})
    return rows if instants is None else rows.filter(pc.is_in(rows["timestamp"], pa.array(instants)))


def _pending_plans(run: Invocation, instants: list[str] | None = None) -> None:
    plans = [{"instant_time": p.instant_time, "input_groups": p.input_groups, "input_files": p.input_files,
              "input_bytes": p.input_bytes, "partitions": list(p.partitions), "state": p.state}
             for p in run.table.pending_clustering() if instants is None or p.instant_time in instants]
    if run.output.is_json:
        run.output.document(plans)
        return
    run.output.table(_PLAN_COLUMNS, [[*list(p.values())[:4], ",".join(p["partitions"]), p["state"]] for p in plans],
                     right=[False, True, True, True, False, False])


@clustering.command("show", short_help="The clusterings on the timeline.")
@table_command
@click.option("--pending", is_flag=True, help="only the pending plans, with the files and bytes each rewrites")
def clustering_show(run: Invocation, pending: bool) -> None:
    """The clusterings on the timeline, newest first: instant, file groups planned, state, partitions
    ('show_clustering'); with --pending, the pending plans with the files and bytes each rewrites."""
    if pending:
        _pending_plans(run)
    else:
        run.output.rows(_clusterings(run))


@clustering.command("schedule", short_help="Plan a clustering without running it.")
@table_command
def clustering_schedule(run: Invocation) -> None:
    """Plan a clustering of the small file groups ('hoodie.clustering.plan.strategy.*' and
    'hoodie.layout.optimize.*' options) without running it; prints the plan, none when nothing needs one."""
    instant = run.table.schedule_clustering(**run.options)
    report_scheduled(run, "cluster", instant, lambda chosen: _pending_plans(run, chosen))


@clustering.command("run", short_help="Run pending clusterings (or schedule one and run it).")
@table_command
@click.option("--instant", default=None, help="run this pending plan only [default: every pending plan, or a new "
                                              "one when none is pending]")
def clustering_run(run: Invocation, instant: str | None) -> None:
    """Run pending clustering plans in this process (Hudi's 'scheduleAndExecute' without --instant: schedule one
    when none is pending); prints the clusterings completed."""
    table = run.table
    pending = [p.instant_time for p in table.pending_clustering()]
    completed = run_plans("clustering", table.base_path, pending, instant,
                          lambda: table.schedule_clustering(**run.options),
                          lambda t: table.run_clustering(t, **run.options))
    report_completed(run, "cluster", completed, lambda done: run.output.rows(_clusterings(run, done)))
