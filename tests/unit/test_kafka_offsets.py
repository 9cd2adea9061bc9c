"""The Kafka source's offset ranges and checkpoint strings (``kafka_offsets``), as Apache Hudi's
``KafkaOffsetGen.CheckpointUtils`` computes them; no broker."""

from __future__ import annotations

import pytest

from hoodie_datasource.errors import HoodieConfigError, KafkaDataLossError
from hoodie_datasource.streamer.kafka_offsets import (
    OffsetRange,
    checkpoint_string,
    compute_offset_ranges,
    is_kafka_checkpoint,
    parse_checkpoint,
    valid_start,
)


def test_the_checkpoint_string_is_hudis():
    assert parse_checkpoint("trips,0:123,1:456", "trips") == {0: 123, 1: 456}
    ranges = [OffsetRange(1, 400, 456), OffsetRange(0, 100, 110), OffsetRange(0, 110, 123), OffsetRange(2, 7, 7)]
    assert checkpoint_string("trips", ranges) == "trips,0:123,1:456,2:7"  # merged by partition, by partition
    assert not is_kafka_checkpoint("1700000000000") and not is_kafka_checkpoint(None)
    with pytest.raises(HoodieConfigError, match="of topic 'old'.*--checkpoint 'trips,<partition>:<offset>"):
        parse_checkpoint("old,0:1", "trips")
    with pytest.raises(HoodieConfigError, match="'0-5' where <partition>:<offset>"):
        parse_checkpoint("trips,0-5", "trips")


def test_max_events_are_shared_round_robin_and_every_partition_is_named():
    # 3 partitions with 100 new records each, 150 events: 50 from each
    ranges = compute_offset_ranges({0: 0, 1: 100, 2: 0}, {0: 100, 1: 200, 2: 100}, 150)
    assert ranges == [OffsetRange(0, 0, 50), OffsetRange(1, 100, 150), OffsetRange(2, 0, 50)]
    # a partition with less than its share leaves the rest to the others
    ranges = compute_offset_ranges({0: 0, 1: 0}, {0: 10, 1: 1000}, 100)
    assert sum(r.count for r in ranges) == 100 and OffsetRange(0, 0, 10) in ranges
    assert checkpoint_string("t", ranges) == "t,0:10,1:90"
    # caught up: the ranges are empty but name every partition
    assert compute_offset_ranges({0: 5, 1: 7}, {0: 5, 1: 7}, 100) == [OffsetRange(0, 5, 5), OffsetRange(1, 7, 7)]


def test_min_partitions_splits_a_large_partition_into_several_ranges():
    ranges = compute_offset_ranges({0: 0}, {0: 1000}, 10_000, min_partitions=4)
    assert ranges == [OffsetRange(0, 0, 250), OffsetRange(0, 250, 500), OffsetRange(0, 500, 750),
                      OffsetRange(0, 750, 1000)]


def test_a_checkpoint_out_of_the_topics_range_fails_naming_partitions_and_offsets():
    earliest, latest = {0: 50, 1: 0}, {0: 80, 1: 30}
    with pytest.raises(KafkaDataLossError, match="t-0: checkpoint 40, earliest offset 50"):
        valid_start("t", {0: 40, 1: 10}, earliest, latest, fail_on_data_loss=True)
    # lenient: only the partition out of range moves (Hudi moves every partition to its earliest)
    assert valid_start("t", {0: 40, 1: 10}, earliest, latest, fail_on_data_loss=False) == {0: 50, 1: 10}
    with pytest.raises(KafkaDataLossError, match="t-1: checkpoint 31, end offset 30"):
        valid_start("t", {0: 60, 1: 31}, earliest, latest, fail_on_data_loss=False)
    with pytest.raises(KafkaDataLossError, match="t-2: checkpoint 3, no such partition"):
        valid_start("t", {0: 60, 2: 3}, earliest, latest, fail_on_data_loss=False)
