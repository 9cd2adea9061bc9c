"""Hudi 0.15's own metadata-table keys and records (``MetadataRecords.java``, on its bundle) against ours
(``hoodie_datasource.metadata``), for random partitions, file names, columns and record keys: the column-stats and
bloom-filter keys, the file group a key goes to, and the bytes of record-index records."""

from __future__ import annotations

import base64
import datetime
import json
import random

import pyarrow as pa
import pytest

from hoodie_datasource.metadata.keys import bloom_filter_key, column_stats_key, file_group_indexes
from hoodie_datasource.metadata.records import METADATA_RECORD_SCHEMA, encode_records, record_index_records
from tests.hudi_oracle import HUDI_0_15
from tests.hudi_oracle.hfile_oracle import JavaHFiles

pytestmark = pytest.mark.hudi_oracle
ALPHABET = "abcXYZ019_-=/.:, é名😀"


def _b64(text: str) -> str:
    """A string as ``MetadataRecords.java`` takes it: base64, ``~`` for the empty string."""
    return base64.b64encode(text.encode()).decode() or "~"


def _text(rng: random.Random, low: int = 1) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(low, 30)))


@pytest.fixture(scope="module")
def java(tmp_path_factory):
    program = JavaHFiles("MetadataRecords", HUDI_0_15, tmp_path_factory.mktemp("metadata-records") / "java.log")
    yield program
    program.close()


def test_the_schema_is_javas_without_its_docs(java):
    def undocumented(avro):
        if isinstance(avro, dict):
            return {k: undocumented(v) for k, v in avro.items() if k != "doc"}
        return [undocumented(v) for v in avro] if isinstance(avro, list) else avro

    (text,) = java.ask("schema")
    assert undocumented(json.loads(base64.b64decode(text))) == METADATA_RECORD_SCHEMA


def test_keys_and_file_groups_are_javas(java):
    rng = random.Random(31)
    for _ in range(40):
        partition, file_name, column = rng.choice(["", _text(rng)]), _text(rng), _text(rng)
        stats_key, bloom_key = (base64.b64decode(k).decode() for k in
                                java.ask("keys", _b64(partition), _b64(file_name), _b64(column)))
        assert (column_stats_key(partition, file_name, column), bloom_filter_key(partition, file_name)) == \
            (stats_key, bloom_key)
    keys = [_text(rng) for _ in range(300)]
    for count in (1, 2, 10, 1000):
        assert file_group_indexes(pa.array(keys), count).tolist() == \
            [int(i) for i in java.ask("shard", str(count), *map(_b64, keys))]


def test_record_index_records_are_javas_bytes(java):
    rng = random.Random(6)
    start = datetime.datetime(2001, 1, 1)
    rows = [(_text(rng), rng.choice(["", _text(rng)]), f"{rng.getrandbits(128):032x}", rng.randint(0, 30),
             (start + datetime.timedelta(milliseconds=rng.getrandbits(40))).strftime("%Y%m%d%H%M%S%f")[:17])
            for _ in range(30)]
    file_ids = [f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}-{i}" for _, _, h, i, _ in rows]
    keys, partitions, instants = [r[0] for r in rows], [r[1] for r in rows], [r[4] for r in rows]
    records = record_index_records(pa.array(keys), pa.array(partitions), pa.array(file_ids), pa.array(instants))
    _, values = encode_records(records)
    for key, partition, file_id, instant, ours in zip(keys, partitions, file_ids, instants, values.to_pylist()):
        (theirs,) = java.ask("rli", _b64(key), _b64(partition), _b64(file_id), _b64(instant))
        record = base64.b64decode(theirs)
        emptied = b"\x00" + record[len(_avro_string(key)):]  # the key field emptied, as in an HFile
        assert ours == emptied


def _avro_string(text: str) -> bytes:
    raw = text.encode()
    n, out = len(raw) << 1, bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out) + raw
