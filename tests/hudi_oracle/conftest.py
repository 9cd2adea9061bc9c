"""The oracle fixtures: one Java Hudi process per test module and version (tests/hudi_oracle/__init__.py)."""

from __future__ import annotations

import pytest

from tests.hudi_oracle import HUDI_0_15, HUDI_1, HudiOracle


def _oracle(version: str, tmp_path_factory):
    oracle = HudiOracle(version, tmp_path_factory.mktemp(f"hudi-oracle-{version}"))
    yield oracle
    oracle.close()


@pytest.fixture(scope="module")
def hudi015(tmp_path_factory):
    """Apache Hudi 0.15.0 (table version 6) on Spark 3.5."""
    yield from _oracle(HUDI_0_15, tmp_path_factory)


@pytest.fixture(scope="module")
def hudi1(tmp_path_factory):
    """Apache Hudi 1.x on Spark 3.5, for what it reads and writes on version-6 tables."""
    yield from _oracle(HUDI_1, tmp_path_factory)
