"""The exception hierarchy: one base, ``HoodieError``, and a subclass per kind of failure.

Messages name the offending option, value or path and, where there is a fixed set, the valid
choices, so a user can fix the call without reading the source.
"""


class HoodieError(Exception):
    """Base of every error raised by hoodie-datasource."""


class HoodieConfigError(HoodieError, ValueError):
    """An option is unknown, missing, or has a value outside its valid choices."""


class TableNotFoundError(HoodieError):
    """The path holds no Hudi table (no ``.hoodie/hoodie.properties``)."""


class InvalidTablePathError(HoodieError):
    """The path holds something that is not a Hudi table, so it cannot be written as one."""


class UnsupportedTableError(HoodieError):
    """The table uses a feature or version this library does not read or write."""


class TimelineError(HoodieError):
    """The timeline is inconsistent or an instant cannot be found or created."""


class CommitConflictError(TimelineError):
    """An instant file that must be created exactly once already exists."""


class StaleTaskAttemptError(HoodieError):
    """A write task attempt finished after its instant was completed without it or rolled back; it removed
    the files it wrote, and its write stats are not used."""


class HoodieWriteConflictError(HoodieError):
    """A write touched file groups that another write changed after it started (Hudi's
    ``HoodieWriteConflictException``); the message names that instant and those file groups. The write
    is rolled back; retry it, or let ``hoodie.write.num.retries.on.conflict`` retry it."""


class WriteLayoutError(HoodieError):
    """A write's tasks did not divide its work as it requires (whole partitions, whole file groups), so
    committing could lose or duplicate rows; the write is rolled back instead."""


class FileGroupWrittenTwiceError(WriteLayoutError):
    """Two tasks of one write wrote new base files of the same file group, so committing would keep one
    and lose the other's rows; the write is rolled back instead."""


class LockError(HoodieError):
    """The table lock cannot be used: its provider is misconfigured or its server cannot be reached."""


class LockTimeoutError(LockError):
    """The table lock was not acquired within ``hoodie.write.lock.wait_time_ms`` and its retries."""


class SchemaMismatchError(HoodieError):
    """Incoming data does not fit the table's schema."""


class InvalidRecordError(HoodieError):
    """A record cannot be written: a null or missing record key or partition value."""


class StreamingCheckpointError(HoodieError):
    """A streaming query's checkpoint does not belong to the table it reads or writes."""


class StreamingSinkError(StreamingCheckpointError):
    """A streaming query cannot write its micro-batch: another query writes the table under the same
    ``hoodie.datasource.write.streaming.checkpoint.identifier``, so their batch ids cannot be told apart."""


class HoodieIndexError(HoodieError):
    """The index cannot be built or read (for example a base file lost its bloom footer)."""


class CorruptFileError(HoodieError):
    """A data, log or metadata file cannot be parsed."""


class ReadWindowError(HoodieError):
    """A time-travel or incremental read reaches files the cleaner removed or instants archived out of
    reach, so it cannot be answered exactly (see ``read.read_window``)."""


class StorageError(HoodieError):
    """A file or object of the table cannot be read or written; the message names its URI (never a
    credential) and what to check."""


class UnsupportedStorageError(StorageError, HoodieConfigError):
    """The table URI's scheme names no storage this library can use."""


class StorageAccessError(StorageError):
    """The store refused the request: missing or wrong credentials, or no permission."""


class StorageNotFoundError(StorageError):
    """The bucket or container the table URI names does not exist."""


class ConditionalCreateUnsupportedError(StorageError):
    """The store cannot create an object only if it is absent, so a commit there could silently
    overwrite another writer's (see ``hoodie.storage.conditional.create.unsafe``)."""


class PythonEnvironmentError(HoodieError, ImportError):
    """The Python interpreter running this code (often a Spark worker's) lacks a dependency: the message
    names the interpreter and how to point Spark at the right one."""
