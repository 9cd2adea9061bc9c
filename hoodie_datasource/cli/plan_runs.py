"""Running a table service's plans from the command line (compaction, clustering): the plan named, or every
pending one, or, when none is pending, a new one scheduled and run (Hudi's ``scheduleAndExecute``), with a
progress bar on stderr; and what scheduling and running print."""

from __future__ import annotations

from collections.abc import Callable

from hoodie_datasource.cli.context import Invocation
from hoodie_datasource.cli.output import progress_bar
from hoodie_datasource.errors import TimelineError


def run_plans(service: str, where: str, pending: list[str], instant: str | None,
              schedule: Callable[[], str | None], execute: Callable[[str], object]) -> list[str]:
    """Run ``instant`` (which must be pending), or every ``pending`` plan, or the one ``schedule`` makes when none
    is; returns the instants run, in order. ``service`` and ``where`` name the service and the table in messages."""
    if instant is not None and instant not in pending:
        raise TimelineError(f"No pending {service} {instant} on {where}; pending: {', '.join(pending) or 'none'}")
    chosen = [instant] if instant else list(pending)
    if not chosen:
        scheduled = schedule()
        chosen = [scheduled] if scheduled else []
    with progress_bar(service.capitalize(), total=len(chosen)) as bar:
        for done, instant_time in enumerate(chosen, 1):
            bar.update(bar.task_ids[0], description=f"{service.capitalize()} {instant_time}")
            execute(instant_time)
            bar.update(bar.task_ids[0], completed=done)
    return chosen


def report_scheduled(run: Invocation, verb: str, instant: str | None, show: Callable[[list[str]], None]) -> None:
    """What ``schedule`` printed: ``{"scheduled": instant}``, or ``show`` of the plan (``verb``: what the service
    does, for the message when nothing was scheduled)."""
    if run.output.is_json:
        run.output.document({"scheduled": instant})
    elif instant is None:
        run.output.message(f"Nothing to {verb}: nothing scheduled")
    else:
        show([instant])


def report_completed(run: Invocation, verb: str, completed: list[str], show: Callable[[list[str]], None]) -> None:
    """What ``run`` printed: ``{"completed": instants}``, or ``show`` of the plans run."""
    if run.output.is_json:
        run.output.document({"completed": completed})
    elif not completed:
        run.output.message(f"Nothing to {verb}")
    else:
        show(completed)
