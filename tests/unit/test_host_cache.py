"""The host's bloom filter cache: a process reads the entry another one wrote for a base file instead of
its footer, and an entry that does not parse is ignored (the footer is read again)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import unzip_table

pytestmark = pytest.mark.usefixtures("shared_tables")

# one process's view of a base file through the process caches (which consult the host's cache)
_CHILD = """
import json, sys
from hoodie_datasource.index import base_file_cache
from hoodie_datasource.storage.local import LocalStorage
storage = LocalStorage(sys.argv[1])
bloom = base_file_cache.bloom_filter(storage, sys.argv[2])
print(json.dumps({"bloom": bloom.serialize(), "range": base_file_cache.key_range(storage, sys.argv[2])}))
"""


def _in_new_process(scratch: Path, base: Path, rel: str) -> dict:
    env = {**os.environ, "TMPDIR": str(scratch), "PYTHONPATH": os.getcwd()}
    done = subprocess.run([sys.executable, "-c", _CHILD, str(base), rel], env=env, capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout)


def test_a_new_process_reads_the_entry_another_wrote_and_ignores_a_broken_one(tmp_path):
    base = unzip_table("sample_table/cow/v8_nonpartitioned.zip", tmp_path / "t")
    path = next(p for p in base.rglob("*.parquet")
                if ".hoodie" not in p.parts and b"org.apache.hudi.bloomfilter" in (pq.read_metadata(p).metadata or {}))
    rel = path.relative_to(base).as_posix()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    first = _in_new_process(scratch, base, rel)
    [entry] = (scratch / "hoodie-bloom-cache").glob("*.entry")
    original = path.read_bytes()

    # same name and size, other bytes: only the entry can give the filter and the key range back
    path.write_bytes(b"\0" * len(original))
    assert _in_new_process(scratch, base, rel) == first

    # a truncated entry is ignored: the footer is read (and the entry written again, whole)
    path.write_bytes(original)
    entry.write_bytes(entry.read_bytes()[:200])
    assert _in_new_process(scratch, base, rel) == first
    assert entry.stat().st_size > 200
    assert first["range"][2] == pq.read_metadata(path).num_rows


def test_an_entry_is_written_again_after_the_directory_was_removed(tmp_path, monkeypatch):
    from hoodie_datasource.index import host_cache
    from hoodie_datasource.index.bloom_filter import new_bloom_filter
    from hoodie_datasource.storage import host_scratch

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    host_scratch.directory.cache_clear()
    try:
        bloom = new_bloom_filter("DYNAMIC_V0", 1000, 1e-6, 4000)
        bloom.add_keys(["k1", "k2"])
        entry = host_cache.FooterIndex(2, "k1", "k2", bloom)
        host_cache.store("file:///t/a.parquet", 10, entry)
        shutil.rmtree(tmp_path / "hoodie-bloom-cache")  # a scratch cleaner, while this process runs
        host_cache.store("file:///t/a.parquet", 10, entry)
        loaded = host_cache.load("file:///t/a.parquet", 10)
        assert loaded is not None and (loaded.min_key, loaded.max_key, loaded.num_rows) == ("k1", "k2", 2)
        assert loaded.bloom.might_contain(["k1", "k2"]).all() and loaded.bloom.serialize() == bloom.serialize()
        assert host_cache.load("file:///t/a.parquet", 11) is None  # another size: another file
    finally:
        host_scratch.directory.cache_clear()
