"""What every ``hoodie`` command shares: the table URI argument, ``--output``, ``--option key=value`` (repeatable)
and ``--debug``; opening the table; and the run's state ``main`` reads once a command has failed (whether to show
the traceback).

The options given are the table's options: the storage settings (``hoodie.storage.*``, Hadoop's ``fs.*`` keys a
Spark job would set) that open any store the library reads (local paths, ``s3://``, ``abfs://``, ``gs://``...), and
the settings of the service a command runs (``hoodie.cleaner.*``, ``hoodie.compaction.*``).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click

from hoodie_datasource.cli.output import FORMATS, TABLE, Output
from hoodie_datasource.hoodie_table import HoodieTable


@dataclass
class CliState:
    """The run's state, shared by the group and its commands (click's ``obj``)."""

    debug: bool = False


def set_debug(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    """``--debug``: logs at DEBUG on stderr, and a failure's traceback."""
    if value:
        ctx.ensure_object(CliState).debug = True
        logging.getLogger().setLevel(logging.DEBUG)
    return value


def _parse_options(_ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]) -> dict[str, str]:
    options = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{item!r} is not key=value (e.g. hoodie.storage.s3.endpoint=http://host:9000)")
        options[key.strip()] = value.strip()
    return options


@dataclass(frozen=True)
class Invocation:
    """One command's table and how it prints."""

    table: HoodieTable
    options: dict[str, str]
    output: Output


def table_command(function: Callable[..., Any]) -> Callable[..., Any]:
    """Give a command the ``TABLE`` argument (a path or URI) and the shared options, and call it with an
    ``Invocation`` in their place."""

    @click.argument("table_uri", metavar="TABLE")
    @click.option("--output", "output_format", type=click.Choice(FORMATS), default=TABLE, show_default=True,
                  help="aligned tables for people, or one JSON document on stdout for scripts")
    @click.option("--option", "options", multiple=True, callback=_parse_options, metavar="KEY=VALUE",
                  help="a table option: storage settings (hoodie.storage.s3.endpoint=...) or the service's "
                       "(hoodie.cleaner.commits.retained=...); repeatable")
    @click.option("--debug", is_flag=True, expose_value=False, callback=set_debug, is_eager=True,
                  help="log at DEBUG and show the traceback of a failure")
    @functools.wraps(function)
    def command(table_uri: str, output_format: str, options: dict[str, str], **kwargs: Any) -> Any:
        invocation = Invocation(HoodieTable(table_uri, options), options, Output(output_format))
        return function(invocation, **kwargs)

    return command
