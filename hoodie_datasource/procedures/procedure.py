"""What a SQL procedure is: its parameters (Hudi's argument names), its result columns and the function
that runs it over a ``HoodieTable``, and the binding of a ``CALL``'s arguments to those parameters.

Kept apart from the registry, which imports the procedures (``timeline_procedures``, ``fs_procedures``,
``metadata_procedures``, ``savepoint_procedures``), which import this: the imports point one way. An unknown,
repeated, missing or unsupported argument gets a clear error naming the procedure's valid arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from hoodie_datasource.config.property import parse_int
from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.hoodie_table import HoodieTable

Rows = list[tuple[Any, ...]]


@dataclass(frozen=True)
class Parameter:
    name: str
    required: bool = False
    default: Any = None
    parse: Callable[[str, str], Any] = lambda _key, value: value


@dataclass(frozen=True)
class Procedure:
    """``doc`` says what the procedure does for a user: the documentation's procedure reference is generated
    from the registry."""

    name: str
    parameters: tuple[Parameter, ...]
    output: pa.Schema
    run: Callable[[HoodieTable, dict[str, Any], dict[str, str]], Rows]
    doc: str = ""

    def bind(self, named: Mapping[str, str], positional: Sequence[str]) -> dict[str, Any]:
        """The arguments by parameter name (in any case: ``targetcolumns`` is ``targetColumns``), parsed, with
        defaults; a clear error for anything else."""
        valid = ", ".join(p.name for p in self.parameters)
        if len(positional) > len(self.parameters):
            raise HoodieConfigError(f"CALL {self.name}: takes at most {len(self.parameters)} arguments ({valid}), "
                                    f"got {len(positional)}")
        given = dict(zip((p.name for p in self.parameters), positional))
        by_lower = {p.name.lower(): p.name for p in self.parameters}  # SQL names are case-insensitive
        for given_name, value in named.items():
            name = by_lower.get(given_name.lower())
            if name is None:
                raise HoodieConfigError(f"CALL {self.name}: unknown argument {given_name!r}; its arguments are: "
                                        f"{valid}")
            if name in given:
                raise HoodieConfigError(f"CALL {self.name}: argument {name!r} given twice")
            given[name] = value
        args = {}
        for p in self.parameters:
            if p.name in given:
                args[p.name] = p.parse(p.name, given[p.name])
            elif p.required:
                raise HoodieConfigError(f"CALL {self.name}: argument {p.name!r} is required; its arguments are: {valid}")
            else:
                args[p.name] = p.default
        return args


TABLE = Parameter("table", required=True)
LIMIT = Parameter("limit", default=10, parse=parse_int)


def refuse_unsupported(table: HoodieTable, name: str, args: dict[str, Any], **supported: Any) -> None:
    """Arguments of Hudi's procedure supported only with these values (their defaults): any other value
    is an error, never silently ignored."""
    given = [arg for arg, value in supported.items() if args[arg] != value]
    if given:
        raise HoodieConfigError(f"CALL {name}: argument(s) {', '.join(given)} are not supported on {table.path}")


def parse_options(text: str | None) -> dict[str, str]:
    """Hudi's ``options => 'k1=v1,k2=v2'`` (``HoodieCLIUtils.extractOptions``)."""
    pairs = [item.split("=", 1) for item in (text or "").split(",") if item.strip()]
    bad = [item for item in pairs if len(item) != 2]
    if bad:
        raise HoodieConfigError(f"options must be 'key=value' pairs separated by commas, got {text!r}")
    return {k.strip(): v.strip() for k, v in pairs}
