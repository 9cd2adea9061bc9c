"""Base and log file names, and the write token Spark tasks put in them."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

BASE_FILE = re.compile(r"^([a-zA-Z0-9-]+)_([a-zA-Z0-9-]+)_([0-9]+)\.([a-zA-Z0-9]+)$")
LOG_FILE = re.compile(r"^\.(.+)_(.*)\.(log|archive)\.(\d+)(?:_((\d+)-(\d+)-(\d+))(\.cdc)?)?$")
PARTITION_METAFILE = ".hoodie_partition_metadata"
UNKNOWN_WRITE_TOKEN = "1-0-1"
CDC_LOG_SUFFIX = ".cdc"  # HoodieCDCUtils.CDC_LOGFILE_SUFFIX


def new_file_id(instant: str, partition: str, index: int) -> str:
    """``<uuid>-0`` as FSUtils.createNewFileId makes (index 0). The uuid is derived from the instant,
    partition and bucket, so a retried task that plans the same inserts names the same files."""
    return f"{uuid.uuid5(uuid.NAMESPACE_URL, f'hoodie:{instant}/{partition}/{index}')}-0"


def write_token(task_partition: int, stage_id: int, attempt_id: int) -> str:
    return f"{task_partition}-{stage_id}-{attempt_id}"


def base_file_name(file_id: str, token: str, instant_time: str, extension: str = "parquet") -> str:
    return f"{file_id}_{token}_{instant_time}.{extension}"


@dataclass(frozen=True, order=True)
class BaseFileName:
    file_id: str
    write_token: str
    instant_time: str
    extension: str

    @staticmethod
    def parse(name: str) -> BaseFileName | None:
        match = BASE_FILE.match(name)
        return BaseFileName(*match.groups()) if match else None


@dataclass(frozen=True)
class LogFileName:
    file_id: str
    instant_time: str  # v6: base instant of the slice; v8: the deltacommit's own time
    version: int
    write_token: str

    @staticmethod
    def parse(name: str) -> LogFileName | None:
        match = LOG_FILE.match(name)
        if not match or match.group(3) != "log" or match.group(9):
            return None
        return LogFileName(match.group(1), match.group(2), int(match.group(4)), match.group(5) or "")

    @staticmethod
    def parse_cdc(name: str) -> LogFileName | None:
        """A CDC log file's name (``HoodieCDCUtils.CDC_LOGFILE_SUFFIX``); None for any other file."""
        match = LOG_FILE.match(name)
        if not match or match.group(3) != "log" or not match.group(9):
            return None
        return LogFileName(match.group(1), match.group(2), int(match.group(4)), match.group(5) or "")

    def name(self) -> str:
        return f".{self.file_id}_{self.instant_time}.log.{self.version}_{self.write_token}"


def data_file_instant(name: str) -> str | None:
    """The instant that decides whether a data file is committed: a base file's own, a log file's slice's (Hudi's
    ``FSUtils.getCommitTime``); None for a name that is neither."""
    parsed = BaseFileName.parse(name) or LogFileName.parse(name) or LogFileName.parse_cdc(name)
    return None if parsed is None else parsed.instant_time
