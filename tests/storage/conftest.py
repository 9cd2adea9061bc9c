"""The ``place`` fixture: a new table location on local disk and on S3 (moto's server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.storage.tables import Place


@pytest.fixture(params=["local", "s3"])
def place(request, tmp_path: Path) -> Place:
    if request.param == "local":
        return Place(str(tmp_path / "t"), {})
    bucket = request.getfixturevalue("s3_bucket")
    return Place(bucket.uri("warehouse/t"), bucket.options)
