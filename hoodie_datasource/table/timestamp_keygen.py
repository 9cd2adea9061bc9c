"""Partition paths from a time column, as Hudi 0.15's ``TimestampBasedAvroKeyGenerator`` makes them (the one
``TimestampBasedKeyGenerator`` and a ``CustomKeyGenerator``'s ``field:TIMESTAMP`` parts delegate to), a whole
column at a time.

A value is read as Hudi's Avro path reads the record (the upsert path of its Spark writer): an integer, a
float or decimal (truncated, ``longValue``), a date (its epoch day) and a timestamp (its epoch microseconds,
what Avro's ``timestamp-micros`` holds) are a count of the timestamp type's unit (seconds for
UNIX_TIMESTAMP, milliseconds for EPOCHMILLISECONDS, ``hoodie.keygen.timebased.timestamp.scalar.time.unit`` for
SCALAR); a string is parsed by the input date formats (DATE_STRING, and MIXED, which in 0.15 parses strings
alone). The instant is printed by the output date format in the output time zone
(``HoodieDateTimeParser``: ``hoodie.keygen.timebased.timezone`` over ``...output.timezone``; unset, a parsed
string's own zone, then the JVM's default zone, which here is the machine's, ``default_zone``).

A null value is Hudi's ``getDefaultPartitionVal``: 1 in the unit (``1970-01-01`` for a daily format), and for
a string type the first input format's rendering of 1 ms past the epoch, parsed as any other value. A string
no input format parses, and a local time that a daylight-saving change skips, fail the write
(``InvalidRecordError``) as Hudi's ``HoodieKeyGeneratorException`` does.

Everything is pyarrow compute and numpy over the whole column. Python runs in two places, each once per
distinct value of a few: the offsets of instants from 2038 on (pyarrow's zone database ends in 2037, Joda follows
the zone's rule; ``zoneinfo`` gives them, per distinct minute), and a string carrying its own offset when no zone
is set (Joda prints it in that offset, which pyarrow's strptime does not keep; ``datetime.strptime`` reads it, per
distinct string).

Differences from Hudi, all refusals before anything is written: an unknown zone id is an error (Java's
``TimeZone.getTimeZone`` silently takes GMT for it); a timestamp column is refused by Hudi's row writer
(bulk insert) but read as microseconds by its Avro path, which we follow for every operation; a two-letter year
(``yy``) in an input format is refused (Joda's pivot year has no strptime equivalent); a date string with a
year of five digits or more, which Joda reads, fails the write.
"""

from __future__ import annotations

import os
import re
import zoneinfo
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.errors import InvalidRecordError, KeyGeneratorConfigError
from hoodie_datasource.table.joda_patterns import (
    DAY_MS,
    MONTH_ABBREVIATIONS,
    Token,
    date_regex,
    days_in_month,
    fraction_regex,
    has_offset,
    render,
    strptime_format,
    tokens,
)

# TimestampBasedAvroKeyGenerator.TimestampType in Hudi 0.15 (EPOCHMICROSECONDS came with 1.0)
TIMESTAMP_TYPES = ("UNIX_TIMESTAMP", "DATE_STRING", "MIXED", "EPOCHMILLISECONDS", "SCALAR")
STRING_TYPES = ("DATE_STRING", "MIXED")
# java.util.concurrent.TimeUnit: milliseconds per unit (a fraction: finer units divide, truncating)
TIME_UNITS = {"NANOSECONDS": (1, 1_000_000), "MICROSECONDS": (1, 1000), "MILLISECONDS": (1, 1), "SECONDS": (1000, 1),
              "MINUTES": (60_000, 1), "HOURS": (3_600_000, 1), "DAYS": (86_400_000, 1)}
_UNIT_OF_TYPE = {"UNIX_TIMESTAMP": "SECONDS", "EPOCHMILLISECONDS": "MILLISECONDS"}
# the column types a number is read from
NUMERIC_TYPES = (pa.types.is_integer, pa.types.is_floating, pa.types.is_decimal, pa.types.is_date, pa.types.is_timestamp)
DEFAULT_PARSER = "org.apache.hudi.keygen.parser.HoodieDateTimeParser"
# TimestampKeyGeneratorConfig's keys
PREFIX = "hoodie.keygen.timebased."
TIMESTAMP_TYPE = PREFIX + "timestamp.type"
SCALAR_TIME_UNIT = PREFIX + "timestamp.scalar.time.unit"
INPUT_DATE_FORMAT = PREFIX + "input.dateformat"
INPUT_DATE_FORMAT_DELIMITER = PREFIX + "input.dateformat.list.delimiter.regex"
INPUT_TIMEZONE = PREFIX + "input.timezone"
OUTPUT_DATE_FORMAT = PREFIX + "output.dateformat"
OUTPUT_TIMEZONE = PREFIX + "output.timezone"
TIMEZONE = PREFIX + "timezone"
DATE_TIME_PARSER = "hoodie.keygen.datetime.parser.class"
# what Hudi 0.15 records in hoodie.properties for a TimestampBasedKeyGenerator table, those given
# (HoodieTableConfig.PERSISTED_CONFIG_LIST): all but the timestamp type
PERSISTED_KEYS = (SCALAR_TIME_UNIT, INPUT_DATE_FORMAT_DELIMITER, INPUT_DATE_FORMAT, INPUT_TIMEZONE, OUTPUT_DATE_FORMAT,
                  OUTPUT_TIMEZONE, TIMEZONE, DATE_TIME_PARSER)
_JAVA_OFFSET = re.compile(r"^GMT([+-])(\d{1,2})(?::?(\d{2}))?$")


@dataclass(frozen=True)
class Zone:
    """A time zone as pyarrow names it (``arrow``) and as Joda prints its id (``joda``, for ``ZZZ``)."""

    arrow: str
    joda: str


def java_zone(value: str | None, option: str) -> Zone | None:
    """The zone Java's ``TimeZone.getTimeZone(value)`` names (None for an unset or blank ``value``): an IANA
    name, ``UTC``/``GMT`` or a custom ``GMT+hh[:mm]``. Java takes GMT for any other id, silently; we refuse it."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if text in ("UTC", "GMT"):
        return Zone("UTC", "UTC")
    if (m := _JAVA_OFFSET.match(text)) is not None:
        hours, minutes = int(m.group(2)), int(m.group(3) or 0)
        if hours <= 23 and minutes <= 59:
            offset = f"{m.group(1)}{hours:02d}:{minutes:02d}"
            return Zone(offset, "UTC" if hours == minutes == 0 else offset)
    try:
        zoneinfo.ZoneInfo(text)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise KeyGeneratorConfigError(
            f"Option {option}={value!r} is not a time zone; give an IANA name (Asia/Kolkata), UTC, GMT or "
            f"GMT+hh:mm (Java's TimeZone would silently use GMT for it)") from None
    return Zone(text, text)


def default_zone() -> Zone:
    """The JVM's default zone on this machine, which Hudi formats in when no zone is set: ``TZ``, else the zone
    ``/etc/localtime`` links to, else UTC."""
    name = os.environ.get("TZ", "").lstrip(":")
    if not name:
        try:
            target = os.path.realpath("/etc/localtime")
        except OSError:
            target = ""
        name = target.split("zoneinfo/", 1)[1] if "zoneinfo/" in target else "UTC"
    name = {"Etc/UTC": "UTC", "Etc/GMT": "UTC", "UCT": "UTC", "Zulu": "UTC"}.get(name, name)
    try:
        return java_zone(name, "TZ") or Zone("UTC", "UTC")
    except KeyGeneratorConfigError:
        return Zone("UTC", "UTC")


@dataclass(frozen=True)
class InputFormat:
    """One input date format: Joda's ``pattern``, its tokens and pyarrow's strptime format for it."""

    pattern: str
    tokens: tuple[Token, ...]
    strptime: str

    @property
    def has_offset(self) -> bool:
        return has_offset(self.tokens)

    @property
    def date_regex(self) -> str | None:
        return date_regex(self.tokens)

    @property
    def fraction_regex(self) -> str | None:
        return fraction_regex(self.tokens)


@dataclass(frozen=True)
class TimestampPartitionFormat:
    """How ``TimestampBasedAvroKeyGenerator`` turns a partition value into a path (its options resolved)."""

    timestamp_type: str
    output_format: str
    output_tokens: tuple[Token, ...]
    input_formats: tuple[InputFormat, ...]
    input_zone: Zone | None
    output_zone: Zone | None
    time_unit: str | None  # None for the string types

    @staticmethod
    def create(timestamp_type: str | None, output_format: str | None, input_formats: str | None = None,
               delimiter: str = ",", input_zone: str | None = None, output_zone: str | None = None,
               zone: str | None = None, time_unit: str | None = None,
               parser: str | None = None) -> TimestampPartitionFormat:
        """Options as ``HoodieDateTimeParser`` reads them; each problem is a ``KeyGeneratorConfigError``."""
        if parser not in (None, "", DEFAULT_PARSER):
            raise KeyGeneratorConfigError(
                f"Option {DATE_TIME_PARSER}={parser!r}: only Hudi's {DEFAULT_PARSER} is supported")
        if not timestamp_type:
            raise KeyGeneratorConfigError(
                f"Option {TIMESTAMP_TYPE} is required by the timestamp-based key generator; valid values: "
                f"{', '.join(TIMESTAMP_TYPES)}")
        kind = timestamp_type.strip().upper()
        if kind not in TIMESTAMP_TYPES:
            raise KeyGeneratorConfigError(
                f"Invalid value {timestamp_type!r} for option {TIMESTAMP_TYPE}; valid values: "
                f"{', '.join(TIMESTAMP_TYPES)}")
        if output_format is None:
            raise KeyGeneratorConfigError(
                f"Option {OUTPUT_DATE_FORMAT} is required by the timestamp-based key generator: the Joda-Time "
                f"pattern of the partition path, such as yyyy/MM/dd")
        unit = None
        if kind == "SCALAR":
            unit = (time_unit or "SECONDS").strip().upper()
            if unit not in TIME_UNITS:
                raise KeyGeneratorConfigError(
                    f"Invalid value {time_unit!r} for option {SCALAR_TIME_UNIT}; valid values: "
                    f"{', '.join(TIME_UNITS)}")
        elif kind in _UNIT_OF_TYPE:
            unit = _UNIT_OF_TYPE[kind]
        formats: tuple[InputFormat, ...] = ()
        if kind in STRING_TYPES:
            if not input_formats:
                raise KeyGeneratorConfigError(
                    f"Option {INPUT_DATE_FORMAT} is required by timestamp type {kind}: the Joda-Time pattern(s) of "
                    f"the strings, such as yyyy-MM-dd HH:mm:ss")
            patterns = [p.strip() for p in re.split(delimiter, input_formats)]
            formats = tuple(InputFormat(p, t, strptime_format(t, p, INPUT_DATE_FORMAT))
                            for p in patterns for t in (tokens(p, INPUT_DATE_FORMAT),))
        both = java_zone(zone, TIMEZONE)
        return TimestampPartitionFormat(
            timestamp_type=kind,
            output_format=output_format,
            output_tokens=tokens(output_format, OUTPUT_DATE_FORMAT),
            input_formats=formats,
            input_zone=both if zone is not None else java_zone(input_zone, INPUT_TIMEZONE),
            output_zone=both if zone is not None else java_zone(output_zone, OUTPUT_TIMEZONE),
            time_unit=unit,
        )

    def partition_values(self, column: pa.ChunkedArray | pa.Array, field: str) -> pa.Array:
        """The formatted partition value of each row of ``column`` (the field ``field``), never null."""
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        self.check_column_type(column.type, field)
        if pa.types.is_large_string(column.type) or pa.types.is_string_view(column.type):
            column = column.cast(pa.string())
        if pa.types.is_string(column.type):
            return self._from_strings(column, field)
        counts = pc.fill_null(_as_long(column), 1)  # getDefaultPartitionVal: 1L
        per_unit, divisor = TIME_UNITS[self.time_unit]
        millis = pc.multiply(counts, per_unit) if per_unit > 1 else pc.divide(counts, divisor) if divisor > 1 \
            else counts
        return self._print(millis, self.output_zone or default_zone())

    def check_column_type(self, typ: pa.DataType, field: str) -> None:
        """A column of type ``typ`` is one the timestamp type reads (Hudi: 'Missing input formatter' for a string
        under a numeric type, 'Unexpected type for partition field' for others)."""
        text = pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_string_view(typ)
        if text and self.timestamp_type not in STRING_TYPES:
            raise KeyGeneratorConfigError(
                f"Partition field {field!r} is a string column, which timestamp type {self.timestamp_type} "
                f"does not parse (Hudi: 'Missing input formatter'); use DATE_STRING with "
                f"hoodie.keygen.timebased.input.dateformat, or cast the column to a number")
        if not text and self.time_unit is None:
            raise KeyGeneratorConfigError(
                f"Partition field {field!r} is a {typ} column, which timestamp type {self.timestamp_type} does not "
                f"take (it parses strings); use UNIX_TIMESTAMP, EPOCHMILLISECONDS or SCALAR")
        if not text and not any(is_type(typ) for is_type in NUMERIC_TYPES):
            raise KeyGeneratorConfigError(
                f"Partition field {field!r} is a {typ} column; timestamp type {self.timestamp_type} takes integers, "
                f"floating point, decimals, dates and timestamps (Hudi: 'Unexpected type for partition field')")

    def _print(self, millis: pa.Array, zone: Zone) -> pa.Array:
        wall, offsets = wall_clock(millis, zone)
        return render(wall, offsets, zone.joda, self.output_tokens)

    def _from_strings(self, column: pa.Array, field: str) -> pa.Array:
        parse_zone = self.input_zone or default_zone()
        if column.null_count:
            first = self.input_formats[0]
            epoch_zone = self.input_zone or self.output_zone or Zone("UTC", "UTC")
            wall, offsets = wall_clock(pa.array([1], pa.int64()), epoch_zone)
            column = pc.fill_null(column, render(wall, offsets, epoch_zone.joda, first.tokens)[0])
        millis = pa.nulls(len(column), pa.int64())
        own_offset = pa.nulls(len(column), pa.bool_())  # parsed by a format holding the value's own offset
        for fmt in self.input_formats:
            parsed = _strptime(column, fmt)
            parsed = parsed.cast(pa.int64()) if fmt.has_offset else _assume(parsed, parse_zone, column, field)
            first_here = pc.and_(pc.is_null(millis), pc.is_valid(parsed))
            own_offset = pc.if_else(first_here, fmt.has_offset, own_offset)
            millis = pc.coalesce(millis, parsed)
        unparsed = pc.is_null(millis)
        if pc.any(unparsed).as_py():
            value = pc.filter(column, unparsed)[0].as_py()
            raise InvalidRecordError(
                f"Partition path field {field!r} has the value {value!r} in {pc.sum(unparsed).as_py()} record(s), "
                f"which none of the input date formats "
                f"{', '.join(repr(f.pattern) for f in self.input_formats)} parses (Hudi: 'Unable to parse input "
                f"partition field'); fix the value or add its format to hoodie.keygen.timebased.input.dateformat")
        if self.output_zone is not None:
            return self._print(millis, self.output_zone)
        if self.input_zone is not None or not pc.any(own_offset).as_py():
            return self._print(millis, parse_zone)
        return self._print_in_own_offsets(column, millis, own_offset, parse_zone)

    def _print_in_own_offsets(self, column: pa.Array, millis: pa.Array, own_offset: pa.Array,
                              parse_zone: Zone) -> pa.Array:
        """No zone set and some values carry an offset: Joda prints each value in the zone it was parsed with
        (``withOffsetParsed``), its own offset or the default zone. The Python fallback: the offset of each
        distinct such value, read by ``datetime.strptime`` (pyarrow's strptime keeps the instant alone)."""
        _, offsets = wall_clock(millis, parse_zone)
        distinct = pc.unique(pc.filter(column, own_offset))
        found: dict[str, int] = {}
        for fmt in (f for f in self.input_formats if f.has_offset):
            readable = _split_fraction(distinct, fmt)[0] if fmt.fraction_regex is not None else distinct
            for text, value in zip(distinct.to_pylist(), readable.to_pylist()):
                if text in found or value is None:
                    continue
                try:
                    found[text] = int(datetime.strptime(value, fmt.strptime).utcoffset().total_seconds())
                except ValueError:
                    continue
        own = pc.take(pa.array([found.get(t, 0) for t in distinct.to_pylist()], pa.int64()),
                      pc.index_in(column, value_set=distinct)).to_numpy(zero_copy_only=False)
        offsets = np.where(own_offset.to_numpy(zero_copy_only=False), own, offsets)
        wall = millis.to_numpy(zero_copy_only=False) + offsets * 1000
        return render(wall, offsets, parse_zone.joda, self.output_tokens)


# pyarrow's zone rules stop at the last transition the zone files list (2037); Joda goes on with the zone's rule
FAR_FUTURE_MS = 2_145_916_800_000  # 2038-01-01T00:00Z
PYTHON_LIMIT_MS = 253_402_300_800_000  # 10000-01-01T00:00Z, past Python's datetime
EPOCH = datetime(1970, 1, 1)


def wall_clock(millis: pa.Array, zone: Zone) -> tuple[np.ndarray, np.ndarray]:
    """(the wall-clock time in ``zone``, its offset from UTC in seconds) of each epoch milliseconds value, as
    int64 numpy arrays (the wall-clock time in epoch milliseconds of the local time).

    Instants from 2038 on, where pyarrow's zone database ends, take their offsets from Python's ``zoneinfo``,
    which follows the zone's daylight-saving rule as Joda does: one lookup per distinct minute among them (a
    zone's offset changes on a minute), the one step here in Python."""
    instants = millis.to_numpy(zero_copy_only=False).astype(np.int64)
    if zone.arrow == "UTC":
        return instants, np.zeros(len(instants), np.int64)
    local = pc.local_timestamp(pa.array(instants, pa.timestamp("ms", zone.arrow)))
    wall = local.cast(pa.int64()).to_numpy(zero_copy_only=False)
    offsets = (wall - instants) // 1000
    far = (instants >= FAR_FUTURE_MS) & (instants < PYTHON_LIMIT_MS)
    if far.any() and zone.arrow[0] not in "+-":
        rules = zoneinfo.ZoneInfo(zone.arrow)
        minutes, where = np.unique(instants[far] // 60_000, return_inverse=True)
        found = np.array([int(datetime.fromtimestamp(int(m) * 60, rules).utcoffset().total_seconds())
                          for m in minutes], np.int64)
        offsets[far] = found[where]
        wall = instants + offsets * 1000
    return wall, offsets
def _strptime(column: pa.Array, fmt: InputFormat) -> pa.Array:
    """The times ``fmt`` reads from ``column``, null where it reads none: a day past its month's end is none, as
    Joda refuses it (``date_regex``). strptime rolls such a day into the first days of the next month, so only
    values read as one of them are checked (all of a format with an offset, whose parsed day is UTC's)."""
    parsed = _strptime_fraction(column, fmt) if fmt.fraction_regex is not None else \
        pc.strptime(column, format=fmt.strptime, unit="ms", error_is_null=True)
    if fmt.date_regex is None or parsed.null_count == len(parsed):
        return parsed
    suspect = pc.fill_null(pc.less_equal(pc.day(parsed), 3), False) if not fmt.has_offset \
        else parsed.is_valid()
    positions = np.flatnonzero(suspect.to_numpy(zero_copy_only=False))
    if not len(positions):
        return parsed
    fields = pc.extract_regex(column.take(positions), fmt.date_regex)
    year, month, day = (pc.struct_field(fields, name) for name in ("y", "M", "d"))
    if any(t.letter == "M" and t.width >= 3 for t in fmt.tokens):  # a month name
        month = pc.add(pc.index_in(pc.utf8_slice_codeunits(pc.utf8_lower(month), 0, 3),
                                   value_set=pa.array(MONTH_ABBREVIATIONS)), 1)
    numbers = [pc.fill_null(pc.cast(v, pa.int64()), 0).to_numpy(False) for v in (year, month, day)]
    invalid = positions[(numbers[2] < 1) | (numbers[2] > days_in_month(numbers[0], numbers[1]))]
    if not len(invalid):
        return parsed
    refused = np.zeros(len(parsed), bool)
    refused[invalid] = True
    return pc.if_else(pa.array(refused), pa.scalar(None, parsed.type), parsed)


def _strptime_fraction(column: pa.Array, fmt: InputFormat) -> pa.Array:
    """strptime of a format with a fraction of a second: the fraction's digits are taken out of each value, read
    as Joda reads them (its first three digits are the milliseconds: ``.5`` is 500 ms) and added to the time
    strptime reads from the rest."""
    rest, millis = _split_fraction(column, fmt)
    parsed = pc.strptime(rest, format=fmt.strptime, unit="ms", error_is_null=True)
    return pc.add(parsed.cast(pa.int64()), millis).cast(parsed.type)


def _split_fraction(column: pa.Array, fmt: InputFormat) -> tuple[pa.Array, pa.Array]:
    """(each value without its fraction of a second, the fraction in milliseconds) for ``fmt``'s
    ``fraction_regex``; null for a value it does not match."""
    parts = pc.extract_regex(column, fmt.fraction_regex)
    rest = pc.binary_join_element_wise(pc.struct_field(parts, "before"), pc.struct_field(parts, "after"), "")
    digits = pc.utf8_slice_codeunits(pc.utf8_rpad(pc.struct_field(parts, "S"), width=3, padding="0"), 0, 3)
    return rest, pc.cast(digits, pa.int64())


def _assume(parsed: pa.Array, zone: Zone, column: pa.Array, field: str) -> pa.Array:
    """Local times read from strings, as instants (int64 epoch milliseconds) in ``zone``; a time a daylight-saving
    change skips is refused (Joda: 'Illegal instant due to time zone offset transition'), a repeated one is its
    earlier instant. Times from 2038 on go through ``zoneinfo``, as in ``wall_clock``."""
    wall = pc.fill_null(parsed.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
    far = parsed.is_valid().to_numpy(zero_copy_only=False) & (wall >= FAR_FUTURE_MS - DAY_MS) & \
        (wall < PYTHON_LIMIT_MS) & (zone.arrow != "UTC") & (zone.arrow[0] not in "+-")
    near = pc.if_else(pa.array(far), pa.scalar(None, parsed.type), parsed) if far.any() else parsed
    try:
        instants = pc.assume_timezone(near, zone.arrow, ambiguous="earliest", nonexistent="raise").cast(pa.int64())
    except pa.ArrowInvalid:
        earliest, latest = (pc.assume_timezone(near, zone.arrow, ambiguous="earliest", nonexistent=how)
                            for how in ("earliest", "latest"))
        _refuse_skipped(pc.fill_null(pc.not_equal(earliest, latest), False), zone, column, field)
    if not far.any():
        return instants
    rules = zoneinfo.ZoneInfo(zone.arrow)
    minutes, where = np.unique(wall[far] // 60_000, return_inverse=True)
    found = np.empty(len(minutes), np.int64)
    for i, minute in enumerate(minutes):
        local = EPOCH + timedelta(minutes=int(minute))
        instant = int(minute) * 60 - int(local.replace(tzinfo=rules).utcoffset().total_seconds())  # fold=0: earlier
        if datetime.fromtimestamp(instant, rules).replace(tzinfo=None) != local:
            _refuse_skipped(pa.array(far & (wall // 60_000 == minute)), zone, column, field)
        found[i] = instant * 1000
    out = pc.fill_null(instants, 0).to_numpy(zero_copy_only=False).copy()
    out[far] = found[where] + wall[far] % 60_000
    return pa.array(out, pa.int64(), mask=~parsed.is_valid().to_numpy(zero_copy_only=False))


def _refuse_skipped(skipped: pa.Array, zone: Zone, column: pa.Array, field: str) -> None:
    value = pc.filter(column, skipped)[0].as_py()
    raise InvalidRecordError(
        f"Partition path field {field!r} has the value {value!r}, a local time that does not exist in "
        f"{zone.arrow} (a daylight-saving change skips it), as Hudi refuses it; give the value an offset or "
        f"set hoodie.keygen.timebased.input.timezone") from None


def _as_long(column: pa.Array) -> pa.Array:
    """The count of time units Hudi's Avro path reads from each value (``getPartitionPath(Object)``) of a column
    ``check_column_type`` accepted."""
    typ = column.type
    if pa.types.is_floating(typ) or pa.types.is_decimal(typ):
        return pc.cast(pc.trunc(column) if pa.types.is_floating(typ) else column, pa.int64(), safe=False)
    if pa.types.is_date(typ):
        return column.cast(pa.date32()).cast(pa.int32()).cast(pa.int64())
    if pa.types.is_timestamp(typ):
        return column.cast(pa.timestamp("us", typ.tz)).cast(pa.int64())
    return column.cast(pa.int64())
