"""The times of the metadata table's own instants: a data instant's time with a 3-digit suffix naming the
operation (Hudi's ``HoodieTableMetadataUtil.OperationSuffix`` and ``create*Timestamp``).

A metadata-table service runs at the time of the latest data instant it covers, suffixed, so it sorts right
after that instant and before any later one, and a reader knows it as the metadata table's own (valid though
no data instant has that time). A partition is initialized at the latest completed data instant (or
``SOLO_COMMIT_TIMESTAMP`` on a table without one) suffixed ``010``, ``011``, ... one per partition."""

from __future__ import annotations

SOLO_COMMIT_TIMESTAMP = "00000000000000"  # HoodieTableMetadata.SOLO_COMMIT_TIMESTAMP
COMPACTION_SUFFIX = "001"
CLEAN_SUFFIX = "002"
RESTORE_SUFFIX = "003"
ROLLBACK_SUFFIX = "006"
PARTITION_INIT_SUFFIX = 10  # "010", then one more for each partition initialized after it


def compaction_time(instant_time: str) -> str:
    return instant_time + COMPACTION_SUFFIX


def clean_time(instant_time: str) -> str:
    return instant_time + CLEAN_SUFFIX


def rollback_time(instant_time: str) -> str:
    return instant_time + ROLLBACK_SUFFIX


def partition_init_time(instant_time: str, offset: int) -> str:
    return f"{instant_time}{PARTITION_INIT_SUFFIX + offset:03d}"

