"""The streaming sink's checkpoint in commit metadata: which micro-batch of which query a commit wrote.

Apache Hudi's streaming sink records, in each commit's ``extraMetadata``, the batch id it wrote under the
key ``_hudi_streaming_sink_checkpoint`` (``HoodieStreamingSink.SINK_CHECKPOINT_KEY``), as a JSON map from
the writer's identifier to the batch id as a string (``CommitUtils.getCheckpointValueAsString``):
``{"default_single_writer":"4"}``. A writer finds its last batch by walking the completed writes from
the newest back to the first commit whose value names its identifier
(``CommitUtils.getValidCheckpointForCurrentWriter`` over ``TimelineUtils.findLatestInCommitMetadata``):
commits of other writers, and compactions, are passed over. The same map shape, under another key,
names the query that wrote the batch (a hoodie-datasource addition: Apache Hudi ignores unknown keys).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from hoodie_datasource.errors import CorruptFileError
from hoodie_datasource.timeline.timeline import Timeline

SINK_CHECKPOINT_KEY = "_hudi_streaming_sink_checkpoint"
SINK_QUERY_KEY = "_hoodie_streaming_sink_query"


def checkpoint_value(identifier: str, value: str) -> str:
    """``{"<identifier>":"<value>"}`` as Jackson writes a one-entry ``Map<String, String>``."""
    return json.dumps({identifier: value}, separators=(",", ":"))


def sink_metadata(identifier: str, batch_id: int, query: str) -> dict[str, str]:
    """The ``extraMetadata`` entries of a commit that wrote micro-batch ``batch_id`` of ``query``."""
    return {SINK_CHECKPOINT_KEY: checkpoint_value(identifier, str(batch_id)),
            SINK_QUERY_KEY: checkpoint_value(identifier, query)}


def read_checkpoint_value(text: str, identifier: str, where: str) -> str | None:
    """The value ``identifier`` has in a checkpoint map, or None (``CommitUtils.readCheckpointValue``)."""
    try:
        entries = json.loads(text)
    except ValueError:
        raise CorruptFileError(f"The streaming checkpoint in {where} is not a JSON map: {text!r}") from None
    if not isinstance(entries, dict):
        raise CorruptFileError(f"The streaming checkpoint in {where} is not a JSON map: {text!r}")
    value = entries.get(identifier)
    return None if value is None else str(value)


@dataclass(frozen=True)
class SinkCheckpoint:
    instant: str  # the commit that recorded it
    batch_id: int
    query: str | None  # the query that wrote it; None when a writer that does not record it did (Apache Hudi)


def latest_sink_checkpoint(timeline: Timeline, identifier: str) -> SinkCheckpoint | None:
    """The last micro-batch a writer with ``identifier`` committed: from the newest completed write whose
    checkpoint names ``identifier``; one instant file is read per write passed over (none when the latest
    write is that writer's)."""
    for instant in reversed(timeline.completed()):
        extra = timeline.read_metadata(instant).get("extraMetadata") or {}
        text = extra.get(SINK_CHECKPOINT_KEY)
        if not text:
            continue
        where = timeline.uri_of(instant)
        value = read_checkpoint_value(text, identifier, where)
        if value is None:
            continue
        try:
            batch_id = int(value)
        except ValueError:
            raise CorruptFileError(f"The streaming checkpoint in {where} is not a batch id: {text!r}") from None
        owner = extra.get(SINK_QUERY_KEY)
        return SinkCheckpoint(instant.timestamp, batch_id, read_checkpoint_value(owner, identifier, where)
                              if owner else None)
    return None
