"""Which change source each file group has in each commit of a CDC query (Hudi's ``HoodieCDCExtractor``).

For every completed commit, deltacommit or replacecommit in (begin, end] whose operation changes data
(``WriteOperationType.isDataChange``), every write stat gives one split of its file group, and every
file group a replacecommit replaced gives one more (``REPLACE_COMMIT``: all its records deleted).
The inference case of a write stat (``HoodieCDCInferenceCase``):

* ``AS_IS``: the stat has ``cdcStats``: the changes are read from its CDC log files;
* ``BASE_FILE_INSERT``: a base file of inserts only (a new file group): every record is an insert;
* ``BASE_FILE_DELETE``: a base file rewrite that kept no record: every record before it is deleted;
* ``LOG_FILE``: a merge-on-read log file: its records against the file slice before it;
* ``BASE_FILE_REWRITE``: a base file rewritten with updates or deletes but without a CDC log (a table
  written with CDC off). Hudi fails here ("There should be a cdc log file"); this library derives the
  changes from the base file before and after the rewrite, as it does for log files.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hoodie_datasource.table.file_names import BaseFileName
from hoodie_datasource.timeline.commit_metadata import write_stats_of
from hoodie_datasource.timeline.instant import REPLACE_COMMIT
from hoodie_datasource.timeline.timeline import Timeline

AS_IS = "AS_IS"
BASE_FILE_INSERT = "BASE_FILE_INSERT"
BASE_FILE_DELETE = "BASE_FILE_DELETE"
BASE_FILE_REWRITE = "BASE_FILE_REWRITE"
LOG_FILE = "LOG_FILE"
REPLACE = "REPLACE_COMMIT"

# WriteOperationType.isDataChange (plus the prepped variants newer Hudi writes)
DATA_CHANGE_OPERATIONS = frozenset({
    "INSERT", "UPSERT", "DELETE", "BULK_INSERT", "DELETE_PARTITION", "INSERT_OVERWRITE", "INSERT_OVERWRITE_TABLE",
    "BOOTSTRAP", "UPSERT_PREPPED", "INSERT_PREPPED", "BULK_INSERT_PREPPED", "DELETE_PREPPED",
})

FileGroupKey = tuple[str, str]  # (partition path, file id)


@dataclass(frozen=True)
class CDCSplit:
    """One file group's change in one instant (``HoodieCDCFileSplit``)."""

    instant: str
    case: str
    path: str | None = None  # the written base or log file (relative to the table)
    cdc_files: tuple[str, ...] = ()  # AS_IS: the CDC log files


def _case(stat: Mapping[str, Any]) -> str:
    if stat.get("cdcStats"):
        return AS_IS
    path = stat.get("path") or ""
    if BaseFileName.parse(path.rsplit("/", 1)[-1]) is None:
        return LOG_FILE
    writes, deletes = stat.get("numWrites") or 0, stat.get("numDeletes") or 0
    if writes == 0 and deletes:
        return BASE_FILE_DELETE
    if not stat.get("numUpdateWrites") and not deletes and writes == (stat.get("numInserts") or 0) \
            and stat.get("prevCommit") in (None, "null"):
        return BASE_FILE_INSERT
    return BASE_FILE_REWRITE


def extract_cdc_splits(timeline: Timeline, begin: str, end: str) -> dict[FileGroupKey, list[CDCSplit]]:
    """Every touched file group's splits in (begin, end], in instant order."""
    splits: dict[FileGroupKey, list[CDCSplit]] = defaultdict(list)
    for instant in timeline.completed():
        if not begin < instant.timestamp <= end:
            continue
        metadata = timeline.read_metadata(instant)
        if str(metadata.get("operationType") or "").upper() not in DATA_CHANGE_OPERATIONS:
            continue
        for stat in write_stats_of(metadata):
            if not stat.get("fileId"):
                continue
            key = (stat.get("partitionPath") or "", stat["fileId"])
            splits[key].append(CDCSplit(instant.timestamp, _case(stat), stat.get("path"),
                                        tuple(sorted(stat.get("cdcStats") or ()))))
        if instant.action == REPLACE_COMMIT:
            for partition, file_ids in (metadata.get("partitionToReplaceFileIds") or {}).items():
                for file_id in file_ids:
                    splits[(partition, file_id)].append(CDCSplit(instant.timestamp, REPLACE))
    return {key: sorted(found, key=lambda s: s.instant) for key, found in sorted(splits.items())}
