"""File groups and file slices.

A file group is every file of one fileId in one partition; a file slice is one base file plus the
log files written on top of it. Only files of completed instants are ever put in a slice.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field


@dataclass(frozen=True)
class BaseFile:
    name: str
    file_id: str
    instant_time: str
    size: int

    @property
    def extension(self) -> str:
        return self.name.rsplit(".", 1)[-1].lower()


@dataclass(frozen=True)
class LogFile:
    name: str
    file_id: str
    instant_time: str
    version: int
    write_token: str
    size: int


@dataclass(frozen=True)
class FileSlice:
    partition_path: str
    file_id: str
    base_instant: str
    base_file: BaseFile | None
    log_files: tuple[LogFile, ...] = ()

    def relative_path(self, name: str) -> str:
        return posixpath.join(self.partition_path, name) if self.partition_path else name

    @property
    def group(self) -> str:
        """The file group's name in its table: partition path / file id."""
        return self.relative_path(self.file_id)

    @property
    def base_relative_path(self) -> str | None:
        return self.relative_path(self.base_file.name) if self.base_file else None

    @property
    def total_size(self) -> int:
        return (self.base_file.size if self.base_file else 0) + sum(log.size for log in self.log_files)

    @property
    def file_names(self) -> tuple[str, ...]:
        """The slice's base file (when it has one) and log files."""
        return ((self.base_file.name,) if self.base_file else ()) + tuple(log.name for log in self.log_files)


@dataclass
class FileGroup:
    partition_path: str
    file_id: str
    base_files: list[BaseFile] = field(default_factory=list)
    log_files: list[LogFile] = field(default_factory=list)
    # CDC log files (``.cdc``): never part of a slice's data, removed with the slice they were written with
    cdc_log_files: list[LogFile] = field(default_factory=list)
