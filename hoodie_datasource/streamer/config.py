"""The streamer's command line, as Apache Hudi's ``HoodieStreamer.Config`` spells it, resolved once.

    --target-base-path P  --target-table NAME  [--table-type COPY_ON_WRITE|MERGE_ON_READ]
    [--source-class JsonDFSSource|CsvDFSSource|ParquetDFSSource|AvroDFSSource|HoodieIncrSource
                    |JsonKafkaSource|AvroKafkaSource]
    [--source-ordering-field ts]  [--op UPSERT|INSERT|BULK_INSERT]
    [--transformer-class SqlQueryBasedTransformer]     with hoodie.streamer.transformer.sql
    [--continuous [--min-sync-interval-seconds N]]     else one round
    [--post-write-termination-strategy-class NoNewDataTerminationStrategy]
    [--schemaprovider-class FilebasedSchemaProvider|SchemaRegistryProvider]   else the one whose settings are given
    [--checkpoint C]  [--source-limit BYTES]  [--props FILE]  [--hoodie-conf k=v ...]  [--spark-master M]

Settings given with ``--hoodie-conf`` (or in the ``--props`` file), besides the target's write options:
    hoodie.streamer.source.dfs.root                the directory a DFS source reads
    hoodie.streamer.source.hoodieincr.path         the table a HoodieIncrSource follows
    hoodie.streamer.source.hoodieincr.num_instants commits per round (default 5, as Hudi)
    hoodie.streamer.source.kafka.topic             the topic a Kafka source reads, with bootstrap.servers=host:port
                                                   (settings not starting with hoodie. go to the Kafka client)
    auto.offset.reset                              earliest | latest (default, as Hudi) | group: where a table
                                                   without a checkpoint starts
    hoodie.streamer.kafka.source.maxEvents         records per round (default 5000000; --source-limit overrides)
    hoodie.streamer.source.kafka.minPartitions     split large partitions into about this many tasks
    hoodie.streamer.source.kafka.enable.failOnDataLoss  fail when records not read yet were deleted (default true)
    hoodie.streamer.source.kafka.enable.commit.offset   also commit the read offsets to group.id
    hoodie.streamer.source.kafka.value.deserializer.class  AvroKafkaSource: io.confluent.kafka.serializers.
                                                   KafkaAvroDeserializer (framed values, default) or org.apache.
                                                   kafka.common.serialization.ByteArrayDeserializer (bare records)
    schema.registry.url                            AvroKafkaSource: the registry a framed value's schema id is
                                                   looked up in (default: registry.url up to /subjects/)
    hoodie.streamer.transformer.sql                SELECT ... FROM <SRC>
    hoodie.streamer.csv.header                     CSV files start with a header line (default false)
    hoodie.streamer.schemaprovider.source.schema.file  an Avro schema (.avsc) the source records follow
    hoodie.streamer.schemaprovider.registry.url    SchemaRegistryProvider: the source schema's subject version in a
                                                   schema registry (http://host:8081/subjects/<subject>/versions/latest)
    hoodie.streamer.schemaprovider.registry.targetUrl  the target schema's (default: registry.url)
    hoodie.errortable.enable / .base.path / .target.table.name   bad records go to an error table instead
                                                   of failing the round
    max.rounds.without.new.data.to.shutdown        with NoNewDataTerminationStrategy: stop a continuous
                                                   run after this many rounds without new data
The older ``hoodie.deltastreamer.`` prefix is accepted for every ``hoodie.streamer.`` key.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from hoodie_datasource.config import keys as k
from hoodie_datasource.config.properties_file import parse_properties
from hoodie_datasource.errors import HoodieConfigError
from hoodie_datasource.streamer.file_source import FORMATS
from hoodie_datasource.streamer.kafka_source import AVRO_DESERIALIZERS, RESETS, KafkaSourceConfig, client_settings
from hoodie_datasource.streamer.schema_registry import SchemaRegistryConfig, registry_root

SOURCES = {"JsonDFSSource": "json", "CsvDFSSource": "csv", "ParquetDFSSource": "parquet", "AvroDFSSource": "avro",
           "HoodieIncrSource": "hoodie", "JsonKafkaSource": "kafka-json", "AvroKafkaSource": "kafka-avro"}
KAFKA = "hoodie.streamer.source.kafka."
OPERATIONS = ("UPSERT", "INSERT", "BULK_INSERT")
SQL_TRANSFORMER = "SqlQueryBasedTransformer"
NO_NEW_DATA_TERMINATION = "NoNewDataTerminationStrategy"
STREAMER_PREFIX, OLD_PREFIX = "hoodie.streamer.", "hoodie.deltastreamer."
ERROR_TABLE_PREFIX = "hoodie.errortable."
IDLE_ROUNDS_KEY = "max.rounds.without.new.data.to.shutdown"
SCHEMA_FILE = "hoodie.streamer.schemaprovider.source.schema.file"
REGISTRY = "hoodie.streamer.schemaprovider.registry."
SCHEMA_PROVIDERS = ("FilebasedSchemaProvider", "SchemaRegistryProvider")


@dataclass(frozen=True)
class StreamerConfig:
    target_path: str
    target_table: str
    table_type: str = "COPY_ON_WRITE"
    source: str = "json"  # json | csv | parquet | avro | hoodie | kafka-json | kafka-avro
    source_root: str = ""  # the DFS directory, or the followed table, or the Kafka topic
    ordering_field: str = "ts"
    operation: str = "UPSERT"
    transformer_sql: str | None = None
    continuous: bool = False
    min_sync_interval_s: float = 0.0
    idle_rounds_to_stop: int | None = None  # NoNewDataTerminationStrategy
    checkpoint: str | None = None
    source_limit: int = 2**63 - 1
    incr_num_instants: int = 5
    csv_header: bool = False
    source_schema_file: str | None = None  # FilebasedSchemaProvider
    schema_registry: SchemaRegistryConfig | None = None  # SchemaRegistryProvider
    error_table_path: str | None = None
    error_table_name: str = ""
    spark_master: str | None = None
    kafka: KafkaSourceConfig | None = None
    write_options: Mapping[str, str] = field(default_factory=dict)  # the target's (and the storage's) options

    @property
    def key_fields(self) -> tuple[str, ...]:
        return tuple(k.CATALOG.resolve(self.write_options, k.RECORD_KEY))


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m hoodie_datasource.streamer",
                                description="Ingest a directory of files or another hoodie table's commits into a "
                                            "hoodie table, once or continuously (Apache Hudi's HoodieStreamer)")
    p.add_argument("--target-base-path", required=True)
    p.add_argument("--target-table", required=True)
    p.add_argument("--table-type", default="COPY_ON_WRITE", choices=k.TABLE_TYPES)
    p.add_argument("--source-class", default="JsonDFSSource",
                   help=f"one of {', '.join(SOURCES)} (Hudi's class names, with or without their package)")
    p.add_argument("--source-ordering-field", default="ts")
    p.add_argument("--op", default="UPSERT", type=str.upper, choices=OPERATIONS)
    p.add_argument("--transformer-class", default=None, help=f"{SQL_TRANSFORMER}, with hoodie.streamer.transformer.sql")
    p.add_argument("--continuous", action="store_true")
    p.add_argument("--min-sync-interval-seconds", type=float, default=0.0)
    p.add_argument("--post-write-termination-strategy-class", default=None, help=NO_NEW_DATA_TERMINATION)
    p.add_argument("--schemaprovider-class", default=None, help=f"one of {', '.join(SCHEMA_PROVIDERS)}")
    p.add_argument("--checkpoint", default=None, help="resume from this checkpoint instead of the recorded one")
    p.add_argument("--source-limit", type=int, default=2**63 - 1, help="bytes of source files per round")
    p.add_argument("--props", default=None, help="a properties file of settings")
    p.add_argument("--hoodie-conf", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--spark-master", default=None)
    return p


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def parse_config(argv: Sequence[str], read_file=None) -> StreamerConfig:
    """The streamer's settings from its command line; ``read_file(path) -> bytes`` reads ``--props``."""
    args = _parser().parse_args(list(argv))
    conf: dict[str, str] = {}
    if args.props:
        conf.update(parse_properties(read_file(args.props).decode("utf-8")))
    for entry in args.hoodie_conf:
        key, sep, value = entry.partition("=")
        if not sep or not key.strip():
            raise HoodieConfigError(f"--hoodie-conf {entry!r} is not KEY=VALUE")
        conf[key.strip()] = value
    conf = {(STREAMER_PREFIX + key[len(OLD_PREFIX):] if key.startswith(OLD_PREFIX) else key): v for key, v in conf.items()}
    source = SOURCES.get(_short(args.source_class)) or (args.source_class if args.source_class in FORMATS else None)
    if source is None:
        raise HoodieConfigError(f"Unknown --source-class {args.source_class!r}; valid values: {', '.join(SOURCES)}")
    root_key = "hoodie.streamer.source." + {"hoodie": "hoodieincr.path", "kafka-json": "kafka.topic",
                                            "kafka-avro": "kafka.topic"}.get(source, "dfs.root")
    if not conf.get(root_key):
        raise HoodieConfigError(f"--source-class {args.source_class} needs --hoodie-conf {root_key}=<"
                                f"{'topic' if source.startswith('kafka') else 'path'}>")
    provider = _schema_provider(args.schemaprovider_class, conf)
    registry = SchemaRegistryConfig(conf[REGISTRY + "url"], conf.get(REGISTRY + "targetUrl") or conf[REGISTRY + "url"]) \
        if provider == "SchemaRegistryProvider" else None
    kafka = _kafka_config(source, conf, root_key, provider) if source.startswith("kafka") else None
    sql = conf.get("hoodie.streamer.transformer.sql")
    if args.transformer_class is not None:
        if _short(args.transformer_class) != SQL_TRANSFORMER:
            raise HoodieConfigError(f"Unknown --transformer-class {args.transformer_class!r}; "
                                    f"valid values: {SQL_TRANSFORMER}")
        if not sql or "<SRC>" not in sql:
            raise HoodieConfigError(f"{SQL_TRANSFORMER} needs --hoodie-conf hoodie.streamer.transformer.sql="
                                    "'SELECT ... FROM <SRC>'")
    elif sql:
        raise HoodieConfigError(f"hoodie.streamer.transformer.sql is set: add --transformer-class {SQL_TRANSFORMER}")
    idle_rounds = None
    if args.post_write_termination_strategy_class is not None:
        if _short(args.post_write_termination_strategy_class) != NO_NEW_DATA_TERMINATION:
            raise HoodieConfigError(f"Unknown --post-write-termination-strategy-class "
                                    f"{args.post_write_termination_strategy_class!r}; "
                                    f"valid values: {NO_NEW_DATA_TERMINATION}")
        idle_rounds = int(conf.get(IDLE_ROUNDS_KEY, "3"))  # Hudi's default
        if idle_rounds < 1:
            raise HoodieConfigError(f"{IDLE_ROUNDS_KEY} must be >= 1, got {idle_rounds}")
    if args.min_sync_interval_seconds < 0 or args.source_limit < 1:
        raise HoodieConfigError("--min-sync-interval-seconds must be >= 0 and --source-limit >= 1")
    error_table = conf.get("hoodie.errortable.enable", "false").lower() == "true"
    if error_table and not conf.get("hoodie.errortable.base.path"):
        raise HoodieConfigError("hoodie.errortable.enable=true needs hoodie.errortable.base.path")
    write_options = {key: v for key, v in conf.items()
                     if not key.startswith((STREAMER_PREFIX, ERROR_TABLE_PREFIX)) and key != IDLE_ROUNDS_KEY
                     and (kafka is None or key.startswith("hoodie."))}
    write_options.update({
        "hoodie.table.name": args.target_table, "hoodie.datasource.write.table.type": args.table_type,
        "hoodie.datasource.write.operation": args.op.lower(),
        "hoodie.datasource.write.precombine.field": write_options.get(k.PRECOMBINE.key, args.source_ordering_field),
    })
    return StreamerConfig(
        target_path=args.target_base_path, target_table=args.target_table, table_type=args.table_type,
        source=source, source_root=conf[root_key], ordering_field=args.source_ordering_field, operation=args.op,
        transformer_sql=sql if args.transformer_class else None, continuous=args.continuous,
        min_sync_interval_s=args.min_sync_interval_seconds, idle_rounds_to_stop=idle_rounds,
        checkpoint=args.checkpoint, source_limit=args.source_limit,
        incr_num_instants=int(conf.get("hoodie.streamer.source.hoodieincr.num_instants", "5")),
        csv_header=conf.get("hoodie.streamer.csv.header", "false").lower() == "true",
        source_schema_file=conf.get(SCHEMA_FILE) if provider == "FilebasedSchemaProvider" else None,
        schema_registry=registry,
        error_table_path=conf.get("hoodie.errortable.base.path") if error_table else None,
        error_table_name=conf.get("hoodie.errortable.target.table.name") or f"{args.target_table}_errors",
        spark_master=args.spark_master, kafka=kafka, write_options=write_options,
    )


def _schema_provider(name: str | None, conf: Mapping[str, str]) -> str | None:
    """``--schemaprovider-class``'s short name, checked against its settings; without the option, the provider
    whose settings are given (the registry's first)."""
    if conf.get(REGISTRY + "schemaconverter"):
        raise HoodieConfigError(f"{REGISTRY}schemaconverter names a Java class, which the streamer cannot load here: "
                                "register the schema in Avro")
    if name is None:
        return "SchemaRegistryProvider" if conf.get(REGISTRY + "url") else \
            "FilebasedSchemaProvider" if conf.get(SCHEMA_FILE) else None
    if _short(name) not in SCHEMA_PROVIDERS:
        raise HoodieConfigError(f"Unknown --schemaprovider-class {name!r}; valid values: {', '.join(SCHEMA_PROVIDERS)}")
    needed = SCHEMA_FILE if _short(name) == "FilebasedSchemaProvider" else REGISTRY + "url"
    if not conf.get(needed):
        raise HoodieConfigError(f"--schemaprovider-class {_short(name)} needs --hoodie-conf {needed}=...")
    return _short(name)


def _kafka_config(source: str, conf: Mapping[str, str], topic_key: str, provider: str | None) -> KafkaSourceConfig:
    """A Kafka source's settings, under Apache Hudi's names (``KafkaSourceConfig``)."""
    reset = conf.get("auto.offset.reset", "latest").lower()
    if reset not in RESETS:
        raise HoodieConfigError(f"auto.offset.reset={reset!r} is not one of {', '.join(RESETS)}")
    deserializer = conf.get(KAFKA + "value.deserializer.class", "io.confluent.kafka.serializers.KafkaAvroDeserializer")
    if source == "kafka-avro":
        if deserializer not in AVRO_DESERIALIZERS:
            raise HoodieConfigError(f"{KAFKA}value.deserializer.class={deserializer!r} is not one of "
                                    f"{', '.join(AVRO_DESERIALIZERS)}")
        if provider is None:
            raise HoodieConfigError(f"AvroKafkaSource needs the records' Avro schema: --hoodie-conf {SCHEMA_FILE}=<path "
                                    f"of the .avsc>, or --hoodie-conf {REGISTRY}url=<registry>/subjects/<subject>/"
                                    "versions/latest")
    unsupported = {KAFKA + "checkpoint.type": "string", KAFKA + "append.offsets": "false"}
    for key, only in unsupported.items():
        if conf.get(key, only).lower() != only:
            raise HoodieConfigError(f"{key}={conf[key]!r} is not supported by the Kafka sources here; valid value: {only}")
    client = client_settings({key: v for key, v in conf.items() if key != IDLE_ROUNDS_KEY})
    if client.get("isolation.level", "read_uncommitted") != "read_uncommitted":
        raise HoodieConfigError(f"isolation.level={client['isolation.level']!r} is not supported by the Kafka sources: "
                                "they read to each partition's high watermark, as Hudi's do with the Java client's "
                                "default read_uncommitted")
    if not client.get("bootstrap.servers"):
        raise HoodieConfigError(f"--source-class {source} needs --hoodie-conf bootstrap.servers=<host:port,...>")
    numbers = {}
    for key, default in (("hoodie.streamer.kafka.source.maxEvents", "5000000"), (KAFKA + "minPartitions", "0")):
        try:
            numbers[key] = int(conf.get(key, default))
        except ValueError:
            raise HoodieConfigError(f"{key} must be a whole number, got {conf[key]!r}") from None
        if numbers[key] < 0:
            raise HoodieConfigError(f"{key} must be >= 0, got {numbers[key]}")
    return KafkaSourceConfig(
        topic=conf[topic_key], value_format="json" if source == "kafka-json" else "avro", client=client,
        auto_offset_reset=reset, max_events=numbers["hoodie.streamer.kafka.source.maxEvents"],
        min_partitions=numbers[KAFKA + "minPartitions"],
        fail_on_data_loss=conf.get(KAFKA + "enable.failOnDataLoss", "true").lower() == "true",
        commit_offsets=conf.get(KAFKA + "enable.commit.offset", "false").lower() == "true",
        confluent_framing=AVRO_DESERIALIZERS.get(deserializer, True),
        schema_registry=conf.get("schema.registry.url") or (registry_root(conf[REGISTRY + "url"])
                                                            if provider == "SchemaRegistryProvider" else None))
