"""The streamer's source checkpoint, kept in the commits it makes, as Apache Hudi's HoodieStreamer keeps it.

Each commit records in its ``extraMetadata`` how far into the source it read, under
``deltastreamer.checkpoint.key`` (``StreamerCheckpointV1.STREAMER_CHECKPOINT_KEY_V1``, the key tables of
version 6 use). A restart reads the newest completed write that has one (``StreamSync`` passes over
commits without it: compactions, other writers) and resumes after it. ``--checkpoint`` overrides it once:
the commit then also records ``deltastreamer.checkpoint.reset_key`` with the given value, so the next
start knows the override was applied (Hudi's ``CHECKPOINT_RESET_KEY`` rule).
"""

from __future__ import annotations

from dataclasses import dataclass

from hoodie_datasource.timeline.timeline import Timeline

CHECKPOINT_KEY = "deltastreamer.checkpoint.key"
CHECKPOINT_RESET_KEY = "deltastreamer.checkpoint.reset_key"


@dataclass(frozen=True)
class Resume:
    checkpoint: str | None  # where to read from; None: the start of the source
    reset: str | None  # the --checkpoint value in force (recorded in the next commit), if any


def resume_point(timeline: Timeline | None, override: str | None) -> Resume:
    """Where the next round reads from: the override when it was not applied yet, else the newest
    commit's checkpoint."""
    recorded, reset = None, None
    for instant in reversed(timeline.completed() if timeline else []):
        extra = timeline.read_metadata(instant).get("extraMetadata") or {}
        if extra.get(CHECKPOINT_KEY):
            recorded, reset = extra[CHECKPOINT_KEY], extra.get(CHECKPOINT_RESET_KEY)
            break
    if override is not None and override != reset:
        return Resume(override, override)
    return Resume(recorded, override)


def commit_metadata(checkpoint: str, reset: str | None) -> dict[str, str]:
    return {CHECKPOINT_KEY: checkpoint, **({CHECKPOINT_RESET_KEY: reset} if reset is not None else {})}
