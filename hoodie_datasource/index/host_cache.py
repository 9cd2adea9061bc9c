"""What tagging decodes from a base file's footer, kept on local disk for every Python process of a host.

Spark gives each task a Python worker whose caches (``base_file_cache``) start empty whenever the worker
is new, and workers die after a minute idle, so a write after a pause paid, per base file and per
worker, a footer read plus the Base64 decode and parse of its bloom filter (about 4.5 ms for Hudi's
default DYNAMIC_V0 filter) before hashing a single key. Here each file's row count, key range and
filter bits are written once, decoded, to a local scratch directory, and any later process maps the
bits straight from it (``mmap``: the page cache holds one copy for all the workers).

The directory (``hoodie-bloom-cache``) is the host's scratch (``storage.host_scratch``: private to the user, entries
written whole or not at all, least recently used ones evicted beyond ``BUDGET``). An entry is named by a
hash of the base file's full URI and size and records both, checked on load: a Hudi base file's name (file
id, write token, instant) is never reused, and files are immutable, so an entry never goes stale, and a
rewrite (a new name) finds no entry of the old file. One that does not parse (a foreign file, a crash of the
disk) is ignored and the footer read instead.

``BUDGET`` is 1 GiB: the filters of about 1,600 base files at Hudi's default sizing, two 323 KB rows a file.
Keeping the directory within it lists every entry, so it is done after one write in ``EVICT_ONE_IN`` (a cold
task writes an entry per file of its partitions: listing after each took a third of the writing); the
directory may then hold that many entries (about 10 MB) over its budget.
"""

from __future__ import annotations

import hashlib
import json
import logging
import struct
from dataclasses import dataclass

import numpy as np

from hoodie_datasource.index.bloom_filter import BloomFilter
from hoodie_datasource.storage import host_scratch

logger = logging.getLogger(__name__)

BUDGET = 1 << 30
EVICT_ONE_IN = 16
_MAGIC = b"HOODIEBF"
_VERSION = 1
_PREAMBLE = struct.Struct("<8sII")  # magic, format version, header length
_ALIGN = 64
_NAME = "hoodie-bloom-cache"


@dataclass(frozen=True)
class FooterIndex:
    """What tagging needs from one base file's footer."""

    num_rows: int
    min_key: str | None
    max_key: str | None
    bloom: BloomFilter | None


def _digest(uri: str, size: int) -> str:
    return hashlib.sha256(f"{uri}\0{size}".encode()).hexdigest()[:40]


def load(uri: str, size: int) -> FooterIndex | None:
    """The entry of the base file at ``uri`` of ``size`` bytes, None when there is none (or it is unreadable)."""
    path = host_scratch.entry_path(_NAME, _digest(uri, size))
    if path is None:
        return None
    try:
        data = host_scratch.read(path)
        magic, version, length = _PREAMBLE.unpack_from(data)
        if magic != _MAGIC or version != _VERSION:
            raise ValueError("not an entry of this format")
        header = json.loads(data[_PREAMBLE.size:_PREAMBLE.size + length])
        if header["uri"] != uri or header["size"] != size:
            return None  # a hash collision: not this file's entry
        bloom = None
        spec = header["bloom"]
        if spec is not None:
            nbytes = (spec["vector_size"] + 7) // 8
            count = spec["rows"]
            offset = _data_offset(length)
            if len(data) != offset + count * nbytes:
                raise ValueError("truncated entry")
            # read in place from the map: np.memmap's own set-up took longer than the rest of the load
            bits = np.frombuffer(data, dtype=np.uint8, count=count * nbytes, offset=offset).reshape(count, nbytes)
            bloom = BloomFilter.from_packed(spec["type"], spec["vector_size"], spec["num_hashes"], list(bits),
                                            spec["nr"], spec["max_entries"], spec["current"])
        host_scratch.touch(path)
        return FooterIndex(header["num_rows"], header["min_key"], header["max_key"], bloom)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, struct.error) as exc:
        logger.warning("Ignoring unreadable bloom filter cache entry %s: %s", path, exc)
        return None


def store(uri: str, size: int, entry: FooterIndex) -> None:
    """Keep ``entry`` for the base file at ``uri`` of ``size`` bytes (best effort: a failure only logs)."""
    bloom = entry.bloom
    spec = None if bloom is None else {
        "type": bloom.type_code, "vector_size": bloom.vector_size, "num_hashes": bloom.num_hashes,
        "rows": len(bloom.rows), "nr": bloom.nr, "max_entries": bloom.max_entries, "current": bloom.current}
    header = json.dumps({"uri": uri, "size": size, "num_rows": entry.num_rows, "min_key": entry.min_key,
                         "max_key": entry.max_key, "bloom": spec}).encode()
    preamble = _PREAMBLE.pack(_MAGIC, _VERSION, len(header)) + header
    chunks = [preamble.ljust(_data_offset(len(header)), b"\0"),
              *(memoryview(packed) for packed in ([] if bloom is None else bloom.packed_rows()))]
    host_scratch.write(_NAME, _digest(uri, size), chunks, BUDGET, EVICT_ONE_IN)


def _data_offset(header_length: int) -> int:
    return -(-(_PREAMBLE.size + header_length) // _ALIGN) * _ALIGN

