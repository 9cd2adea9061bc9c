"""The documentation site: its generated pages are current and list every option, error and procedure
the code has; it builds with ``mkdocs build --strict``; and the built site works in a browser: headless
Chromium searches it for an option key and follows the result to the option's entry."""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.conftest import REPO, require_module
from tests.docs.browser import Browser, chromium

pytestmark = pytest.mark.docs
SEARCHED_KEY = "hoodie.cleaner.commits.retained"


def test_generated_pages_are_current():
    from docs.gen.__main__ import generated, stale

    outdated = [str(p.relative_to(REPO)) for p in stale(generated())]
    assert outdated == [], f"stale generated pages (run `make docs` and commit them): {outdated}"


def test_every_option_is_in_the_reference_with_a_description():
    from docs.gen.reference import declared_options

    page = (REPO / "docs" / "reference" / "options.md").read_text(encoding="utf-8")
    options = declared_options()
    assert len(options) > 90
    assert [p.key for p in options if f"### `{p.key}`" not in page] == []
    assert [p.key for p in options if not p.doc.strip()] == []


def test_every_error_is_in_the_reference_with_what_to_do():
    from docs.gen.reference import declared_errors

    page = (REPO / "docs" / "reference" / "errors.md").read_text(encoding="utf-8")
    errors = declared_errors()
    assert {"HoodieError", "ReadWindowError", "InvalidSaveModeError", "ShimBuildError"} <= {e.__name__ for e in errors}
    assert [e.__name__ for e in errors if f"## `{e.__name__}`" not in page] == []
    assert [e.__name__ for e in errors if "What to do:" not in (e.__doc__ or "")] == []


def test_every_procedure_is_in_the_reference():
    from hoodie_datasource.procedures.registry import PROCEDURES

    page = (REPO / "docs" / "reference" / "procedures.md").read_text(encoding="utf-8")
    assert [name for name in PROCEDURES if f"## `{name}`" not in page] == []
    assert [name for name, p in PROCEDURES.items() if not p.doc] == []


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    require_module("mkdocs")
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)], cwd=REPO,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    return out


def test_the_site_builds_strict_with_every_section(site: Path):
    for page in ("index.html", "getting-started/index.html", "concepts/timeline/index.html",
                 "guides/writing/index.html", "reference/options/index.html", "reference/api/index.html",
                 "benchmarks/index.html", "design/index.html"):
        assert (site / page).is_file(), page
    api = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    assert "run_compaction" in api and "storage_options" in api  # mkdocstrings rendered HoodieTable
    assert (site / "concepts" / "img" / "timeline.svg").is_file()


@pytest.fixture
def served(site: Path):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join()


def test_chromium_searches_for_an_option_and_follows_the_result(served: str):
    browser = Browser(chromium())
    try:
        browser.open(served + "/")
        browser.evaluate("document.querySelector('.md-search__input').focus()")
        browser.type_text(SEARCHED_KEY)
        browser.evaluate("document.querySelector('.md-search__input').dispatchEvent(new KeyboardEvent('keyup'))")
        links = browser.wait_for(
            "Array.from(document.querySelectorAll('a.md-search-result__link')).map(a => a.href)"
            ".filter(h => h.includes('reference/options'))")
        assert any("hoodiecleanercommitsretained" in link for link in links), links
        browser.evaluate("document.querySelector(\"a.md-search-result__link[href*='hoodiecleanercommitsretained']\")"
                         ".click()")
        landed = browser.wait_for("location.href.includes('reference/options') && "
                                  "document.getElementById('hoodiecleanercommitsretained') && location.href")
        assert landed.endswith("#hoodiecleanercommitsretained")
        text = browser.evaluate("document.getElementById('hoodiecleanercommitsretained').parentElement.innerText")
        assert "KEEP_LATEST_COMMITS" in text
    finally:
        browser.close()
