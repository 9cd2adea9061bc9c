"""The metadata table's base files: HFiles of a file group's records in key order, as Hudi's
``HoodieAvroHFileWriter`` writes them for its metadata table: the record schema in the file info, and a bloom
filter of the keys with the first and last key (``HoodieWriteConfig``'s defaults: ``DYNAMIC_V0``, 60,000 entries,
fpp 1e-9, growing to 100,000), 1 MB blocks compressed with GZ. Written by a partition's initialization and by
compaction, a marker first."""

from __future__ import annotations

import time

import pyarrow as pa
import pyarrow.compute as pc

from hoodie_datasource.hfile.writer import HFileWriterConfig, HudiBloomFilter, write_hfile
from hoodie_datasource.index.bloom_filter import new_bloom_filter
from hoodie_datasource.metadata.records import METADATA_RECORD_SCHEMA_JSON, encode_records
from hoodie_datasource.storage.storage import join
from hoodie_datasource.table.file_names import UNKNOWN_WRITE_TOKEN, base_file_name
from hoodie_datasource.table.markers import create_marker
from hoodie_datasource.table.table import Table
from hoodie_datasource.timeline.commit_metadata import WriteStat


def write_base_hfile(mdt: Table, partition: str, file_id: str, instant_time: str, records: pa.Table,
                     prev_commit: str = "null") -> WriteStat:
    """The file group's base HFile of ``records`` (each key once) at ``instant_time``; its write stat."""
    started = time.monotonic()
    keys, values = encode_records(records)
    order = pc.sort_indices(keys)
    keys, values = keys.take(order), values.take(order)
    bloom = new_bloom_filter()
    bloom.add_keys(keys)
    content = write_hfile(keys, values, HFileWriterConfig(), avro_schema=METADATA_RECORD_SCHEMA_JSON,
                          bloom_filter=HudiBloomFilter(bloom.type_code, bloom.serialize()))
    name = base_file_name(file_id, UNKNOWN_WRITE_TOKEN, instant_time, "hfile")
    create_marker(mdt.storage, instant_time, partition, name, "CREATE")
    mdt.storage.write(join(partition, name), content)
    return WriteStat(
        fileId=file_id, path=join(partition, name), partitionPath=partition, prevCommit=prev_commit,
        numWrites=len(keys), numInserts=len(keys) if prev_commit == "null" else 0,
        numUpdateWrites=0 if prev_commit == "null" else len(keys), totalWriteBytes=len(content),
        fileSizeInBytes=len(content),
        runtimeStats={"totalScanTime": 0, "totalUpsertTime": 0,
                      "totalCreateTime": int((time.monotonic() - started) * 1000)},
    )
