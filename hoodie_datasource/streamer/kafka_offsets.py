"""Which Kafka offsets a round reads, and the checkpoint that says how far it read, as Apache Hudi's
``KafkaOffsetGen`` computes them (no Kafka client here: the positions come in as numbers).

Checkpoint: ``topic,0:123,1:456``, one ``partition:offset`` per partition, the offset being the next one
to read (``KafkaOffsetGen.CheckpointUtils.offsetsToStr`` / ``strToOffsets``). A string without ``,`` and
``:`` is not a Kafka checkpoint (Hudi's pattern ``.*,.*:.*``): the round starts where
``auto.offset.reset`` says.

Ranges: from each partition's checkpointed offset (a partition the checkpoint does not name: its earliest)
to its end, at most ``maxEvents`` in all, handed out round-robin in slices of ``maxEvents / max(minPartitions,
partitions)`` so no partition takes the whole budget and a large partition is read by several tasks
(``CheckpointUtils.computeOffsetRanges``).

Out of range. A checkpointed offset below the partition's earliest means records were deleted (retention,
``deleteRecords``, the topic deleted and made again) before this table read them. With
``hoodie.streamer.source.kafka.enable.failOnDataLoss`` (here true by default) the round fails naming each
partition, its checkpoint and its earliest offset; set false, those partitions resume at their earliest
(Hudi resets every partition to its earliest then, reading the others' records again: here only the
partitions out of range move). A checkpointed offset past a partition's end, or a checkpointed partition the
topic no longer has, always fails: the topic is not the one the checkpoint was taken from.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from hoodie_datasource.errors import HoodieConfigError, KafkaDataLossError

logger = logging.getLogger(__name__)


@dataclass(frozen=True, order=True)
class OffsetRange:
    partition: int
    start: int  # the first offset read
    until: int  # one past the last offset read

    @property
    def count(self) -> int:
        return self.until - self.start


def is_kafka_checkpoint(text: str | None) -> bool:
    return bool(text) and "," in text and ":" in text.split(",", 1)[1]


def parse_checkpoint(text: str, topic: str) -> dict[int, int]:
    """The partition -> next offset map of a checkpoint of ``topic``."""
    name, *entries = text.split(",")
    if name != topic:
        raise HoodieConfigError(f"The table's Kafka checkpoint {text!r} is of topic {name!r}, not of "
                                f"hoodie.streamer.source.kafka.topic={topic!r}: to read another topic from a given "
                                f"position, pass --checkpoint '{topic},<partition>:<offset>,...'")
    offsets = {}
    for entry in entries:
        partition, sep, offset = entry.partition(":")
        try:
            offsets[int(partition)] = int(offset)
        except ValueError:
            raise HoodieConfigError(f"The Kafka checkpoint {text!r} has {entry!r} where <partition>:<offset> "
                                    "was expected") from None
        if not sep:
            raise HoodieConfigError(f"The Kafka checkpoint {text!r} has {entry!r} where <partition>:<offset> "
                                    "was expected")
    return offsets


def checkpoint_string(topic: str, ranges: list[OffsetRange]) -> str:
    """``topic,0:until,1:until,...``: each partition's furthest offset read, by partition."""
    until: dict[int, int] = {}
    for r in ranges:
        until[r.partition] = max(until.get(r.partition, r.until), r.until)
    return topic + "," + ",".join(f"{p}:{o}" for p, o in sorted(until.items()))


def valid_start(topic: str, checkpoint: Mapping[int, int], earliest: Mapping[int, int], latest: Mapping[int, int],
                fail_on_data_loss: bool) -> dict[int, int]:
    """Where each partition resumes, given the checkpoint and the partitions' earliest and end offsets
    (``KafkaOffsetGen.fetchValidOffsets``); raises ``KafkaDataLossError`` as the module says."""
    gone = sorted(set(checkpoint) - set(latest))
    ahead = sorted(p for p in checkpoint if p in latest and checkpoint[p] > latest[p])
    if gone or ahead:
        described = [f"{topic}-{p}: checkpoint {checkpoint[p]}, no such partition" for p in gone]
        described += [f"{topic}-{p}: checkpoint {checkpoint[p]}, end offset {latest[p]}" for p in ahead]
        raise KafkaDataLossError(
            f"The table's checkpoint is past what topic {topic!r} holds ({'; '.join(described)}): the topic was "
            "deleted and made again, or is another cluster's. Nothing was read; pass --checkpoint to say where "
            "to resume")
    behind = sorted(p for p in checkpoint if checkpoint[p] < earliest[p])
    if behind:
        described = "; ".join(f"{topic}-{p}: checkpoint {checkpoint[p]}, earliest offset {earliest[p]}" for p in behind)
        message = (f"Records of topic {topic!r} were deleted before this table read them ({described}): they aged "
                   "out or the topic was truncated or deleted.")
        if fail_on_data_loss:
            raise KafkaDataLossError(f"{message} Nothing was read; set hoodie.streamer.source.kafka.enable."
                                     "failOnDataLoss=false to resume those partitions at their earliest offset")
        logger.warning("%s Resuming those partitions at their earliest offset "
                       "(hoodie.streamer.source.kafka.enable.failOnDataLoss=false)", message)
    return {p: max(offset, earliest[p]) for p, offset in checkpoint.items()}


def compute_offset_ranges(start: Mapping[int, int], end: Mapping[int, int], max_events: int,
                          min_partitions: int = 0) -> list[OffsetRange]:
    """The ranges a round reads (``CheckpointUtils.computeOffsetRanges``): every partition of ``end``
    appears, caught-up ones as empty ranges, so the checkpoint names them all."""
    full = [OffsetRange(p, start.get(p, 0), end[p]) for p in sorted(end)]
    total = min(sum(r.count for r in full), max_events)
    if total == 0:
        return full
    slice_size = max(1, total // max(min_partitions, len(end)))
    position = {r.partition: r.start for r in full}
    chosen: dict[int, list[OffsetRange]] = {}
    allocated = 0
    while allocated < total:
        for r in full:
            if allocated == total:
                break
            begin = position[r.partition]
            stop = min(r.until, begin + min(slice_size, total - allocated))
            allocated += stop - begin
            if stop > begin or r.partition not in chosen:
                chosen.setdefault(r.partition, []).append(OffsetRange(r.partition, begin, stop))
                position[r.partition] = stop
    ranges = [piece for pieces in chosen.values() for piece in pieces if piece.count or len(pieces) == 1]
    ranges += [OffsetRange(p, o, o) for p, o in start.items() if p not in chosen]
    return sorted(ranges)
