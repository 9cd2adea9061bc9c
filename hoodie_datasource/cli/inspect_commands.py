"""The commands that only read the table (no Spark, nothing written): ``show``, ``commits``, ``commit``, ``fsview``
and ``stats wa|filesizes``. Each answers with the Hudi procedure of the same question (``procedures``), so the
command line, ``CALL`` and Python agree; the names follow Hudi's CLI (``TableCommand``, ``CommitsCommand``,
``FileSystemViewCommand``, ``StatsCommand``).
"""

from __future__ import annotations

import click

from hoodie_datasource.cli.context import Invocation, table_command
from hoodie_datasource.procedures import run_procedure
from hoodie_datasource.table.metadata_table import METADATA_TABLE

_ALL = 2 ** 31 - 1  # a procedure's limit when the command is given none: every row
_LIMIT = click.option("--limit", type=click.IntRange(min=1), default=None, help="at most this many rows [default: all]")


def _limit(limit: int | None) -> str:
    return str(limit or _ALL)


@click.command(short_help="The table's configuration (hoodie.properties).")
@table_command
def show(run: Invocation) -> None:
    """The table's configuration: where it is, its type, and every property of its hoodie.properties (Hudi's
    'desc')."""
    table = run.table
    config = table.config
    properties = dict(sorted(config.raw))
    described = {"base_path": table.base_path, "table_type": config.table_type, "table_name": config.name,
                 "table_version": config.version, "metadata_table": table.storage.uri_of(METADATA_TABLE)
                 if table.timeline().metadata_folder else None}
    if run.output.is_json:
        run.output.document({**described, "properties": properties})
        return
    run.output.table(["property", "value"], [*described.items(), *properties.items()])


@click.command(short_help="The completed commits, newest first.")
@table_command
@_LIMIT
@click.option("--archived", is_flag=True, help="the commits archival moved to the archive log instead")
@click.option("--start-ts", default="", help="with --archived: after this instant time [default: the first]")
@click.option("--end-ts", default="", help="with --archived: up to this instant time [default: the last]")
def commits(run: Invocation, limit: int | None, archived: bool, start_ts: str, end_ts: str) -> None:
    """The completed commits of the active timeline (writes and compactions), newest first, with what each
    wrote ('show_commits'); with --archived, those of the archive log ('show_archived_commits')."""
    if archived:
        rows = run_procedure("show_archived_commits", run.table,
                             {"limit": _limit(limit), "start_ts": start_ts, "end_ts": end_ts})
    else:
        if start_ts or end_ts:
            raise click.UsageError("--start-ts and --end-ts go with --archived")
        rows = run_procedure("show_commits", run.table, {"limit": _limit(limit)})
    run.output.rows(rows)


@click.command(short_help="What one commit wrote, per partition or file.")
@table_command
@click.argument("instant")
@click.option("--files", is_flag=True, help="one row per file written, not per partition")
@_LIMIT
def commit(run: Invocation, instant: str, files: bool, limit: int | None) -> None:
    """What the completed commit INSTANT wrote, per partition ('show_commit_partitions') or with --files per
    file ('show_commit_files')."""
    name = "show_commit_files" if files else "show_commit_partitions"
    run.output.rows(run_procedure(name, run.table, {"instant_time": instant, "limit": _limit(limit)}))


@click.command(short_help="File groups and their file slices.")
@table_command
@click.option("--partition", default=None, help="only the partitions this glob matches (e.g. '2024/*')")
@click.option("--latest", is_flag=True, help="only the latest file slice of each file group")
@click.option("--max-instant", default="", help="the view as of this instant time (included)")
@_LIMIT
def fsview(run: Invocation, partition: str | None, latest: bool, max_instant: str, limit: int | None) -> None:
    """The file system view: each file group's file slices, base file and log files ('show_fsview_all'), or
    with --latest the latest slice of each ('show_fsview_latest')."""
    args = {"limit": _limit(limit), "max_instant": max_instant, "include_max": "true"}
    if partition:
        args["path_regex"] = partition
    rows = run_procedure("show_fsview_latest" if latest else "show_fsview_all", run.table, args)
    run.output.rows(rows)


@click.group(short_help="Write amplification and file sizes.")
def stats() -> None:
    """Statistics of the table's writes and files (Hudi's 'stats')."""


@stats.command("wa", short_help="Records written over records updated, per commit.")
@table_command
@_LIMIT
def write_amplification(run: Invocation, limit: int | None) -> None:
    """Write amplification: per commit of the active timeline, the records written over the records updated
    ('stats_wa'), the total last."""
    run.output.rows(run_procedure("stats_wa", run.table, {"limit": _limit(limit)}))


@stats.command("filesizes", short_help="Data file sizes per instant.")
@table_command
@click.option("--partition", default="", help="only the partitions this glob matches [default: all]")
@_LIMIT
def file_sizes(run: Invocation, partition: str, limit: int | None) -> None:
    """The sizes of the data files in storage per instant: min, 10th, 50th, mean, 95th, max, count and
    standard deviation ('stats_file_sizes'), all files last."""
    run.output.rows(run_procedure("stats_file_sizes", run.table, {"partition_path": partition,
                                                                  "limit": _limit(limit)}))
