"""Every Python and SQL sample of the documentation (and the README) runs, page by page, top to bottom, against a real
SparkSession (with the SQL shim); a page's samples share one namespace. A failing sample fails its page,
naming the file and line of the sample."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.conftest import drop_tables
from tests.docs.pages import DOCS, front_matter, pages, samples, sql_statements

pytestmark = pytest.mark.docs
PAGES = [p for p in pages() if samples(p)]


def test_the_docs_have_samples():
    assert len(PAGES) >= 10, [str(p) for p in PAGES]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS.parent)))
def test_page_samples_run(page: Path, docs_spark, request, tmp_path, monkeypatch):
    if front_matter(page).get("samples") == "s3":
        request.getfixturevalue("page_bucket")
    monkeypatch.chdir(tmp_path)  # a sample's relative paths (checkpoints, files) stay in the test's folder
    namespace: dict[str, object] = {"__name__": "__docs__"}
    try:
        for sample in samples(page):
            where = f"{page.relative_to(DOCS.parent)}:{sample.line}"
            try:
                if sample.lang == "python":
                    exec(compile(sample.code, where, "exec"), namespace)  # noqa: S102 - the docs' own samples
                else:
                    for statement in sql_statements(sample.code):
                        docs_spark.sql(statement).collect()
            except Exception as exc:
                raise AssertionError(f"the {sample.lang} sample at {where} failed: {exc}") from exc
    finally:
        drop_tables(docs_spark)
