"""The commands that change the table or check it whole: ``compaction show|schedule|run``, ``clean``,
``rollback`` and ``validate``. They run in this process through ``HoodieTable`` (the local engine: no Spark), with
Hudi's semantics (``CompactionCommand``, ``CleansCommand``, ``RollbacksCommand``); long work shows a progress bar
on stderr.
"""

from __future__ import annotations

import click
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.cli.context import Invocation, table_command
from hoodie_datasource.cli.output import progress_bar
from hoodie_datasource.cli.plan_runs import report_completed, report_scheduled, run_plans
from hoodie_datasource.procedures import run_procedure
from hoodie_datasource.timeline.instant import COMPACTION

_ALL = str(2 ** 31 - 1)


@click.group(short_help="Show, schedule and run compactions (MERGE_ON_READ).")
def compaction() -> None:
    """MERGE_ON_READ compaction: show the plans, schedule one, run them (Hudi's 'compaction')."""


def _compactions(run: Invocation, instants: list[str] | None = None) -> pa.Table:
    rows = run_procedure("show_compaction", run.table, {"limit": _ALL})
    return rows if instants is None else rows.filter(pc.is_in(rows["timestamp"], pa.array(instants)))


@compaction.command("show", short_help="The compactions on the timeline.")
@table_command
@click.option("--limit", type=click.IntRange(min=1), default=None, help="at most this many [default: all]")
def compaction_show(run: Invocation, limit: int | None) -> None:
    """The compactions on the timeline, newest first: instant, file groups planned, state ('show_compaction')."""
    rows = _compactions(run)
    run.output.rows(rows.slice(0, limit) if limit else rows)


@compaction.command("schedule", short_help="Plan a compaction without running it.")
@table_command
def compaction_schedule(run: Invocation) -> None:
    """Plan a compaction of the file slices that need one ('hoodie.compact.inline.*' and
    'hoodie.compaction.*' options) without running it; prints its instant, none when nothing needs one."""
    instant = run.table.schedule_compaction(**run.options)
    report_scheduled(run, "compact", instant, lambda chosen: run.output.rows(_compactions(run, chosen)))


@compaction.command("run", short_help="Run pending compactions (or schedule one and run it).")
@table_command
@click.option("--instant", default=None, help="run this pending plan only [default: every pending plan, or a new "
                                              "one when none is pending]")
def compaction_run(run: Invocation, instant: str | None) -> None:
    """Run pending compaction plans (Hudi's 'scheduleAndExecute' without --instant: schedule one when none is
    pending), in this process; prints the compactions completed."""
    table = run.table
    pending = sorted(i.timestamp for i in table.timeline().pending() if i.action == COMPACTION)
    chosen = run_plans("compaction", table.base_path, pending, instant, lambda: table.schedule_compaction(**run.options),
                       lambda t: table.run_compaction(t, **run.options))
    report_completed(run, "compact", chosen, lambda done: run.output.rows(_compactions(run, done)))


@click.command(short_help="Delete the file slices the cleaner no longer retains.")
@table_command
@click.option("--dry-run", is_flag=True, help="list what the clean would delete, deleting nothing")
def clean(run: Invocation, dry_run: bool) -> None:
    """Delete the file slices the cleaner's policy no longer retains ('hoodie.cleaner.policy',
    'hoodie.cleaner.commits.retained', 'hoodie.cleaner.fileversions.retained' as --option), as 'run_clean'
    does; savepointed files are kept. With --dry-run, the files it would delete."""
    if dry_run:
        doomed, retained_from = run.table.clean_plan(**run.options)
        files = [{"partition": p, "file": name} for p, names in sorted(doomed.items()) for name in sorted(names)]
        if run.output.is_json:
            run.output.document({"dry_run": True, "earliest_commit_to_retain": retained_from, "files": files})
            return
        run.output.table(["partition", "file"], [(f["partition"], f["file"]) for f in files],
                         title=f"{len(files)} file(s) to delete, retaining from {retained_from or '-'}")
        return
    rows = run_procedure("run_clean", run.table, {}, conf=run.options)
    if not run.output.is_json and rows.num_rows == 0:
        run.output.message("Nothing to clean")
        return
    run.output.rows(rows)


@click.command(short_help="Roll back the latest completed write.")
@table_command
@click.argument("instant")
def rollback(run: Invocation, instant: str) -> None:
    """Roll back the completed write INSTANT: its files are deleted and it leaves the timeline (a rollback
    instant records it). Only the latest completed write can be rolled back ('rollback_to_instant')."""
    rows = run_procedure("rollback_to_instant", run.table, {"instant_time": instant}, conf=run.options)
    if run.output.is_json:
        run.output.document({"rolled_back": instant, "result": rows["rollback_result"][0].as_py()})
    else:
        run.output.message(f"Rolled back {instant}")


@click.command(short_help="Check the whole table against its timeline.")
@table_command
def validate(run: Invocation) -> None:
    """Check the whole table against its timeline: every file of every completed write exists; no orphan data
    file nor leftover marker; every base file's footer and every log block reads; the metadata table, when there
    is one, lists what storage holds. Exit code 1 with the problems listed, 0 when the table is sound."""
    with progress_bar("Validating files") as bar:
        problems = run.table.validate(lambda done, total: bar.update(bar.task_ids[0], completed=done, total=total))
    found = [{"kind": p.kind.value, "path": p.path, "detail": p.detail} for p in problems]
    if run.output.is_json:
        run.output.document({"valid": not found, "problems": found})
    elif found:
        run.output.table(["kind", "path", "detail"], [list(p.values()) for p in found],
                         title=f"{len(found)} problem(s) in {run.table.base_path}")
    else:
        run.output.message(f"{run.table.base_path}: no problems found")
    if found:
        click.get_current_context().exit(1)
