"""SQL reads past the cleaner's window: ``TIMESTAMP AS OF`` / ``VERSION AS OF`` and
``hoodie_table_changes`` go through the same planner, so they fail with its message naming the
earliest exact instant (they returned too few rows); reads within the window are unchanged."""

from __future__ import annotations

import pytest

from tests.sql.helpers import assert_rows, cleaned_trips

pytestmark = pytest.mark.spark


@pytest.fixture
def cleaned(sql, name, location):
    return name, cleaned_trips(sql, name, location)


def test_timestamp_as_of_a_cleaned_commit_fails_naming_the_earliest_exact_one(sql, cleaned):
    name, (t1, t2, t3, t4) = cleaned
    for instant, clause in ((t1, "TIMESTAMP"), (t2, "VERSION")):
        with pytest.raises(Exception) as caught:
            sql.sql(f"SELECT * FROM {name} {clause} AS OF '{instant}'").collect()
        message = str(caught.value)
        assert f"as of {instant} exactly" in message and f"read exactly is {t3}" in message
        assert "hoodie.cleaner.commits.retained" in message
    assert_rows(sql, f"SELECT * FROM {name} TIMESTAMP AS OF '{t3}'",
                [("a", 3, 12.0, "sf"), ("b", 1, 20.0, "sf"), ("c", 1, 30.0, "nyc")])


def test_table_changes_past_the_window_fail(sql, cleaned):
    name, (t1, t2, t3, t4) = cleaned
    with pytest.raises(Exception) as caught:
        sql.sql(f"SELECT * FROM hoodie_table_changes('{name}', '000', '{t2}')").collect()
    message = str(caught.value)
    assert f"incremental read (00000000000000000, {t2}] exactly" in message and f"read exactly is {t3}" in message
    assert "hoodie.datasource.read.incr.fallback.fulltablescan.enable" in message
    # within the window: exact, as before
    assert_rows(sql, f"SELECT * FROM hoodie_table_changes('{name}', '{t2}', '{t3}')", [("a", 3, 12.0, "sf")])
