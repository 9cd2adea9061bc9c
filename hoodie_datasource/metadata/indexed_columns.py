"""Which columns the metadata table's ``column_stats`` partition indexes: the top-level primitive columns, those
named by ``hoodie.metadata.index.column.stats.column.list`` or every one (meta columns too) when it names none
(Hudi 0.15's ``HoodieTableMetadataUtil.getColumnsToIndex``). A nested column has no statistics of its own in a
parquet footer (its leaves have), so Hudi indexes none, nor does this."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa


def indexed_columns(schema: pa.Schema, wanted: Sequence[str]) -> list[pa.Field]:
    """The fields of ``schema`` among ``wanted`` (every one when empty) that get statistics."""
    return [f for f in schema if (not wanted or f.name in wanted) and not pa.types.is_nested(f.type)
            and not pa.types.is_dictionary(f.type)]
