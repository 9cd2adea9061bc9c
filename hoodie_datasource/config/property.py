"""One declared option: its Hudi key, short aliases, default, valid choices and parser.

Spark lower-cases option keys (CaseInsensitiveDict), so every key and alias is matched
lower-cased. Resolution happens once, up front, so a bad value fails at ``save()``/``load()``
with a message that names the key, the value and the valid choices.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hoodie_datasource.errors import HoodieConfigError


def parse_bool(key: str, value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise HoodieConfigError(f"Option {key!r} must be true or false, got {value!r}")


def parse_int(key: str, value: str) -> int:
    try:
        return int(value.strip())
    except ValueError:
        raise HoodieConfigError(f"Option {key!r} must be an integer, got {value!r}") from None


def parse_float(key: str, value: str) -> float:
    try:
        return float(value.strip())
    except ValueError:
        raise HoodieConfigError(f"Option {key!r} must be a number, got {value!r}") from None


def parse_str(key: str, value: str) -> str:
    return value.strip()


def parse_field_list(key: str, value: str) -> tuple[str, ...]:
    """A comma separated list of column names; empty means none."""
    return tuple(part.strip() for part in value.split(",") if part.strip())


def parse_path_list(key: str, value: str) -> tuple[str, ...]:
    """A comma separated list of partition paths, kept as written (a path may hold spaces); empty means none."""
    return tuple(part for part in value.split(",") if part)


@dataclass(frozen=True)
class ConfigProperty:
    """A declared option. ``key`` is the full Apache Hudi key (``hudi=False``: a key of this library's own,
    where Hudi has none); ``aliases`` are accepted too. ``doc`` says what it does: the option reference
    of the documentation is generated from it."""

    key: str
    default: Any = None
    aliases: tuple[str, ...] = ()
    choices: tuple[str, ...] | None = None
    parser: Callable[[str, str], Any] = parse_str
    doc: str = ""
    value_aliases: tuple[tuple[str, str], ...] = ()  # (alias, choice): other spellings of a choice
    hudi: bool = True

    @property
    def names(self) -> tuple[str, ...]:
        return (self.key, *self.aliases)

    def parse(self, given_key: str, raw: str) -> Any:
        if self.choices is not None:
            normalized = raw.strip().lower()
            by_lower = {c.lower(): c for c in self.choices} | {a.lower(): c for a, c in self.value_aliases}
            if normalized not in by_lower:
                spellings = [*self.choices, *(a for a, _ in self.value_aliases)]
                raise HoodieConfigError(
                    f"Invalid value {raw!r} for option {given_key!r}; "
                    f"valid values are: {', '.join(spellings)}"
                )
            return by_lower[normalized]
        return self.parser(given_key, raw)


class OptionCatalog:
    """A set of ConfigProperty, looked up by any of their names (lower-cased)."""

    def __init__(self, properties: Iterable[ConfigProperty]):
        self._by_name: dict[str, ConfigProperty] = {}
        for prop in properties:
            for name in prop.names:
                self._by_name[name.lower()] = prop

    def known(self, name: str) -> bool:
        return name.lower() in self._by_name

    def resolve(self, options: Mapping[str, str], prop: ConfigProperty) -> Any:
        """The parsed value of ``prop`` from ``options``, or its default.

        When several of its names are given with different values, that is an error rather than
        a silent pick.
        """
        found = [(name, options[name]) for name in options if name.lower() in {n.lower() for n in prop.names}]
        if not found:
            return prop.default
        values = {raw.strip() for _, raw in found}
        if len(values) > 1:
            given = ", ".join(f"{k}={v!r}" for k, v in found)
            raise HoodieConfigError(f"Conflicting values for option {prop.key!r}: {given}")
        name, raw = found[0]
        return prop.parse(name, raw)

    def check_unknown(self, options: Mapping[str, str], passthrough: Iterable[str] = ()) -> None:
        """Reject unknown short options (typos); unknown ``hoodie.*`` keys are tolerated.

        Apache Hudi has hundreds of ``hoodie.*`` settings that jobs carry along; rejecting them
        would break ported jobs, so only keys outside that namespace must be known.
        """
        allowed = {p.lower() for p in passthrough}
        for name in options:
            lowered = name.lower()
            if lowered in self._by_name or lowered in allowed or lowered.startswith(("hoodie.", "spark.")):
                continue
            raise HoodieConfigError(f"Unknown option {name!r}{did_you_mean(lowered, self._by_name)}")


def did_you_mean(given: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'x' or 'y'?"`` naming the choices closest to a misspelt ``given``, or ``""``."""
    close = difflib.get_close_matches(given.lower(), list(choices), n=3)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
