"""A table's real local storage that counts its listings, for the tests that pin how often an operation
lists the timeline (every call still reaches the disk: nothing is mocked)."""

from __future__ import annotations

from collections import Counter

from hoodie_datasource.storage.local import LocalStorage
from hoodie_datasource.storage.storage import Listing

TIMELINE = ".hoodie"  # the timeline's folder in layout 1
_LIVE: dict[int, CountingStorage] = {}


def _live(key: int) -> CountingStorage:
    return _LIVE[key]


class CountingStorage(LocalStorage):
    """Unpickled in the process that made it, it is itself again, so what a pickled reader lists is counted."""

    def __init__(self, uri: str) -> None:
        super().__init__(uri)
        self.listed: Counter[str] = Counter()  # folder -> list_dir calls
        _LIVE[id(self)] = self

    def __reduce__(self):
        return _live, (id(self),)

    def list_dir(self, rel: str = "") -> Listing:
        self.listed[rel] += 1
        return super().list_dir(rel)

    def timeline_listings(self) -> int:
        """The listings of the timeline's folder so far; then counting starts again."""
        count, self.listed[TIMELINE] = self.listed[TIMELINE], 0
        return count
