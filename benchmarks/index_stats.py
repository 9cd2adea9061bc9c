"""What tagging a batch cost in index work, as the commit that tagged it records it: the
``hoodie.stage.index.*`` counts of its metadata (summed over the tasks that tagged), which
``ours.commit_facts`` reads into a measurement's facts (``stages``)."""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.timing import Measurement

PREFIX = "index."


@dataclass(frozen=True)
class IndexCounts:
    keys: int
    files: int  # base files in the partitions the batch touches
    pairs_by_partition: int  # (key, file) pairs to check without key ranges
    pairs_in_range: int  # pairs left after key-range pruning
    files_probed: int  # files with at least one pair left
    bloom_probes: int
    bloom_positives: int
    exact_checks: int  # pairs checked against the file's stored keys (keys several filters claim)
    false_positives_checked: int  # bloom positives the exact check found absent (only those checked)
    stored: int  # keys found in a file (the batch's updates)
    tag_task_ms: int  # the commit's tagging time, summed over the tasks

    @property
    def files_pruned(self) -> int:
        return self.files - self.files_probed

    @property
    def pairs_pruned(self) -> int:
        return self.pairs_by_partition - self.pairs_in_range

    @property
    def keys_per_second(self) -> float | None:
        return self.keys / (self.tag_task_ms / 1000) if self.tag_task_ms else None


def from_stages(stages: dict[str, int]) -> IndexCounts | None:
    """The counts of one commit's stage metadata; None when it tagged nothing."""
    counts = {k.removeprefix(PREFIX): v for k, v in stages.items() if k.startswith(PREFIX)}
    if not counts.get("keys"):
        return None
    return IndexCounts(counts["keys"], counts["files"], counts["pairs"], counts["candidates"], counts["candidate_files"],
                       counts["bloom_probes"], counts["bloom_positives"], counts["exact_checks"],
                       counts["false_positives_checked"], counts["found"], stages.get("tag_task", stages.get("tag", 0)))


def median_run(measured: Measurement | None) -> IndexCounts | None:
    """The counts of the run with the median tagging time among a measurement's commits."""
    runs = [c for c in (from_stages(f.get("stages", {})) for f in (measured.facts if measured else [])) if c]
    return sorted(runs, key=lambda c: c.tag_task_ms)[len(runs) // 2] if runs else None
