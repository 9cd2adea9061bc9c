"""Random cells through our HFile writer and reader (``hoodie_datasource.hfile``): any set of byte keys
(empty ones, NUL and 0xFF bytes, shared prefixes) with any values, cut into blocks of any size under either
codec, scan back whole, and every lookup and prefix scan agrees with the same question asked of a Python
dict. ``HOODIE_PROPERTY_EXAMPLES`` sets the number of examples."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hoodie_datasource.hfile.compression import Compression
from hoodie_datasource.hfile.reader import HFileReader
from hoodie_datasource.hfile.writer import HFileWriterConfig, write_hfile
from hoodie_datasource.storage.local import LocalStorage

pytestmark = pytest.mark.property

EXAMPLES = int(os.environ.get("HOODIE_PROPERTY_EXAMPLES", "200"))
key_bytes = st.binary(max_size=12).map(lambda b: bytes(x if x % 5 else 0 for x in b))  # NULs are common
cells = st.dictionaries(key_bytes, st.binary(max_size=30), max_size=300)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                        HealthCheck.function_scoped_fixture])
@given(cells=cells, block_size=st.integers(1, 600), codec=st.sampled_from([Compression.GZ, Compression.NONE]),
       probes=st.lists(key_bytes, max_size=20), prefixes=st.lists(st.binary(max_size=3), max_size=4))
def test_what_is_written_is_what_is_found(tmp_path, cells, block_size, codec, probes, prefixes):
    keys = sorted(cells)
    (tmp_path / "f.hfile").write_bytes(write_hfile(keys, [cells[k] for k in keys],
                                                   HFileWriterConfig(block_size=block_size, compression=codec)))
    with HFileReader(LocalStorage(str(tmp_path)), "f.hfile") as reader:
        scanned = reader.scan()
        assert scanned["key"].to_pylist() == keys
        assert scanned["value"].to_pylist() == [cells[k] for k in keys]
        wanted = sorted({k for k in probes + keys[::7] if k in cells})
        found = reader.lookup(probes + keys[::7])
        assert found["key"].to_pylist() == wanted
        assert found["value"].to_pylist() == [cells[k] for k in wanted]
        for probe in probes[:3]:
            assert reader.get(probe) == cells.get(probe)
        matching = [k for k in keys if any(k.startswith(p) for p in prefixes)]
        assert reader.scan_prefixes(prefixes)["key"].to_pylist() == matching
