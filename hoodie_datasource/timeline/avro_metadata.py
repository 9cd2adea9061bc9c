"""Avro-encoded instant contents (compaction and clustering plans, clean, rollback and restore plans, their
metadata, savepoints), and the Avro form of commit metadata that Hudi's archived timeline stores.

Hudi stores table-service plans and results as Avro object container files with one record,
whatever the table version. These writer schemas carry the fields Hudi's readers resolve by name
(``org.apache.hudi.avro.model``); optional fields Hudi added later are left out, and Avro schema
resolution fills their defaults.
"""

from __future__ import annotations

import io
from typing import Any

import fastavro

NAMESPACE = "org.apache.hudi.avro.model"


def _opt(avro_type: Any) -> list[Any]:
    return ["null", avro_type]


COMPACTION_OPERATION = {
    "type": "record", "name": "HoodieCompactionOperation", "namespace": NAMESPACE,
    "fields": [
        {"name": "baseInstantTime", "type": _opt("string"), "default": None},
        {"name": "deltaFilePaths", "type": _opt({"type": "array", "items": "string"}), "default": None},
        {"name": "dataFilePath", "type": _opt("string"), "default": None},
        {"name": "fileId", "type": _opt("string"), "default": None},
        {"name": "partitionPath", "type": _opt("string"), "default": None},
        {"name": "metrics", "type": _opt({"type": "map", "values": "double"}), "default": None},
        {"name": "bootstrapFilePath", "type": _opt("string"), "default": None},
    ],
}
COMPACTION_PLAN = {
    "type": "record", "name": "HoodieCompactionPlan", "namespace": NAMESPACE,
    "fields": [
        {"name": "operations", "type": _opt({"type": "array", "items": COMPACTION_OPERATION}), "default": None},
        {"name": "extraMetadata", "type": _opt({"type": "map", "values": "string"}), "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}
CLEAN_FILE_INFO = {
    "type": "record", "name": "HoodieCleanFileInfo", "namespace": NAMESPACE,
    "fields": [
        {"name": "filePath", "type": _opt("string"), "default": None},
        {"name": "isBootstrapBaseFile", "type": _opt("boolean"), "default": None},
    ],
}
CLEANER_PLAN = {
    "type": "record", "name": "HoodieCleanerPlan", "namespace": NAMESPACE,
    "fields": [
        {"name": "earliestInstantToRetain", "type": _opt({
            "type": "record", "name": "HoodieActionInstant", "namespace": NAMESPACE,
            "fields": [{"name": "timestamp", "type": "string"}, {"name": "action", "type": "string"},
                       {"name": "state", "type": "string"}]}), "default": None},
        {"name": "lastCompletedCommitTimestamp", "type": _opt("string"), "default": None},
        {"name": "policy", "type": "string"},
        {"name": "filesToBeDeletedPerPartition", "type": _opt({"type": "map", "values": {"type": "array",
                                                                                          "items": "string"}}),
         "default": None},
        {"name": "version", "type": ["int", "null"], "default": 2},
        {"name": "filePathsToBeDeletedPerPartition", "type": _opt({"type": "map", "values": {
            "type": "array", "items": CLEAN_FILE_INFO}}), "default": None},
        {"name": "partitionsToBeDeleted", "type": _opt({"type": "array", "items": "string"}), "default": None},
        {"name": "extraMetadata", "type": _opt({"type": "map", "values": "string"}), "default": None},
    ],
}
CLEAN_PARTITION_METADATA = {
    "type": "record", "name": "HoodieCleanPartitionMetadata", "namespace": NAMESPACE,
    "fields": [
        {"name": "partitionPath", "type": "string"},
        {"name": "policy", "type": "string"},
        {"name": "deletePathPatterns", "type": {"type": "array", "items": "string"}},
        {"name": "successDeleteFiles", "type": {"type": "array", "items": "string"}},
        {"name": "failedDeleteFiles", "type": {"type": "array", "items": "string"}},
        {"name": "isPartitionDeleted", "type": _opt("boolean"), "default": None},
    ],
}
CLEAN_METADATA = {
    "type": "record", "name": "HoodieCleanMetadata", "namespace": NAMESPACE,
    "fields": [
        {"name": "startCleanTime", "type": "string"},
        {"name": "timeTakenInMillis", "type": "long"},
        {"name": "totalFilesDeleted", "type": "int"},
        {"name": "earliestCommitToRetain", "type": "string"},
        {"name": "lastCompletedCommitTimestamp", "type": _opt("string"), "default": None},
        {"name": "partitionMetadata", "type": {"type": "map", "values": CLEAN_PARTITION_METADATA}},
        {"name": "version", "type": ["int", "null"], "default": 2},
        {"name": "extraMetadata", "type": _opt({"type": "map", "values": "string"}), "default": None},
    ],
}

# A pending clustering (Hudi 0.15's HoodieRequestedReplaceMetadata holding a HoodieClusteringPlan), as
# ``<t>.replacecommit.requested`` stores it
SLICE_INFO = {
    "type": "record", "name": "HoodieSliceInfo", "namespace": NAMESPACE,
    "fields": [
        {"name": "dataFilePath", "type": _opt("string"), "default": None},
        {"name": "deltaFilePaths", "type": _opt({"type": "array", "items": "string"}), "default": None},
        {"name": "fileId", "type": _opt("string")},
        {"name": "partitionPath", "type": _opt("string"), "default": None},
        {"name": "bootstrapFilePath", "type": _opt("string"), "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}
CLUSTERING_GROUP = {
    "type": "record", "name": "HoodieClusteringGroup", "namespace": NAMESPACE,
    "fields": [
        {"name": "slices", "type": _opt({"type": "array", "items": SLICE_INFO}), "default": None},
        {"name": "metrics", "type": _opt({"type": "map", "values": "double"}), "default": None},
        {"name": "numOutputFileGroups", "type": ["int", "null"], "default": 1},
        {"name": "extraMetadata", "type": _opt({"type": "map", "values": "string"}), "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}
CLUSTERING_PLAN = {
    "type": "record", "name": "HoodieClusteringPlan", "namespace": NAMESPACE,
    "fields": [
        {"name": "inputGroups", "type": _opt({"type": "array", "items": CLUSTERING_GROUP}), "default": None},
        {"name": "strategy", "type": _opt({
            "type": "record", "name": "HoodieClusteringStrategy", "namespace": NAMESPACE,
            "fields": [
                {"name": "strategyClassName", "type": _opt("string"), "default": None},
                {"name": "strategyParams", "type": _opt({"type": "map", "values": "string"}), "default": None},
                {"name": "version", "type": ["int", "null"], "default": 1},
            ]}), "default": None},
        {"name": "extraMetadata", "type": _opt({"type": "map", "values": "string"}), "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "preserveHoodieMetadata", "type": _opt("boolean"), "default": None},
    ],
}
REQUESTED_REPLACE_METADATA = {
    "type": "record", "name": "HoodieRequestedReplaceMetadata", "namespace": NAMESPACE,
    "fields": [
        {"name": "operationType", "type": _opt("string"), "default": None},
        {"name": "clusteringPlan", "type": _opt(CLUSTERING_PLAN), "default": None},
        {"name": "extraMetadata", "type": _opt({"type": "map", "values": "string"}), "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}

INSTANT_INFO = {
    "type": "record", "name": "HoodieInstantInfo", "namespace": NAMESPACE,
    "fields": [{"name": "commitTime", "type": "string"}, {"name": "action", "type": "string"}],
}
ROLLBACK_PLAN = {
    "type": "record", "name": "HoodieRollbackPlan", "namespace": NAMESPACE,
    "fields": [
        {"name": "instantToRollback", "type": INSTANT_INFO},
        {"name": "RollbackRequests", "type": _opt({"type": "array", "items": {
            "type": "record", "name": "HoodieRollbackRequest", "namespace": NAMESPACE,
            "fields": [
                {"name": "partitionPath", "type": "string"},
                {"name": "fileId", "type": _opt("string"), "default": None},
                {"name": "latestBaseInstant", "type": _opt("string"), "default": None},
                {"name": "filesToBeDeleted", "type": {"type": "array", "items": "string"}, "default": []},
                {"name": "logBlocksToBeDeleted", "type": _opt({"type": "map", "values": "long"}), "default": None},
            ]}}), "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}
ROLLBACK_METADATA = {
    "type": "record", "name": "HoodieRollbackMetadata", "namespace": NAMESPACE,
    "fields": [
        {"name": "startRollbackTime", "type": "string"},
        {"name": "timeTakenInMillis", "type": "long"},
        {"name": "totalFilesDeleted", "type": "int"},
        {"name": "commitsRollback", "type": {"type": "array", "items": "string"}},
        {"name": "partitionMetadata", "type": {"type": "map", "values": {
            "type": "record", "name": "HoodieRollbackPartitionMetadata", "namespace": NAMESPACE,
            "fields": [
                {"name": "partitionPath", "type": "string"},
                {"name": "successDeleteFiles", "type": {"type": "array", "items": "string"}},
                {"name": "failedDeleteFiles", "type": {"type": "array", "items": "string"}},
                {"name": "rollbackLogFiles", "type": _opt({"type": "map", "values": "long"}), "default": None},
                {"name": "logFilesFromFailedCommit", "type": _opt({"type": "map", "values": "long"}),
                 "default": None},
            ]}}},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "instantsRollback", "type": {"type": "array", "items": INSTANT_INFO}, "default": []},
    ],
}

# Savepoint and restore (hudi-common's HoodieSavePointMetadata.avsc, HoodieRestorePlan.avsc,
# HoodieRestoreMetadata.avsc): what SavepointActionExecutor and BaseRestoreActionExecutor write
SAVEPOINT_METADATA = {
    "type": "record", "name": "HoodieSavepointMetadata", "namespace": NAMESPACE,
    "fields": [
        {"name": "savepointedBy", "type": "string"},
        {"name": "savepointedAt", "type": "long"},
        {"name": "comments", "type": "string"},
        {"name": "partitionMetadata", "type": {"type": "map", "values": {
            "type": "record", "name": "HoodieSavepointPartitionMetadata", "namespace": NAMESPACE,
            "fields": [{"name": "partitionPath", "type": "string"},
                       {"name": "savepointDataFile", "type": {"type": "array", "items": "string"}}]}}},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}
RESTORE_PLAN = {
    "type": "record", "name": "HoodieRestorePlan", "namespace": NAMESPACE,
    "fields": [
        {"name": "instantsToRollback", "type": {"type": "array", "items": INSTANT_INFO}, "default": []},
        {"name": "version", "type": ["int", "null"], "default": 2},
        {"name": "savepointToRestoreTimestamp", "type": ["string", "null"], "default": None},
    ],
}
# ROLLBACK_METADATA defines HoodieInstantInfo, so the restore metadata names it afterwards
RESTORE_METADATA = {
    "type": "record", "name": "HoodieRestoreMetadata", "namespace": NAMESPACE,
    "fields": [
        {"name": "startRestoreTime", "type": "string"},
        {"name": "timeTakenInMillis", "type": "long"},
        {"name": "instantsToRollback", "type": {"type": "array", "items": "string"}},
        {"name": "hoodieRestoreMetadata", "type": {"type": "map", "values": {
            "type": "array", "items": ["null", ROLLBACK_METADATA]}}},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "restoreInstantInfo", "type": {"type": "array", "items": f"{NAMESPACE}.HoodieInstantInfo"},
         "default": []},
    ],
}

# The Avro form of commit metadata (hudi-common HoodieCommitMetadata.avsc): what Hudi's archiver converts a
# commit's JSON into (MetadataConversionUtils.convertCommitMetadata). Hudi 0.15's HoodieWriteStat stops at
# fileSizeInBytes; the later fields are Hudi 1.x's, which Hudi 0.15's reader skips (resolution by name).
RUNTIME_STATS = {
    "type": "record", "name": "HoodieRuntimeStats", "namespace": NAMESPACE,
    "fields": [{"name": name, "type": _opt("long"), "default": None}
               for name in ("totalScanTime", "totalCreateTime", "totalUpsertTime")],
}
WRITE_STAT = {
    "type": "record", "name": "HoodieWriteStat", "namespace": NAMESPACE,
    "fields": [
        *({"name": name, "type": _opt(kind), "default": None} for name, kind in (
            ("fileId", "string"), ("path", "string"), ("prevCommit", "string"), ("numWrites", "long"),
            ("numDeletes", "long"), ("numUpdateWrites", "long"), ("totalWriteBytes", "long"),
            ("totalWriteErrors", "long"), ("partitionPath", "string"), ("totalLogRecords", "long"),
            ("totalLogFiles", "long"), ("totalUpdatedRecordsCompacted", "long"), ("numInserts", "long"),
            ("totalLogBlocks", "long"), ("totalCorruptLogBlock", "long"), ("totalRollbackBlocks", "long"),
            ("fileSizeInBytes", "long"), ("logVersion", "int"), ("logOffset", "long"), ("baseFile", "string"))),
        {"name": "logFiles", "type": _opt({"type": "array", "items": "string"}), "default": None},
        {"name": "cdcStats", "type": _opt({"type": "map", "values": "long"}), "default": None},
        {"name": "prevBaseFile", "type": _opt("string"), "default": None},
        {"name": "minEventTime", "type": _opt("long"), "default": None},
        {"name": "maxEventTime", "type": _opt("long"), "default": None},
        {"name": "runtimeStats", "type": _opt(RUNTIME_STATS), "default": None},
        {"name": "totalLogFilesCompacted", "type": _opt("long"), "default": None},
        {"name": "totalLogSizeCompacted", "type": _opt("long"), "default": None},
    ],
}


def _commit_fields(write_stat: dict[str, Any] | str) -> list[dict[str, Any]]:
    return [
        {"name": "partitionToWriteStats", "type": _opt({"type": "map", "values": {"type": "array",
                                                                                  "items": write_stat}}),
         "default": None},
        {"name": "compacted", "type": _opt("boolean"), "default": None},
        {"name": "extraMetadata", "type": _opt({"type": "map", "values": "string"}), "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "operationType", "type": _opt("string"), "default": None},
    ]


COMMIT_METADATA = {"type": "record", "name": "HoodieCommitMetadata", "namespace": NAMESPACE,
                   "fields": _commit_fields(WRITE_STAT)}
# used beside COMMIT_METADATA, so it names HoodieWriteStat instead of defining it again
REPLACE_COMMIT_METADATA = {
    "type": "record", "name": "HoodieReplaceCommitMetadata", "namespace": NAMESPACE,
    "fields": [*_commit_fields(f"{NAMESPACE}.HoodieWriteStat"),
               {"name": "partitionToReplaceFileIds", "type": _opt({"type": "map", "values": {
                   "type": "array", "items": "string"}}), "default": None}],
}


def encode(schema: dict[str, Any], record: dict[str, Any]) -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), [record], codec="null")
    return out.getvalue()
