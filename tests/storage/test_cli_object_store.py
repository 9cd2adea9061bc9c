"""The ``hoodie`` command line on a table in S3 (moto's server), its settings given as ``--option``: what it lists is
what the library reads there, a service runs there, and ``validate`` finds a file deleted from the bucket."""

from __future__ import annotations

from hoodie_datasource.client.local_engine import write_local
from hoodie_datasource.hoodie_table import HoodieTable
from tests.object_stores import S3Bucket
from tests.unit.small_tables import batch
from tests.unit.test_cli import MOR, as_json

COMPACT_EACH = ("--option", "hoodie.compact.inline.max.delta.commits=1")


def test_the_command_line_on_s3(s3_bucket: S3Bucket) -> None:
    uri, options = s3_bucket.uri("warehouse/t"), s3_bucket.options
    for rows in ([("a", 1, "x", 1), ("b", 1, "y", 1)], [("a", 2, "x", 2)]):
        write_local(uri, batch(rows), {**MOR, **options})
    settings = [arg for key, value in options.items() for arg in ("--option", f"{key}={value}")]
    table = HoodieTable(uri, options)

    assert [c["commit_time"] for c in as_json("commits", uri, *settings)] == table.completed_commits()[::-1]
    latest = as_json("fsview", uri, "--latest", *settings)
    assert sorted((r["partition"], r["file_id"]) for r in latest) == sorted(
        (s.partition_path, s.file_id) for s in table.table.fs_view.latest_file_slices())
    assert all(r["data_file"].startswith(f"{uri}/") for r in latest)
    assert as_json("validate", uri, *settings) == {"valid": True, "problems": []}

    (completed,) = as_json("compaction", "run", uri, *settings, *COMPACT_EACH)["completed"]
    assert table.refresh().timeline().find(completed).is_completed

    victim = next(r for r in latest if r["partition"] == "y")["data_file"].removeprefix(f"{uri}/")
    assert table.storage.delete(victim)
    found = as_json("validate", uri, *settings, code=1)["problems"]
    assert {(p["kind"], p["path"]) for p in found} == {("missing_file", victim), ("metadata_mismatch", victim)}
