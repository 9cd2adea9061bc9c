"""The index types a write may use (``hoodie.index.type``): the members of Apache Hudi's
``HoodieIndex.IndexType`` this library implements.

A ``StrEnum``, as ``WriteOperation`` is: a member equals, prints and serializes as the option's value. What a
type does (its capabilities and its tagging) is its implementation's in ``index/`` (``index.registry.index_for``),
so nothing else asks which type a write uses."""

from __future__ import annotations

from enum import StrEnum


class IndexType(StrEnum):
    BLOOM = "BLOOM"
    GLOBAL_BLOOM = "GLOBAL_BLOOM"
    SIMPLE = "SIMPLE"
    GLOBAL_SIMPLE = "GLOBAL_SIMPLE"
    BUCKET = "BUCKET"
    RECORD_INDEX = "RECORD_INDEX"
    HBASE = "HBASE"
