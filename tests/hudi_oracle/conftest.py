"""The oracle fixture: one Java Hudi process per Hudi version for the whole session (tests/hudi_oracle/__init__.py)."""

from __future__ import annotations

import pytest

from tests.hudi_oracle import HUDI_0_15, HUDI_1, HudiOracle


@pytest.fixture(scope="session", params=[HUDI_0_15, HUDI_1])
def hudi(request, tmp_path_factory):
    """Apache Hudi 0.15.0 (table version 6), then 1.1.1 (for what it reads and writes on version-6 tables),
    each on Spark 3.5: the tests of every module run against one, then the other (one JVM at a time, started
    once per version: a JVM's first Hudi write and read cost far more than the next ones)."""
    oracle = HudiOracle(request.param, tmp_path_factory.mktemp(f"hudi-oracle-{request.param}"))
    yield oracle
    oracle.close()
