"""List pagination (``maxResults``, ``pageToken`` -> ``nextPageToken``): a page token is the position of the next
item, in an opaque form; a token that does not decode is refused with 400, never a 500."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import TypeVar

from hoodie_datasource.errors import SharingRequestError

T = TypeVar("T")
DEFAULT_PAGE = 1000
MAX_PAGE = 10_000  # the reference server's queryTablePageSizeLimit


def page(items: Sequence[T], max_results: int | None, page_token: str | None) -> tuple[Sequence[T], str | None]:
    """The page of ``items`` and the token of the next one (None after the last)."""
    if max_results is not None and max_results < 0:
        raise SharingRequestError(f"maxResults is {max_results}: it must not be negative")
    start = _position(page_token) if page_token else 0
    size = min(DEFAULT_PAGE if max_results is None else max_results, MAX_PAGE)
    end = start + size
    token = None
    if end < len(items):
        token = base64.urlsafe_b64encode(f"p{end}".encode()).decode().rstrip("=")
    return items[start:end], token


def _position(token: str) -> int:
    try:
        text = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        if not text.startswith("p") or not text[1:].isdigit() or len(text) > 20:
            raise ValueError(text)
        return int(text[1:])
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise SharingRequestError(f"pageToken {token[:64]!r} is not one this server issued") from None
