"""The exception hierarchy: one base, ``HoodieError``, and a subclass per kind of failure.

Messages name the offending option, value or path and, where there is a fixed set, the valid
choices, so a user can fix the call without reading the source. Each class says when it is raised, then,
after "What to do:", how to get past it: the error reference of the documentation is generated from them.
"""


class HoodieError(Exception):
    """Base of every error raised by hoodie-datasource.

    What to do: catch it to handle any of the errors below; the message says what failed first."""


class HoodieConfigError(HoodieError, ValueError):
    """An option is unknown, missing, or has a value outside its valid choices; raised by ``save()``,
    ``load()``, ``HoodieTable`` and ``CALL`` before anything is read or written.

    What to do: the message names the option and the valid choices (with a "did you mean"); fix the option.
    Unknown ``hoodie.*`` keys are ignored, as Hudi does, so a misspelt full key is not caught."""


class KeyGeneratorConfigError(HoodieConfigError):
    """The key generator's options cannot make Hudi's partition paths: an unknown
    ``hoodie.keygen.timebased.timestamp.type`` or time unit, a missing output date format, a date pattern
    letter or time zone we cannot render as Joda-Time does, a ``CustomKeyGenerator`` partition field without
    its type, or a partition column whose type the timestamp type does not take. Raised before anything is
    written.

    What to do: the message names the option and the valid choices; fix the option (or cast the column)."""


class TableNotFoundError(HoodieError):
    """The path holds no Hudi table (no ``.hoodie/hoodie.properties``): a read, a service or ``CALL``
    on it.

    What to do: check the path (the table's base path, not a partition folder); write the table first."""


class InvalidTablePathError(HoodieError):
    """The path holds something that is not a Hudi table (files, or a ``.hoodie`` folder without
    ``hoodie.properties``), so it cannot be written as one.

    What to do: write the table to an empty path, or remove what is there."""


class UnsupportedTableError(HoodieError):
    """The table uses a feature or version this library does not read or write: a write or
    service on a table of version 8 or 9 (Apache Hudi 1.x), Lance base files, a consistent-hashing bucket index.

    What to do: for a 1.x table, downgrade it with Hudi 1.x's ``CALL downgrade_table(table => ..., to_version =>
    'SIX')``; otherwise write it with Apache Hudi."""


class TimelineError(HoodieError):
    """The timeline is inconsistent, or an instant cannot be found or created (an unknown instant given
    to ``commit_metadata`` or ``rollback``, an instant time that does not parse), or a rollback is refused
    (not the latest write, or a commit Apache Hudi savepointed).

    What to do: list the instants (``HoodieTable(path).instants()`` or ``CALL show_commits``) and name an
    existing one; roll back newer writes first; delete a savepoint with Apache Hudi's
    ``CALL delete_savepoint`` before rolling its commit back."""


class SavepointError(TimelineError):
    """A savepoint cannot be created, deleted or restored: the instant is not a completed commit on the active
    timeline, the cleaner already passed it (its files may be gone), it is savepointed already, no savepoint
    of that time exists, or a restore to it would roll back a later savepoint, an archived commit
    (``hoodie.archive.beyond.savepoint``) or the instant of a writer still at work.

    What to do: list the commits (``CALL show_commits``) and savepoints (``CALL show_savepoints``) and name one
    of them; delete later savepoints first; wait for running writers to finish (or their heartbeats to expire)."""


class CommitConflictError(TimelineError):
    """An instant file that must be created exactly once already exists: another writer took the
    same instant or committed first.

    What to do: run the write again; for several writers set ``hoodie.write.concurrency.mode`` to
    ``optimistic_concurrency_control``."""


class StaleTaskAttemptError(HoodieError):
    """A write task attempt finished after its instant was completed without it or rolled back;
    it removed the files it wrote, and its write stats are not used.

    What to do: nothing: Spark discards the losing attempt (speculation, retries); it only shows in task logs."""


class HoodieWriteConflictError(HoodieError):
    """A write touched file groups that another write changed after it started (Hudi's
    ``HoodieWriteConflictException``); the message names that instant and those file groups. The write is
    rolled back.

    What to do: retry it, or let ``hoodie.write.num.retries.on.conflict`` retry it; in ``single_writer`` mode a
    second writer was not expected: use optimistic concurrency control."""


class ClusteringUpdateError(HoodieError):
    """A write updates or deletes records of file groups a pending clustering will rewrite, and the update
    strategy rejects that (Hudi's default ``SparkRejectUpdateStrategy``, its ``HoodieClusteringUpdateException``);
    the message names the file groups and the clustering instant. Nothing is written.

    What to do: run the clustering first (``HoodieTable.cluster()``, ``CALL run_clustering``), or write with
    ``hoodie.clustering.updates.strategy=SparkAllowUpdateStrategy`` (the clustering then fails, or with
    ``hoodie.clustering.rollback.pending.replacecommit.on.conflict=true`` is rolled back by the write)."""


class WriteLayoutError(HoodieError):
    """A write's tasks did not divide its work as it requires (whole partitions, whole file groups), so
    committing could lose or duplicate rows; the write is rolled back instead.

    What to do: for a SQL append whose rows spell one partition two ways (null and ``''``), run it with
    ``spark.hoodie.sql.clusteredWrites=false``; otherwise report it as a bug."""


class FileGroupWrittenTwiceError(WriteLayoutError):
    """Two tasks of one write wrote new base files of the same file group, so committing
    would keep one and lose the other's rows; the write is rolled back instead.

    What to do: run the write again; report it as a bug if it repeats."""


class LockError(HoodieError):
    """The table lock cannot be used: its provider is misconfigured or its server cannot be reached.

    What to do: check ``hoodie.write.lock.provider`` and its settings (for ZooKeeper ``hoodie.write.lock.zookeeper.*``
    and ``pip install 'hoodie-datasource[zookeeper]'``)."""


class LockTimeoutError(LockError):
    """The table lock was not acquired within ``hoodie.write.lock.wait_time_ms`` and its retries; the
    message names the lock and its holder.

    What to do: wait for the holder, or raise ``hoodie.write.lock.num_retries``; a killed holder's storage lock
    is free after ``hoodie.write.lock.storage.validity.timeout.secs``."""


class SchemaMismatchError(HoodieError):
    """Incoming data does not fit the table's schema: a missing column, a type change that is not a
    widening, a non-boolean ``_hoodie_is_deleted``. Nothing is written.

    What to do: cast the data to the table's types, or add the column as nullable; widening (int to bigint,
    float to double) and new columns are accepted."""


class InvalidRecordError(HoodieError):
    """A record cannot be written: a null or missing record key, a null precombine value in a write
    that combines by it, a partition value that is not a path inside the table (``.``, ``..``, ``.hoodie``).
    The write is rolled back.

    What to do: the message names the field and value; filter or fix those records."""


class StreamingCheckpointError(HoodieError):
    """A streaming query's checkpoint does not belong to the table it reads or writes.

    What to do: give the query a new ``checkpointLocation`` for this table."""


class StreamingSinkError(StreamingCheckpointError):
    """A streaming query cannot write its micro-batch: another query writes the table under the same
    ``hoodie.datasource.write.streaming.checkpoint.identifier``, so their batch ids cannot be told apart.

    What to do: give each query writing the table its own identifier."""


class KafkaSourceError(HoodieError):
    """The streamer cannot read its Kafka topic: the topic does not exist, the broker does not answer, or a
    read of a partition's offsets failed.

    What to do: the message names the topic, partitions and offsets; check the topic and
    ``bootstrap.servers``."""


class KafkaDataLossError(KafkaSourceError):
    """Records the table has not read yet are no longer in the Kafka topic (aged out, truncated, the topic
    deleted), or the table's checkpoint is past the topic's end (the topic was made again). Nothing is
    written.

    What to do: the message names each partition with its checkpoint and the offsets Kafka holds; replay
    the lost records from elsewhere, then resume with ``--checkpoint``, or set
    ``hoodie.streamer.source.kafka.enable.failOnDataLoss=false`` to go on from the earliest offsets."""


class SchemaRegistryError(HoodieError):
    """The schema registry (``hoodie.streamer.schemaprovider.registry.url``, ``schema.registry.url``) did not
    answer, or answered with something that is not a schema, while the streamer fetched the latest schema of a
    subject or the writer schema a Kafka message names by its id. Nothing is written.

    What to do: the message names the registry URL (and the topic, partition and offset of the message
    being decoded); check that the registry runs and that the URL names a subject version
    (``.../subjects/<subject>/versions/latest``)."""


class HoodieIndexError(HoodieError):
    """The index cannot be built or read (for example a base file lost its bloom footer).

    What to do: the message names the file; rewrite the table with a bulk insert, or use the SIMPLE index."""


class HBaseIndexUnavailableError(HoodieIndexError):
    """The HBase index's cluster did not answer within hoodie.index.hbase.zk.connection_timeout_ms, or refused a
    request (Apache Hudi's ``HoodieDependentSystemUnavailableException``); the write was rolled back.

    What to do: the message names the quorum, the table and the Thrift gateway; start or reach them, create the
    table (family ``_s``) if it is missing, then write again."""


class CorruptFileError(HoodieError):
    """A data, log or metadata file cannot be parsed (a base file pyarrow cannot read, commit metadata
    that is neither JSON nor Avro).

    What to do: the message names the file; restore it from a backup, or roll back the instant that wrote it."""


class MetadataTableError(HoodieError):
    """The metadata table cannot be kept true by this change (Hudi's ``HoodieMetadataException``): it cannot
    compact while a data instant before its latest deltacommit stays pending and has gathered more than
    ``hoodie.metadata.max.deltacommits.when_pending`` deltacommits, or the rollback of a commit its compaction
    already took in would leave its record index wrong.

    What to do: the message names the pending or compacted instant: roll back or complete the pending instant,
    or write once with ``hoodie.metadata.enable=false`` (the metadata table is deleted and the next write with it
    on builds it again from storage)."""


class MetadataTableNotReadyError(HoodieError):
    """The table has no metadata table, or not the partition of it asked for (``hoodie.properties`` does not list it
    in ``hoodie.table.metadata.partitions``): ``HoodieTable.metadata_*``, ``CALL show_metadata_table_*``,
    ``validate_metadata_table_files`` and ``init_metadata_table`` read nothing then (Hudi's "Metadata Table not
    enabled/initialized").

    What to do: build it with ``HoodieTable(path).create_metadata_table()`` or ``CALL create_metadata_table``, its
    index partitions switched on by their options (``hoodie.metadata.index.column.stats.enable``, ...); a write
    with ``hoodie.metadata.enable=true`` (the default) builds it too."""


class MetadataTableExistsError(HoodieError):
    """``CALL create_metadata_table`` on a table whose metadata folder (``.hoodie/metadata``) is not empty, as
    Hudi's ``CreateMetadataTableProcedure`` refuses it.

    What to do: ``CALL init_metadata_table`` builds the partitions the options want that are missing; or delete
    it first with ``CALL delete_metadata_table``."""


class ReadWindowError(HoodieError):
    """A time-travel or incremental read reaches files the cleaner removed or instants archived out of
    reach, so it cannot be answered exactly (see ``read.read_window``); the message names the earliest instant
    still readable.

    What to do: read from that instant on; keep more history with ``hoodie.cleaner.commits.retained``; or, for
    incremental reads, ``hoodie.datasource.read.incr.fallback.fulltablescan.enable=true``."""


class StorageError(HoodieError):
    """A file or object of the table cannot be read or written; the message names its URI (never a
    credential) and what to check.

    What to do: check the store is reachable and the table's files are there."""


class UnsupportedStorageError(StorageError, HoodieConfigError):
    """The table URI's scheme names no storage this library can use, or HDFS's client
    (libhdfs, a JVM, the Hadoop jars) is missing.

    What to do: use a local path or an ``s3://``, ``s3a://``, ``az://``, ``abfss://``, ``gs://``, ``hdfs://`` or
    ``viewfs://`` URI; for HDFS set ``ARROW_LIBHDFS_DIR``, ``JAVA_HOME`` and ``CLASSPATH``."""


class StorageAccessError(StorageError):
    """The store refused the request: missing or wrong credentials, or no permission.

    What to do: check the credentials the table gets (environment, profile, Spark's Hadoop keys,
    ``hoodie.storage.*``, later ones winning) and the permissions on the URI the message names."""


class StorageNotFoundError(StorageError):
    """The bucket or container the table URI names does not exist.

    What to do: create it, or fix the URI (and the endpoint or region it is looked up in)."""


class ConditionalCreateUnsupportedError(StorageError):
    """The store cannot create an object only if it is absent, so a commit there
    could silently overwrite another writer's (see ``hoodie.storage.conditional.create.unsafe``); HDFS and
    some S3-compatible servers.

    What to do: use a store with conditional puts, or, when only one writer ever commits, set
    ``hoodie.storage.conditional.create.unsafe=true``."""


class PythonEnvironmentError(HoodieError, ImportError):
    """The Python interpreter running this code (often a Spark worker's) lacks a dependency:
    the message names the interpreter and how to point Spark at the right one.

    What to do: install hoodie-datasource in that interpreter, or set ``PYSPARK_PYTHON`` /
    ``spark.pyspark.python`` to one that has it."""


class SharingConfigError(HoodieConfigError):
    """The Delta Sharing server's configuration (``hoodie-sharing --config``) is not valid: a missing ``name`` or
    ``location``, two tables of one name, a recipient without a token or granted a share that does not exist.

    What to do: the message names the entry and the field; fix the YAML file (``docs/guides/sharing.md``)."""


class SharingRequestError(HoodieError):
    """A Delta Sharing request the server refuses (``hoodie_datasource.sharing``): the HTTP status and the
    protocol's ``errorCode`` travel with it, the message says what was wrong (an unknown version, a timestamp
    before the table, ``endingVersion`` before ``startingVersion``, a malformed page token).

    What to do: fix the request as the message says; the client sees it as ``{errorCode, message}``."""

    status = 400
    error_code = "INVALID_PARAMETER_VALUE"


class SharingNotFoundError(SharingRequestError):
    """A share, schema or table the recipient may not see, or that does not exist (the server answers the same
    for both, so a recipient learns nothing about shares not granted to it).

    What to do: list what the profile may read (``SharingClient(profile).list_all_tables()``)."""

    status = 404
    error_code = "RESOURCE_DOES_NOT_EXIST"


class SharingUnauthenticatedError(SharingRequestError):
    """The request carries no bearer token, or one no recipient of the server holds, or one past its expiry.

    What to do: use the profile file the server's owner handed out (``hoodie-sharing profile``)."""

    status = 401
    error_code = "UNAUTHENTICATED"


class SharingForbiddenError(SharingRequestError):
    """A file URL whose token is forged, altered, signed by another secret or past its expiry
    (``preSignedUrlTimeoutSeconds``), or that names a file outside its table.

    What to do: query the table again for fresh URLs."""

    status = 403
    error_code = "PERMISSION_DENIED"
