"""The write operations, each with the properties that decide how a write runs.

Why one enum: the operation decides whether records are tagged against the table, whether file
groups are replaced, whether small files are packed, whether the Spark DAG may run per partition and
whether the incoming rows are deletes. Asking the member keeps those rules in one place instead of
string tuples beside every engine (Hudi's ``WriteOperationType``). A ``StrEnum``: a member equals,
prints and serializes as the option's value, so option parsing and messages keep their strings.
"""

from __future__ import annotations

from enum import StrEnum


class WriteOperation(StrEnum):
    UPSERT = "upsert"
    INSERT = "insert"
    BULK_INSERT = "bulk_insert"
    DELETE = "delete"
    INSERT_OVERWRITE = "insert_overwrite"
    INSERT_OVERWRITE_TABLE = "insert_overwrite_table"
    DELETE_PARTITION = "delete_partition"

    @property
    def commit_type(self) -> str:
        """The ``operationType`` a commit's metadata records (``UPSERT``, ``BULK_INSERT``, ...)."""
        return self.name

    @property
    def needs_tagging(self) -> bool:
        """Incoming keys are looked up in the table (updates and deletes find their file groups)."""
        return self in (WriteOperation.UPSERT, WriteOperation.DELETE)

    @property
    def replaces_file_groups(self) -> bool:
        """The commit is a ``replacecommit``: file groups of the written partitions (or the table) are replaced."""
        return self in (WriteOperation.INSERT_OVERWRITE, WriteOperation.INSERT_OVERWRITE_TABLE,
                        WriteOperation.DELETE_PARTITION)

    @property
    def replaces_table(self) -> bool:
        """Every file group of the table is replaced, not only those of the written partitions."""
        return self is WriteOperation.INSERT_OVERWRITE_TABLE

    @property
    def packs_small_files(self) -> bool:
        """Inserts may go into existing small files (Hudi's small-file handling); bulk inserts and
        overwrites always open new file groups."""
        return self in (WriteOperation.UPSERT, WriteOperation.INSERT, WriteOperation.DELETE)

    @property
    def runs_per_partition(self) -> bool:
        """The Spark write may run one task per table partition (no global state across partitions)."""
        return self in (WriteOperation.UPSERT, WriteOperation.INSERT, WriteOperation.DELETE)

    @property
    def is_delete(self) -> bool:
        """The incoming rows name what to delete (records or partitions); their other columns are not data."""
        return self in (WriteOperation.DELETE, WriteOperation.DELETE_PARTITION)

    @property
    def deletes_records(self) -> bool:
        """The incoming rows are record keys to delete."""
        return self is WriteOperation.DELETE

    @property
    def drops_partitions(self) -> bool:
        """The incoming rows only name partitions, whose file groups are replaced without writing any file."""
        return self is WriteOperation.DELETE_PARTITION
