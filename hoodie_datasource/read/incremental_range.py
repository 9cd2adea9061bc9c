"""Which completed writes an incremental read returns: the writes whose time falls in (begin, end].

Which time depends on the table, as in Apache Hudi 1.x:

* Table version 6 (Hudi 0.x, and 1.x on such a table): instant time, the time a write was requested. The range
  picks the writes requested in (begin, end] and keeps the rows with ``_hoodie_commit_time`` in that range
  (``IncrementalRelationV1`` / ``MergeOnReadIncrementalRelationV1``); a write still in flight inside the range
  is a hollow commit (``read.hollow_commits``).
* Table version 8 and later (the timeline records each write's completion time): completion time. The range
  picks the writes that completed in (begin, end] (``IncrementalQueryAnalyzer`` through
  ``CompletionTimeQueryView.getStartTimes``, ``InstantRange.RangeType.OPEN_CLOSED``: Hudi's ``DefaultSource``
  takes ``IncrementalRelationV2`` / ``MergeOnReadIncrementalRelationV2`` when the table version is 8 or more)
  and keeps the rows whose ``_hoodie_commit_time`` is the instant time of one of them
  (``HoodieIncrementalRelationV2Trait.incrementalSpanRecordFilters``: an ``In`` filter, since a write requested
  before another may complete after it). A consumer that resumes from the end it read to then misses no write:
  one in flight completes later than that end, so there are no hollow commits to handle (Hudi's V2 relations
  and ``HoodieStreamSourceV2``, whose offsets are completion times, have no such policy).

CDC queries and time travel compare instant times on every table version (``HoodieCDCExtractor`` tests its
``InstantRange`` on the instants' requested times; ``as.of.instant`` picks file slices by instant time,
``BaseHoodieTableFileIndex`` through ``getLatestMergedFileSlicesBeforeOrOn``), and do not use this module.
"""

from __future__ import annotations

from dataclasses import dataclass

from hoodie_datasource.read.hollow_commits import readable_end, readable_writes
from hoodie_datasource.timeline.instant import Instant
from hoodie_datasource.timeline.timeline import Timeline


def range_time(instant: Instant, by_completion: bool) -> str:
    """The time of ``instant`` a range compares. An instant without a completion time counts as completed when
    it was requested, as Hudi's ``CompletionTimeQueryView.setCompletionTime`` takes it."""
    return (instant.completion or instant.timestamp) if by_completion else instant.timestamp


@dataclass(frozen=True)
class IncrementalRange:
    """An incremental read's range, resolved on one timeline."""

    begin: str  # exclusive, in the range's time
    end: str  # inclusive, in the range's time: the given end, or the newest write's
    by_completion: bool  # the range's time is completion time (else instant time)
    writes: tuple[Instant, ...]  # the completed writes in the range, in the order of the range's time
    shown: tuple[Instant, ...]  # the completed writes up to the end, those before the range too

    @property
    def upto(self) -> str:
        """The instant time the range's file slices are read as of: the end, or by completion time the newest
        write shown (``begin`` when none is)."""
        if not self.by_completion:
            return self.end
        return max((i.timestamp for i in self.shown), default=self.begin)

    @property
    def commit_times(self) -> frozenset[str]:
        return frozenset(i.timestamp for i in self.writes)


def incremental_range(timeline: Timeline, begin: str, end: str | None, hollow_policy: str) -> IncrementalRange:
    """The range (begin, end] of ``timeline``'s completed writes (``end`` None: up to the newest); ``hollow_policy``
    applies to instant-time ranges only."""
    by_completion = timeline.ranges_by_completion_time
    completed = timeline.completed()
    if by_completion:
        end = end or max((range_time(i, True) for i in completed), default=begin)
    else:
        end = readable_end(timeline, hollow_policy, begin, end or (completed[-1].timestamp if completed else begin))
    shown = tuple(i for i in completed if range_time(i, by_completion) <= end)
    writes = sorted((i for i in shown if range_time(i, by_completion) > begin), key=lambda i: range_time(i, by_completion))
    return IncrementalRange(begin, end, by_completion, tuple(writes), shown)


def writes_after(timeline: Timeline, hollow_policy: str, begin: str = "") -> list[Instant]:
    """The completed writes after ``begin`` an incremental consumer may read, in the order of the range's time
    (a stream's next offsets)."""
    if not timeline.ranges_by_completion_time:
        return readable_writes(timeline, hollow_policy, begin)
    return sorted((i for i in timeline.completed() if range_time(i, True) > begin), key=lambda i: range_time(i, True))
