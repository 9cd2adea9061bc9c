"""The typed view of ``.hoodie/hoodie.properties``: what a table is, fixed at creation, and where its
meta folder keeps things.

Below the timeline in the layers (as hudi-rs keeps ``config/table.rs`` under its timeline): the timeline
is laid out as the table's config says (its folder, its layout version, the archive folder)."""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass

from hoodie_datasource.config.properties_file import format_properties, parse_properties
from hoodie_datasource.errors import CorruptFileError, TableNotFoundError, UnsupportedTableError
from hoodie_datasource.storage.storage import Storage, join

METAFOLDER = ".hoodie"
PROPERTIES_FILE = "hoodie.properties"
METADATA_FOLDER = "metadata"  # Apache Hudi's metadata table, in the meta folder (``table.metadata_table``)

KEYGEN_SIMPLE = "org.apache.hudi.keygen.SimpleKeyGenerator"
KEYGEN_COMPLEX = "org.apache.hudi.keygen.ComplexKeyGenerator"
KEYGEN_NONPARTITIONED = "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
KEYGEN_TIMESTAMP = "org.apache.hudi.keygen.TimestampBasedKeyGenerator"
KEYGEN_CUSTOM = "org.apache.hudi.keygen.CustomKeyGenerator"
# KeyGeneratorType's names of the generators above (hoodie.table.keygenerator.type, Hudi 1.x)
KEYGEN_TYPES = {
    "SIMPLE": KEYGEN_SIMPLE,
    "COMPLEX": KEYGEN_COMPLEX,
    "NON_PARTITION": KEYGEN_NONPARTITIONED,
    "TIMESTAMP": KEYGEN_TIMESTAMP,
    "CUSTOM": KEYGEN_CUSTOM,
}
KEYGEN_OPTION_PREFIX = "hoodie.keygen."
PAYLOAD_OVERWRITE_LATEST = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
METADATA_PAYLOAD = "org.apache.hudi.metadata.HoodieMetadataPayload"  # the metadata table's, and only its
EVENT_TIME_MERGE_STRATEGY = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"

SUPPORTED_READ_VERSIONS = (6, 8, 9)
WRITTEN_VERSION = 6  # the one table version (timeline layout 1) this library writes

# HoodieTableConfig.CDC_ENABLED / CDC_SUPPLEMENTAL_LOGGING_MODE (default DATA_BEFORE_AFTER, stored as the
# HoodieCDCSupplementalLoggingMode name; Hudi 0.13 wrote cdc_op_key / cdc_data_before / cdc_data_before_after)
CDC_ENABLED_KEY = "hoodie.table.cdc.enabled"
CDC_MODE_KEY = "hoodie.table.cdc.supplemental.logging.mode"
CDC_DEFAULT_MODE = "DATA_BEFORE_AFTER"
_LEGACY_CDC_MODES = {"CDC_OP_KEY": "OP_KEY_ONLY", "CDC_DATA_BEFORE": "DATA_BEFORE",
                     "CDC_DATA_BEFORE_AFTER": "DATA_BEFORE_AFTER"}


def orders_by_event_time(payload_class: str) -> bool:
    """``DefaultHoodieRecordPayload``: a stored record with a greater ordering value wins over an incoming one
    (its ``combineAndGetUpdateValue``); under any other payload the incoming record replaces the stored one."""
    return payload_class.endswith("DefaultHoodieRecordPayload")


def table_checksum(database: str, table: str) -> int:
    """Hudi's ``hoodie.table.checksum``: CRC32 of ``"<database>.<table>"``."""
    return zlib.crc32(f"{database}.{table}".encode())


@dataclass(frozen=True)
class TableConfig:
    """Table-level settings read from, or about to be written to, hoodie.properties."""

    name: str
    table_type: str
    version: int
    timeline_layout_version: int
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...]
    precombine_field: str | None
    keygen_class: str
    hive_style_partitioning: bool
    url_encode_partitions: bool
    populate_meta_fields: bool
    base_file_format: str
    payload_class: str
    database: str = "default"
    create_schema: str | None = None
    timeline_path: str = ""
    archive_folder: str = "archived"
    cdc_enabled: bool = False
    cdc_logging_mode: str = CDC_DEFAULT_MODE  # OP_KEY_ONLY | DATA_BEFORE | DATA_BEFORE_AFTER
    # the key generator's own options Hudi records (``hoodie.keygen.*``: a timestamp-based one's formats and zones)
    keygen_options: tuple[tuple[str, str], ...] = ()
    raw: tuple[tuple[str, str], ...] = ()

    @property
    def is_mor(self) -> bool:
        return self.table_type == "MERGE_ON_READ"

    @property
    def is_metadata_table(self) -> bool:
        """Apache Hudi's metadata table (``.hoodie/metadata``), which Hudi tells apart by its path
        (``HoodieTableMetadata.isMetadataTable``); its ``hoodie.properties`` names its payload."""
        return self.payload_class == METADATA_PAYLOAD

    @property
    def is_partitioned(self) -> bool:
        """Its files are in partition folders: the metadata table names no partition field, but keeps each of
        its partitions (``files``, ``column_stats``, ...) in a folder."""
        return bool(self.partition_fields) or self.is_metadata_table

    @property
    def timeline_dir(self) -> str:
        """Relative to .hoodie: "" for v6 (layout 1), "timeline" for v8+ (layout 2)."""
        return self.timeline_path

    @staticmethod
    def from_properties(props: dict[str, str]) -> TableConfig:
        try:
            version = int(props.get("hoodie.table.version", "0"))
        except ValueError:
            version = 0
        if version not in SUPPORTED_READ_VERSIONS:
            raise UnsupportedTableError(
                f"Hudi table version {props.get('hoodie.table.version')!r} is not supported; "
                f"supported versions: {', '.join(map(str, SUPPORTED_READ_VERSIONS))}"
            )
        layout = int(props.get("hoodie.timeline.layout.version", "1" if version < 8 else "2"))
        keygen = props.get("hoodie.table.keygenerator.class") or KEYGEN_TYPES.get(
            props.get("hoodie.table.keygenerator.type", "").upper(), ""
        )
        ordering = props.get("hoodie.table.precombine.field") or props.get("hoodie.table.ordering.fields")
        cdc_mode = props.get(CDC_MODE_KEY, CDC_DEFAULT_MODE).strip().upper()
        partition_fields = tuple(
            f.split(":")[0].strip() for f in props.get("hoodie.table.partition.fields", "").split(",") if f.strip()
        )
        return TableConfig(
            name=props.get("hoodie.table.name", ""),
            table_type=props.get("hoodie.table.type", "COPY_ON_WRITE").upper(),
            version=version,
            timeline_layout_version=layout,
            record_key_fields=tuple(
                f.strip() for f in props.get("hoodie.table.recordkey.fields", "").split(",") if f.strip()
            ),
            partition_fields=partition_fields,
            precombine_field=ordering or None,
            keygen_class=keygen,
            hive_style_partitioning=props.get("hoodie.datasource.write.hive_style_partitioning", "false").lower()
            == "true",
            url_encode_partitions=props.get("hoodie.datasource.write.partitionpath.urlencode", "false").lower()
            == "true",
            populate_meta_fields=props.get("hoodie.populate.meta.fields", "true").lower() == "true",
            base_file_format=props.get("hoodie.table.base.file.format", "PARQUET").upper(),
            payload_class=props.get("hoodie.compaction.payload.class", PAYLOAD_OVERWRITE_LATEST),
            database=props.get("hoodie.database.name", "default"),
            create_schema=props.get("hoodie.table.create.schema"),
            timeline_path=props.get("hoodie.timeline.path", "timeline") if layout >= 2 else "",
            archive_folder=props.get("hoodie.archivelog.folder", "archived"),
            cdc_enabled=props.get(CDC_ENABLED_KEY, "false").strip().lower() == "true",
            cdc_logging_mode=_LEGACY_CDC_MODES.get(cdc_mode, cdc_mode),
            keygen_options=tuple(sorted((k, v) for k, v in props.items() if k.startswith(KEYGEN_OPTION_PREFIX))),
            raw=tuple(sorted(props.items())),
        )

    def check_writable(self, uri: str) -> None:
        """Refuse, before anything is written, a change to a table of a version this library does not write
        (a version-8 table of Apache Hudi 1.x: another timeline layout, completion times, other plans)."""
        if self.version != WRITTEN_VERSION or self.timeline_layout_version != 1:
            raise UnsupportedTableError(
                f"{uri} is a Hudi table of version {self.version} (timeline layout {self.timeline_layout_version}, "
                f"written by Apache Hudi 1.x); this library reads it but writes only table version {WRITTEN_VERSION} "
                f"(timeline layout 1, Apache Hudi 0.14/0.15), so nothing was written. To write it here, downgrade "
                f"it with Apache Hudi 1.x first (CALL downgrade_table(table => '<name>', to_version => 'SIX')), "
                f"or write it with Apache Hudi 1.x")

    def to_properties(self) -> dict[str, str]:
        """The properties a new version-6 table gets (what Hudi 0.14/0.15 writes)."""
        props = {
            "hoodie.table.name": self.name,
            "hoodie.table.type": self.table_type,
            "hoodie.table.version": str(self.version),
            "hoodie.timeline.layout.version": str(self.timeline_layout_version),
            "hoodie.database.name": self.database,
            "hoodie.table.recordkey.fields": ",".join(self.record_key_fields),
            "hoodie.table.keygenerator.class": self.keygen_class,
            "hoodie.datasource.write.hive_style_partitioning": str(self.hive_style_partitioning).lower(),
            "hoodie.datasource.write.partitionpath.urlencode": str(self.url_encode_partitions).lower(),
            "hoodie.datasource.write.drop.partition.columns": "false",
            "hoodie.populate.meta.fields": str(self.populate_meta_fields).lower(),
            "hoodie.table.base.file.format": self.base_file_format,
            "hoodie.table.log.file.format": "HOODIE_LOG",
            "hoodie.archivelog.folder": self.archive_folder,
            "hoodie.table.timeline.timezone": "UTC",
            "hoodie.compaction.payload.class": self.payload_class,
            "hoodie.compaction.record.merger.strategy": EVENT_TIME_MERGE_STRATEGY,
        }
        if self.partition_fields:
            props["hoodie.table.partition.fields"] = ",".join(self.partition_fields)
        if self.precombine_field:
            props["hoodie.table.precombine.field"] = self.precombine_field
        if self.create_schema:
            props["hoodie.table.create.schema"] = self.create_schema
        props.update(self.keygen_options)
        if self.cdc_enabled:  # HoodieTableMetaClient.PropertyBuilder: the mode only with CDC on
            props[CDC_ENABLED_KEY] = "true"
            props[CDC_MODE_KEY] = self.cdc_logging_mode
        props["hoodie.table.checksum"] = str(table_checksum(self.database, self.name))
        return props


PROPERTIES_PATH = join(METAFOLDER, PROPERTIES_FILE)


BACKUP_PATH = PROPERTIES_PATH + ".backup"


def table_exists(storage: Storage) -> bool:
    """``hoodie.properties`` exists, or only its backup (Hudi caught between deleting and rewriting it)."""
    return storage.exists(PROPERTIES_PATH) or storage.exists(BACKUP_PATH)
CHECKSUM_SINCE_VERSION = 3  # Hudi writes hoodie.table.checksum from table version 3 (0.10) on


def _intact(props: dict[str, str]) -> bool:
    """The checksum Hudi's ``HoodieTableConfig.generateChecksum`` computes (CRC32 of "<database>.<table>",
    the database "" when unset) is there and matches: a truncated or half-written file fails it.

    Stricter than Hudi's ``HoodieConfigUtils.fetchConfigs``, which checks the checksum only when the file
    has one: Hudi writes it as the last entry of every table of version 3 and later, so there a file
    without it was cut short, and reading it with defaults for the missing keys (a MERGE_ON_READ table
    taken for COPY_ON_WRITE) would be a silent wrong answer."""
    checksum = props.get("hoodie.table.checksum")
    if checksum is None:
        version = props.get("hoodie.table.version", "0")
        return version.isdigit() and int(version) < CHECKSUM_SINCE_VERSION and "hoodie.table.name" in props
    expected = table_checksum(props.get("hoodie.database.name", ""), props.get("hoodie.table.name", ""))
    return checksum.strip().isdigit() and int(checksum) == expected


def load_table_config(storage: Storage) -> TableConfig:
    """``hoodie.properties``, or its backup when it is damaged or missing (Hudi keeps
    ``hoodie.properties.backup`` while it updates the file, which it deletes and writes again, and reads
    the backup when the file is absent or fails its checksum: ``HoodieConfigUtils.fetchConfigs``)."""
    try:
        props = parse_properties(storage.read(PROPERTIES_PATH).decode("latin-1"))
    except FileNotFoundError:
        props = None
    if props is None or not _intact(props):
        try:
            backup = parse_properties(storage.read(BACKUP_PATH).decode("latin-1"))
        except FileNotFoundError:
            backup = {}
        if props is None and not backup:
            raise TableNotFoundError(
                f"No Hudi table at {storage.uri}: {storage.uri_of(PROPERTIES_PATH)} does not exist") from None
        if not _intact(backup):
            raise CorruptFileError(
                f"{storage.uri_of(PROPERTIES_PATH)} is damaged: hoodie.table.checksum is missing or does not match "
                f"the table name (a truncated or half-written file), and there is no intact "
                f"{PROPERTIES_FILE}.backup; restore the file from a copy")
        props = backup
    return TableConfig.from_properties(props)


def update_table_properties(storage: Storage, changes: Mapping[str, str]) -> TableConfig:
    """Set ``changes`` in ``hoodie.properties`` by Hudi's update protocol (``HoodieTableConfig.modify``), so a
    reader never sees a half-written file and a crash at any step leaves one a later update recovers: recover
    from an earlier attempt, back the file up, delete it (readers then read the backup), write it anew with
    its checksum, read it back to verify, delete the backup."""
    _recover_properties(storage)
    props = dict(load_table_config(storage).raw)
    storage.create_once(BACKUP_PATH, format_properties(props).encode("latin-1"))
    storage.delete(PROPERTIES_PATH)
    props.update(changes)
    props.pop("hoodie.table.checksum", None)  # the last entry, as Hudi stores it
    props["hoodie.table.checksum"] = str(table_checksum(props.get("hoodie.database.name", ""),
                                                        props.get("hoodie.table.name", "")))
    storage.write(PROPERTIES_PATH, format_properties(props).encode("latin-1"))
    written = parse_properties(storage.read(PROPERTIES_PATH).decode("latin-1"))
    if written.get("hoodie.table.checksum") != props["hoodie.table.checksum"]:
        storage.delete(PROPERTIES_PATH)  # readers keep reading the backup; the next update recovers
        raise CorruptFileError(f"{storage.uri_of(PROPERTIES_PATH)} did not read back as written")
    storage.delete(BACKUP_PATH)
    return TableConfig.from_properties(written)


def _recover_properties(storage: Storage) -> None:
    """``HoodieTableConfig.recoverIfNeeded``: a missing or damaged ``hoodie.properties`` is restored from its
    backup, and the backup is deleted."""
    try:
        intact = _intact(parse_properties(storage.read(PROPERTIES_PATH).decode("latin-1")))
    except FileNotFoundError:
        intact = False
    if not intact:
        try:
            storage.write(PROPERTIES_PATH, storage.read(BACKUP_PATH))
        except FileNotFoundError:
            pass
    storage.delete(BACKUP_PATH)


def write_table_config(storage: Storage, config: TableConfig) -> None:
    """Write hoodie.properties (replaced atomically). Local tables also get the empty ``.hoodie``
    folders Hudi creates; object stores have no empty folders."""
    for sub in (".aux/.bootstrap/.partitions", ".aux/.bootstrap/.fileids", ".temp", ".schema", config.archive_folder):
        storage.make_dirs(join(METAFOLDER, sub))
    storage.write(PROPERTIES_PATH, format_properties(config.to_properties()).encode("latin-1"))
