"""The savepoint commands: ``savepoint create|list|delete`` and ``restore``, over ``HoodieTable``'s savepoint API
(Hudi's ``SavepointsCommand``: ``savepoint create``, ``savepoints show``, ``savepoint delete``,
``savepoint rollback``)."""

from __future__ import annotations

import click

from hoodie_datasource.cli.context import Invocation, table_command


@click.group(short_help="Create, list and delete savepoints.")
def savepoint() -> None:
    """Savepoints: a completed commit whose files the cleaner keeps and that 'restore' returns the table to."""


@savepoint.command("create", short_help="Savepoint a completed commit.")
@table_command
@click.option("--instant", default=None, help="the completed commit to savepoint [default: the latest]")
@click.option("--user", default="", help="who makes it (recorded in the savepoint)")
@click.option("--comments", default="", help="why (recorded in the savepoint)")
def savepoint_create(run: Invocation, instant: str | None, user: str, comments: str) -> None:
    """Savepoint the completed commit --instant (the latest by default): the cleaner keeps its files, and
    'restore' can return the table to it."""
    saved = run.table.create_savepoint(instant, user=user, comments=comments, **run.options)
    if run.output.is_json:
        run.output.document({"savepoint": saved})
    else:
        run.output.message(f"Savepointed {saved}")


@savepoint.command("list", short_help="The savepoints, oldest first.")
@table_command
def savepoint_list(run: Invocation) -> None:
    """The savepoints, oldest first: the commit each keeps, who made it and why, when, and its partitions."""
    rows = [{"instant_time": s.instant_time, "user": s.user, "comments": s.comments, "saved_at": s.saved_at,
             "partitions": list(s.partitions)} for s in run.table.show_savepoints()]
    if run.output.is_json:
        run.output.document(rows)
        return
    run.output.table(["instant_time", "user", "comments", "saved_at", "partitions"],
                     [[*list(r.values())[:4], ",".join(r["partitions"])] for r in rows],
                     right=[False, False, False, True, False])


@savepoint.command("delete", short_help="Delete a savepoint.")
@table_command
@click.argument("instant")
def savepoint_delete(run: Invocation, instant: str) -> None:
    """Delete the savepoint of INSTANT: the cleaner may remove its files from then on."""
    run.table.delete_savepoint(instant, **run.options)
    if run.output.is_json:
        run.output.document({"deleted": instant})
    else:
        run.output.message(f"Deleted the savepoint of {instant}")


@click.command(short_help="Restore the table to a savepoint.")
@table_command
@click.argument("instant")
def restore(run: Invocation, instant: str) -> None:
    """Restore the table to the savepoint INSTANT: every write, compaction and clustering after it is rolled back
    (a restore instant records them); the metadata table is built again."""
    restored = run.table.rollback_to_savepoint(instant, **run.options)
    if run.output.is_json:
        run.output.document({"restored_to": instant, "restore_instant": restored})
    else:
        run.output.message(f"Restored to {instant} (restore instant {restored})")
