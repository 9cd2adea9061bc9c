"""The size-balanced layout of a bulk insert (``write.bulk_insert_layout``): file units of a partition's
bytes, spread over tasks heaviest first, with the task count inferred from the size."""

from __future__ import annotations

from collections import Counter

from hoodie_datasource.write.bulk_insert_layout import plan_layout
from hoodie_datasource.write.task_balance import inferred_parallelism

MB = 1024 * 1024


def test_a_huge_partition_is_cut_into_file_units_over_the_tasks_and_small_ones_share_a_task():
    rows = {"huge": 1000 * MB, **{f"small{i}": 10 * MB for i in range(20)}}  # a byte a record
    layout = plan_layout(rows, 1.0, 120 * MB, 0, cores=2, task_memory=256 * MB)
    assert len(layout.unit_tasks["huge"]) == 10  # ceil(1000 / (0.9 * 120)) units of 100 MB
    assert all(len(layout.unit_tasks[f"small{i}"]) == 1 for i in range(20))
    assert layout.tasks == 10  # ceil(1200 MB / 120 MB): a file's worth each
    assert layout.unit_tasks["huge"] == tuple(range(10))  # one unit a task, the heaviest first
    shared = Counter(layout.unit_tasks[f"small{i}"][0] for i in range(20))
    assert shared == {t: 2 for t in range(10)}  # the small ones fill the tasks evenly: 120 MB each
    assert not layout.sorted_by_partition


def test_tasks_follow_the_size_or_the_parallelism_asked_for():
    small = {"a": 10, "b": 5}
    assert plan_layout(small, 100.0, 120 * MB, 0, cores=2, task_memory=256 * MB).tasks == 2
    assert plan_layout({"a": 2}, 100.0, 120 * MB, 0, cores=8, task_memory=256 * MB).tasks == 1  # one unit
    assert plan_layout(small, 100.0, 120 * MB, 5, cores=2, task_memory=256 * MB).tasks == 5
    assert plan_layout({}, 100.0, 120 * MB, 0, cores=2, task_memory=256 * MB).tasks == 1
    assert inferred_parallelism(1, 120 * MB, 4) == 4  # a task a core at least
    assert plan_layout({"a": 2}, 100.0, 120 * MB, 0, cores=0, task_memory=256 * MB).tasks == 1


def test_inferred_tasks_come_in_whole_waves_of_one_a_core():
    assert inferred_parallelism(1000 * MB, 120 * MB, 2) == 10  # 9 files' worth, rounded up to 2 waves' worth
    assert inferred_parallelism(345 * MB, 120 * MB, 2) == 4  # 3 files' worth: not 2 tasks then 1 alone
    assert inferred_parallelism(240 * MB, 120 * MB, 2) == 2
    assert inferred_parallelism(241 * MB, 120 * MB, 3) == 3 and inferred_parallelism(361 * MB, 120 * MB, 3) == 6
    # the layout takes the rounded count when it has the units for it: 30 partitions of 11.5 MB on 2 cores
    layout = plan_layout({f"d{i}": int(11.5 * MB) for i in range(30)}, 1.0, 120 * MB, 0, cores=2,
                         task_memory=256 * MB)
    assert layout.tasks == 4
    assert sorted(Counter(t for units in layout.unit_tasks.values() for t in units).values()) == [7, 7, 8, 8]
    assert not layout.sorted_by_partition


def test_a_task_holding_more_than_its_memory_of_several_partitions_gets_them_sorted():
    rows = {f"p{i}": 100 * MB for i in range(8)}
    assert plan_layout(rows, 1.0, 120 * MB, 2, cores=2, task_memory=256 * MB).sorted_by_partition
    assert not plan_layout(rows, 1.0, 120 * MB, 8, cores=2, task_memory=256 * MB).sorted_by_partition
