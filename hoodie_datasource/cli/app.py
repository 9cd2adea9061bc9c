"""The ``hoodie`` command group: every command, each with ``--help``."""

from __future__ import annotations

import click

from hoodie_datasource.cli.clustering_commands import clustering
from hoodie_datasource.cli.context import CliState, set_debug
from hoodie_datasource.cli.inspect_commands import commit, commits, fsview, show, stats
from hoodie_datasource.cli.savepoint_commands import restore, savepoint
from hoodie_datasource.cli.service_commands import clean, compaction, rollback, validate


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--debug", is_flag=True, expose_value=False, callback=set_debug, is_eager=True,
              help="log at DEBUG and show the traceback of a failure")
@click.version_option(package_name="hoodie-datasource")
@click.pass_context
def hoodie(ctx: click.Context) -> None:
    """Look at and look after an Apache Hudi table (table version 6) without Spark:
    hoodie COMMAND TABLE [ARGS]... where TABLE is a local path or a URI (s3://, gs://, abfs://, az://, hdfs://).

    Storage settings go in --option key=value (e.g. hoodie.storage.s3.endpoint=...), or come from the
    environment (AWS_*, AZURE_STORAGE_*, GOOGLE_APPLICATION_CREDENTIALS) as for the library."""
    ctx.ensure_object(CliState)


for _command in (show, commits, commit, fsview, stats, compaction, clustering, clean, rollback, savepoint, restore,
                 validate):
    hoodie.add_command(_command)
