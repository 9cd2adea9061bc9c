"""``python -m hoodie_datasource.cli`` (also the ``hoodie`` console script).

Exit codes: 0 done (``validate``: the table is sound); 1 a failure (``validate``: problems found); 2 bad usage
(an unknown command or option, a bad option value: a ``HoodieConfigError``). A ``HoodieError`` prints one line on
stderr, its traceback only with ``--debug``.
"""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Sequence

import click

from hoodie_datasource.cli.app import hoodie
from hoodie_datasource.cli.context import CliState
from hoodie_datasource.errors import HoodieConfigError, HoodieError

USAGE_ERROR = 2
FAILURE = 1


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    root = logging.getLogger()
    level = root.level  # --debug lowers it for this run only
    state = CliState()
    try:
        code = hoodie.main(list(sys.argv[1:] if argv is None else argv), prog_name="hoodie", obj=state,
                           standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.Abort:
        click.echo("Aborted", err=True)
        return FAILURE
    except HoodieError as exc:
        if state.debug:
            click.echo(traceback.format_exc(), err=True, nl=False)
        click.echo(f"error: {type(exc).__name__}: {exc}", err=True)
        return USAGE_ERROR if isinstance(exc, HoodieConfigError) else FAILURE
    finally:
        root.setLevel(level)
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    sys.exit(main())
