"""Tables on object stores (moto's S3 server, Azurite, fake-gcs-server) are served with the store's own pre-signed
URLs, the merged merge-on-read slices and change files cached on the same store; the official client reads them. On
GCS the signed URLs are verified as GCS does (tests/object_stores.py's ``_GcsFront``): past
``preSignedUrlTimeoutSeconds`` or altered, a URL is refused."""

from __future__ import annotations

import json
import time
import urllib.parse

import pytest
import requests

from hoodie_datasource.hoodie_table import HoodieTable
from hoodie_datasource.storage.registry import open_storage
from tests.sharing.conftest import config_of, rows, table_options

DATA = ["id", "ts", "city", "fare", "note"]


@pytest.fixture(params=["s3", "azure", "gcs"])
def bucket(request):
    return request.getfixturevalue({"s3": "s3_bucket", "azure": "azure_container", "gcs": "gcs_bucket"}[request.param])


def test_object_store_table_is_served_with_pre_signed_urls(tmp_path, serve, client, bucket):
    uri = bucket.uri("warehouse/trips")
    opts = {**table_options("MERGE_ON_READ", True), **bucket.options}
    table = HoodieTable(uri, bucket.options)
    instants = [table.write(rows(list(range(10)), 0), **opts), table.write(rows([1, 2, 11], 1, "u"), **opts)]
    raw = config_of({"trips": uri})
    raw["shares"][0]["schemas"][0]["tables"][0]["storageOptions"] = bucket.options
    server = serve(raw)
    response = server.post("/shares/share/schemas/default/tables/trips/query", json={})
    files = [json.loads(line)["file"] for line in response.text.splitlines()[2:]]
    assert files and all(f["url"].startswith(bucket.server.url) for f in files)  # the store's URL, not ours
    assert all("/files/" not in f["url"] for f in files)
    assert any(".aux/sharing/slices/" in f["url"] for f in files)  # merged slices cached on the store itself
    assert all(requests.get(f["url"], timeout=30).content[:4] == b"PAR1" for f in files)
    cached = open_storage(uri, bucket.options).list_tree(".hoodie/.aux/sharing/slices")
    assert cached

    url = f"{server.profile(tmp_path)}#share.default.trips"
    frame = client("load_as_pandas", url=url)
    expected = HoodieTable(uri, bucket.options).scan(**{"as.of.instant": instants[-1]}).select(DATA).sort_by("id")
    assert frame.select(DATA).sort_by("id").equals(expected)
    changes = client("load_table_changes_as_pandas", url=url, starting_version=1)
    assert sorted(zip(changes.column("id").to_pylist(), changes.column("_change_type").to_pylist())) == [
        (1, "update_postimage"), (1, "update_preimage"), (2, "update_postimage"), (2, "update_preimage"),
        (11, "insert")]


def _served_urls(server, table: str) -> list[str]:
    response = server.post(f"/shares/share/schemas/default/tables/{table}/query", json={})
    assert response.status_code == 200, response.text
    return [json.loads(line)["file"]["url"] for line in response.text.splitlines()[2:]]


def test_gcs_signed_url_is_refused_once_expired_or_altered(serve, gcs_bucket):
    uri = gcs_bucket.uri("warehouse/trips")
    HoodieTable(uri, gcs_bucket.options).write(rows(list(range(4)), 0), **table_options("COPY_ON_WRITE", False),
                                               **gcs_bucket.options)
    raw = config_of({"trips": uri})
    raw["shares"][0]["schemas"][0]["tables"][0]["storageOptions"] = gcs_bucket.options
    [url] = _served_urls(serve({**raw, "preSignedUrlTimeoutSeconds": 2}), "trips")
    fields = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
    assert fields["X-Goog-Algorithm"] == "GOOG4-RSA-SHA256" and fields["X-Goog-Expires"] == "2"  # honoured as given
    answer = requests.get(url.replace("X-Goog-Expires=2", "X-Goog-Expires=3600"), timeout=30)
    assert answer.status_code == 403 and b"SignatureDoesNotMatch" in answer.content
    time.sleep(3.1)  # X-Goog-Date is in whole seconds: past 2 s after it however it was rounded
    answer = requests.get(url, timeout=30)
    assert answer.status_code == 400 and b"ExpiredToken" in answer.content
    [fresh] = _served_urls(serve(raw), "trips")  # the default timeout, an hour: the same file's URL is let through
    assert requests.get(fresh, timeout=30).content[:4] == b"PAR1"
