"""Property: whatever partition values a column holds (drawn from an alphabet of ``/``, ``.``, ``%``, ``=``,
a space and unicode), every committed row reads back exactly once, upserts and deletes find it, a value
that cannot be a partition path ('.', '..') is refused with nothing written, and no file is ever created
outside the table. Local engine, no JVM; hudi-rs reads the same rows at the end.
``HOODIE_PROPERTY_EXAMPLES`` sets the number of examples (a quarter of it here: each one writes a table)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest
from hudi import HudiTableBuilder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.config.read_config import ReadConfig
from hoodie_datasource.errors import InvalidRecordError
from hoodie_datasource.read.table_reader import read_table

pytestmark = pytest.mark.property

EXAMPLES = max(10, int(os.environ.get("HOODIE_PROPERTY_EXAMPLES", "200")) // 4)
VALUES = st.text(alphabet="/.%= aé字", min_size=0, max_size=6)
OPTIONS = st.fixed_dictionaries({
    "table.type": st.sampled_from(["COPY_ON_WRITE", "MERGE_ON_READ"]),
    "hive_style_partitioning": st.sampled_from(["true", "false"]),
    "partitionpath.urlencode": st.sampled_from(["true", "false"]),
})
# each step: key index -> (its partition value, a new v), or a delete of some keys
STEPS = st.lists(st.one_of(
    st.tuples(st.just("upsert"), st.dictionaries(st.integers(0, 7), VALUES, min_size=1, max_size=5)),
    st.tuples(st.just("delete"), st.lists(st.integers(0, 7), min_size=1, max_size=3, unique=True)),
), min_size=1, max_size=4)


def refused(value: str, hive: bool) -> bool:
    """A value no partition path can hold: '.' or '..' (hive style makes it ``p=..``, a plain name)."""
    return value in (".", "..") and not hive


def nested(table: Path) -> bool:
    """A partition folder inside another's (values ``a`` and ``a/b`` unencoded): hudi-rs lists leaf folders only
    (``storage::get_leaf_dirs``) and misses the outer one's rows, which docs/guides/writing.md says."""
    metafiles = [p.parent for p in table.rglob(".hoodie_partition_metadata*") if ".hoodie" not in p.parent.parts]
    return any(a != b and a in b.parents for a in metafiles for b in metafiles)


def read_rows(path: str) -> list[tuple[str, str, int]]:
    data = read_table(path, ReadConfig())
    return sorted(zip(data.column("id").to_pylist(), data.column("p").to_pylist(), data.column("v").to_pylist()))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(options=OPTIONS, steps=STEPS)
def test_every_committed_row_reads_back_once_inside_the_table(options, steps):
    opts = {"table.name": "t", "recordkey.field": "id", "partitionpath.field": "p", "precombine.field": "ts",
            **options}
    hive = options["hive_style_partitioning"] == "true"
    with tempfile.TemporaryDirectory() as root:
        table = Path(root) / "t"
        model: dict[str, tuple[str, int]] = {}  # id -> (p, v); a key keeps the value it was first written with
        for n, (kind, arg) in enumerate(steps, start=1):
            if kind == "upsert":
                rows = {f"k{i}": model.get(f"k{i}", (value, 0))[0] for i, value in arg.items()}
                batch = pa.table({"id": list(rows), "ts": [n] * len(rows), "p": list(rows.values()),
                                  "v": [n] * len(rows)})
                if any(refused(p, hive) for p in rows.values()):
                    with pytest.raises(InvalidRecordError, match="'p' has the value"):
                        write_local(str(table), batch, opts)
                    continue
                write_local(str(table), batch, opts)
                model.update({k: (p, n) for k, p in rows.items()})
            else:
                gone = [f"k{i}" for i in arg if f"k{i}" in model]
                if not gone:
                    continue
                batch = pa.table({"id": gone, "ts": [n] * len(gone), "p": [model[k][0] for k in gone],
                                  "v": [0] * len(gone)})
                write_local(str(table), batch, {**opts, "operation": "delete"})
                for k in gone:
                    del model[k]
            assert read_rows(str(table)) == sorted((k, p, v) for k, (p, v) in model.items())
        stray = [str(p) for p in Path(root).rglob("*") if p.is_file() and table not in p.parents]
        assert stray == []
        if model and not nested(table):
            data = pa.Table.from_batches(HudiTableBuilder.from_base_uri(str(table)).build().read())
            assert sorted(zip(data.column("id").to_pylist(), data.column("p").to_pylist(),
                              data.column("v").to_pylist())) == sorted((k, p, v) for k, (p, v) in model.items())
