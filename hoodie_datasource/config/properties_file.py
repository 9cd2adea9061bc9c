"""Reading and writing ``hoodie.properties`` in java.util.Properties text format.

Hudi writes it with ``Properties.store``: two ``#`` comment lines, then ``key=value`` lines in
which ``:``, ``=``, ``#``, ``!`` and backslashes are escaped and non-Latin-1 characters become
``\\uXXXX``. Java readers parse exactly that syntax, so we write it byte-compatibly.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "u" and i + 5 < len(text):
                out.append(chr(int(text[i + 2:i + 6], 16)))
                i += 6
                continue
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _logical_lines(text: str) -> list[str]:
    """Join backslash-continued lines, drop comments and blanks."""
    lines: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip()
        if not pending and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            pending += line[:-1]
            continue
        lines.append(pending + line)
        pending = ""
    if pending:
        lines.append(pending)
    return lines


def parse_properties(text: str) -> dict[str, str]:
    result: dict[str, str] = {}
    for line in _logical_lines(text):
        i = 0
        while i < len(line):
            if line[i] == "\\":
                i += 2
                continue
            if line[i] in "=: \t":
                break
            i += 1
        key = line[:i]
        rest = line[i:].lstrip(" \t")
        if rest[:1] in ("=", ":"):
            rest = rest[1:].lstrip(" \t")
        result[_unescape(key)] = _unescape(rest)
    return result


def _escape(text: str, is_key: bool) -> str:
    out: list[str] = []
    for index, ch in enumerate(text):
        if ch == "\\":
            out.append("\\\\")
        elif ch == " " and (is_key or index == 0):
            out.append("\\ ")
        elif ch in "=:#!":
            out.append("\\" + ch)
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\f":
            out.append("\\f")
        elif ord(ch) < 0x20 or ord(ch) > 0x7E:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return "".join(out)


def format_properties(props: Mapping[str, str], now: datetime | None = None) -> str:
    now = now or datetime.now(timezone.utc)
    header = [
        f"#Properties saved on {now.strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]}Z",
        f"#{now.strftime('%a %b %d %H:%M:%S UTC %Y')}",
    ]
    body = [f"{_escape(k, True)}={_escape(str(v), False)}" for k, v in props.items()]
    return "\n".join(header + body) + "\n"
