"""The oracle fixture: one Java Hudi process per test module and Hudi version (tests/hudi_oracle/__init__.py)."""

from __future__ import annotations

import pytest

from tests.hudi_oracle import HUDI_0_15, HUDI_1, HudiOracle


@pytest.fixture(scope="module", params=[HUDI_0_15, HUDI_1])
def hudi(request, tmp_path_factory):
    """Apache Hudi 0.15.0 (table version 6), then 1.1.1 (for what it reads and writes on version-6 tables),
    each on Spark 3.5: a module's tests run against one, then the other (one JVM at a time)."""
    oracle = HudiOracle(request.param, tmp_path_factory.mktemp(f"hudi-oracle-{request.param}"))
    yield oracle
    oracle.close()
