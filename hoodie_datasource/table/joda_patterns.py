"""Joda-Time date patterns, the ones Hudi's ``TimestampBasedAvroKeyGenerator`` formats partition paths with
(``DateTimeFormat.forPattern``) and parses date strings with, applied to whole Arrow arrays.

A pattern is cut into tokens as Joda's ``DateTimeFormat.parsePatternTo`` cuts it: a run of one letter is a
field (its length is its width, or for month and weekday names short or full text), text in single quotes
is literal (``''`` is a quote), and any other character is literal. A token becomes one string array
(calendar fields of the wall-clock time computed with numpy, zero padded by pyarrow compute; month and weekday
names in English, as Joda prints them in the JVM's usual locale), and the arrays are joined: no Python per row.

Letters Hudi users write are supported; the others (eras, centuries, week years, week numbers, time zone
names, ...) are refused with ``KeyGeneratorConfigError`` naming the letter, before anything is written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.errors import KeyGeneratorConfigError

# the letters we render, with what they are (Joda's DateTimeFormat letters)
RENDERED = {
    "y": "year", "Y": "year of era", "M": "month", "d": "day of month", "D": "day of year", "H": "hour (0-23)",
    "k": "hour (1-24)", "K": "hour (0-11)", "h": "hour (1-12)", "m": "minute", "s": "second",
    "S": "fraction of second", "E": "day of week name", "a": "AM/PM", "Z": "offset (Z, ZZ) or zone id (ZZZ)",
}
# the letters a parse pattern may hold: what pyarrow's strptime reads the way Joda does
_STRPTIME = {"y": "%Y", "M": "%m", "d": "%d", "D": "%j", "H": "%H", "h": "%I", "m": "%M", "s": "%S", "a": "%p",
             "Z": "%z"}


@dataclass(frozen=True)
class Token:
    """A run of one pattern letter (``letter``, ``width`` times), or literal ``text`` (``letter`` empty)."""

    letter: str
    width: int = 0
    text: str = ""


def tokens(pattern: str, option: str) -> tuple[Token, ...]:
    """``pattern`` cut into tokens; a letter Joda knows but we do not render is refused, naming ``option``."""
    out: list[Token] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "'":
            end = i + 1
            text = []
            while end < len(pattern):
                if pattern[end] == "'":
                    if end + 1 < len(pattern) and pattern[end + 1] == "'":
                        text.append("'")
                        end += 2
                        continue
                    break
                text.append(pattern[end])
                end += 1
            out.append(Token("", text="".join(text) if end > i + 1 else "'"))
            i = end + 1
        elif ch.isascii() and ch.isalpha():
            end = i
            while end < len(pattern) and pattern[end] == ch:
                end += 1
            if ch not in RENDERED:
                raise KeyGeneratorConfigError(
                    f"Option {option}={pattern!r}: the pattern letter {ch!r} is not supported; supported letters: "
                    + ", ".join(f"{k} ({v})" for k, v in RENDERED.items()) + "; quote literal text as 'text'")
            out.append(Token(ch, end - i))
            i = end
        else:
            out.append(Token("", text=ch))
            i += 1
    return tuple(out)


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
DAY_MS = 86_400_000


class Fields:
    """The calendar fields of wall-clock times (epoch milliseconds of the local time), computed with numpy on
    the proleptic Gregorian calendar as Joda's ISO chronology does, for any year (pyarrow's calendar functions
    hold years in 16 bits: a millisecond count read as seconds is past them)."""

    def __init__(self, wall_ms: np.ndarray):
        days, self.ms_of_day = np.divmod(wall_ms, DAY_MS)
        # Howard Hinnant's civil_from_days
        z = days + 719468
        era = np.floor_divide(z, 146097)
        doe = z - era * 146097
        yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
        doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
        mp = (5 * doy + 2) // 153
        self.day = doy - (153 * mp + 2) // 5 + 1
        self.month = np.where(mp < 10, mp + 3, mp - 9)
        self.year = yoe + era * 400 + (self.month <= 2)
        march_first_doy = np.where(self.month <= 2, doy - 306, doy + 59)  # days since March 1 -> since January 1
        leap = (self.year % 4 == 0) & ((self.year % 100 != 0) | (self.year % 400 == 0))
        self.day_of_year = np.where(self.month <= 2, march_first_doy, march_first_doy + leap) + 1
        self.weekday = (days + 3) % 7  # 0 = Monday (1970-01-01 was a Thursday)
        self.hour = self.ms_of_day // 3_600_000
        self.minute = self.ms_of_day // 60_000 % 60
        self.second = self.ms_of_day // 1000 % 60
        self.millis = self.ms_of_day % 1000


def _padded(values: np.ndarray, width: int) -> pa.Array:
    text = pc.cast(pa.array(values, pa.int64()), pa.string())
    return pc.utf8_lpad(text, width=width, padding="0") if width > 1 else text


def _named(names: tuple[str, ...], index: np.ndarray, width: int) -> pa.Array:
    """Joda's English text: the full name for 4 letters or more, else its first three letters."""
    table = pa.array([n if width >= 4 else n[:3] for n in names], pa.string())
    return pc.take(table, pa.array(index, pa.int64()))


def _offset_text(offsets: np.ndarray, colon: bool) -> pa.Array:
    """``+HHMM`` (``+HH:MM`` when ``colon``) of offsets in seconds, as Joda prints ``Z`` / ``ZZ``."""
    sign = pc.if_else(pa.array(offsets < 0), "-", "+")
    minutes = np.abs(offsets) // 60
    return pc.binary_join_element_wise(sign, _padded(minutes // 60, 2), ":" if colon else "",
                                       _padded(minutes % 60, 2), "")


def render(wall_ms: np.ndarray, offsets: np.ndarray, zone_id: str, pattern: tuple[Token, ...]) -> pa.Array:
    """Each wall-clock time of ``wall_ms`` (int64 epoch milliseconds of the local time) printed by ``pattern``;
    ``offsets`` (seconds, one per time) are its offsets from UTC, printed by ``Z``/``ZZ``, and ``zone_id`` by
    ``ZZZ``."""
    # the times print alike down to the pattern's finest field: each distinct one is printed once
    step = min((_RESOLUTION_MS.get(t.letter, DAY_MS) for t in pattern if t.letter), default=DAY_MS)
    keys = wall_ms // step
    if any(t.letter == "Z" for t in pattern):
        if len(keys) and np.abs(keys).max() >= 40_000_000_000_000:  # the key below would overflow
            return _render(wall_ms, offsets, zone_id, pattern)
        keys = keys * 200_000 + offsets  # an offset is less than a day of seconds either way
    distinct, first, where = np.unique(keys, return_index=True, return_inverse=True)
    if len(distinct) < len(wall_ms) // 2:
        return pc.take(_render(wall_ms[first], offsets[first], zone_id, pattern), pa.array(where.ravel()))
    return _render(wall_ms, offsets, zone_id, pattern)


# the span of time a pattern letter tells apart (the coarser letters a day)
_RESOLUTION_MS = {"S": 1, "s": 1000, "m": 60_000, "H": 3_600_000, "k": 3_600_000, "K": 3_600_000,
                  "h": 3_600_000, "a": 3_600_000}


def _render(wall_ms: np.ndarray, offsets: np.ndarray, zone_id: str, pattern: tuple[Token, ...]) -> pa.Array:
    n = len(wall_ms)
    f = Fields(wall_ms)
    parts: list[pa.Array | str] = []
    for token in pattern:
        letter, width = token.letter, token.width
        if not letter:
            parts.append(token.text)
        elif letter in "yY":
            parts.append(_padded(f.year % 100, 2) if width == 2 else _padded(f.year, width))
        elif letter == "M":
            parts.append(_padded(f.month, width) if width < 3 else _named(_MONTHS, f.month - 1, width))
        elif letter == "E":
            parts.append(_named(_WEEKDAYS, f.weekday, width))
        elif letter == "a":
            parts.append(pc.if_else(pa.array(f.hour < 12), "AM", "PM"))
        elif letter == "Z":
            parts.append(_offset_text(offsets, width == 2) if width < 3 else zone_id)
        elif letter == "S":  # the fraction's first ``width`` digits (Joda prints at most the millis it has)
            millis = _padded(f.millis, 3)
            parts.append(pc.utf8_slice_codeunits(millis, 0, width) if width <= 3
                         else pc.utf8_rpad(millis, width=width, padding="0"))
        else:
            parts.append(_padded(_number(letter, f), width))
    if not parts:
        return pa.repeat(pa.scalar("", pa.string()), n)
    arrays = [p if not isinstance(p, str) else pa.repeat(pa.scalar(p, pa.string()), n) for p in parts]
    return arrays[0] if len(arrays) == 1 else pc.binary_join_element_wise(*arrays, "")


def _number(letter: str, f: Fields) -> np.ndarray:
    numbers = {"d": f.day, "D": f.day_of_year, "m": f.minute, "s": f.second, "H": f.hour}
    if letter in numbers:
        return numbers[letter]
    if letter == "k":  # 1-24: midnight is 24
        return np.where(f.hour == 0, 24, f.hour)
    half = f.hour % 12
    return half if letter == "K" else np.where(half == 0, 12, half)  # h: 1-12


def strptime_format(pattern: tuple[Token, ...], text: str, option: str) -> str:
    """The ``strptime`` format (pyarrow's) that reads what Joda's parser of ``pattern`` reads, the fraction of a
    second left out (strptime reads none: ``fraction_regex`` takes it out of the value), or a
    ``KeyGeneratorConfigError`` naming ``option`` for a field strptime cannot read as Joda does."""
    out = []
    for token in pattern:
        if not token.letter:
            out.append(token.text.replace("%", "%%"))
            continue
        letter, width = token.letter, token.width
        if letter == "S":  # read apart: ``fraction_regex``
            continue
        if letter == "M" and width >= 3:
            out.append("%B" if width >= 4 else "%b")
        elif letter == "E":
            out.append("%A" if width >= 4 else "%a")
        elif letter in _STRPTIME and not (letter == "y" and width == 2) and not (letter == "Z" and width > 2):
            out.append(_STRPTIME[letter])
        else:
            raise KeyGeneratorConfigError(
                f"Option {option}: the input date format {text!r} has {letter * width!r}, which cannot be parsed "
                f"here as Joda-Time parses it; input formats may use yyyy, M/MM/MMM/MMMM, d, D, H, h, a, m, s, S, E, "
                f"Z/ZZ and literal text")
    return "".join(out)


def has_offset(pattern: tuple[Token, ...]) -> bool:
    """The pattern reads a zone offset (``Z``/``ZZ``)."""
    return any(t.letter == "Z" for t in pattern)


def _regex(pattern: tuple[Token, ...], groups: dict[str, str]) -> str:
    """A regular expression matching what ``pattern`` parses; the first field of each letter in ``groups`` is
    captured under the group name it maps to."""
    out: list[str] = []
    named: set[str] = set()
    for i, token in enumerate(pattern):
        if not token.letter:
            out.append(re.escape(token.text))
            continue
        if token.letter == "Z":
            text = "(?:[+-][0-9:]+|Z)"
        elif token.letter in "Ea" or (token.letter == "M" and token.width >= 3):
            text = "[A-Za-z]+"
        else:
            adjacent = i + 1 < len(pattern) and pattern[i + 1].letter not in ("", "E", "a", "Z")
            text = f"[0-9]{{{token.width}}}" if adjacent else "[0-9]+"
        if token.letter in groups and token.letter not in named:
            named.add(token.letter)
            text = f"(?P<{groups[token.letter]}>{text})"
        out.append(text)
    return "^" + "".join(out) + "$"


def date_regex(pattern: tuple[Token, ...]) -> str | None:
    """A regular expression matching what ``pattern`` parses, its year, month and day of month in the groups
    ``y``, ``M`` and ``d`` (None unless it has all three): strptime rolls a day past its month's end into the next
    month (February 30 into March 1) where Joda refuses it, so the written day is checked against its month."""
    if not {"y", "M", "d"} <= {t.letter for t in pattern}:
        return None
    return _regex(pattern, {"y": "y", "M": "M", "d": "d"})


def fraction_regex(pattern: tuple[Token, ...]) -> str | None:
    """A regular expression splitting what ``pattern`` parses into the groups ``before``, ``S`` (the digits of
    its fraction of a second) and ``after``; None when it has no fraction."""
    at = next((i for i, t in enumerate(pattern) if t.letter == "S"), None)
    if at is None:
        return None
    before, after = _regex(pattern[:at], {})[1:-1], _regex(pattern[at + 1:], {})[1:-1]
    width = pattern[at].width  # Joda reads at most as many digits as the field has letters
    digits = f"[0-9]{{{width}}}" if at + 1 < len(pattern) and pattern[at + 1].letter not in ("", "E", "a", "Z") \
        else f"[0-9]{{1,{width}}}"
    return f"^(?P<before>{before})(?P<S>{digits})(?P<after>{after})$"


def days_in_month(year: np.ndarray, month: np.ndarray) -> np.ndarray:
    """The days of each month (1-12) of each proleptic Gregorian year."""
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    return np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])[np.clip(month, 0, 12)] + \
        ((month == 2) & leap)


MONTH_ABBREVIATIONS = tuple(m[:3].lower() for m in _MONTHS)
