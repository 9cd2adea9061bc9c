"""Security and bad input (issue 33, section 3), one test each: authentication, grants, file URLs that cannot be
forged, replayed past expiry or pointed outside their table, malformed or oversized requests answered 4xx with
``{errorCode, message}`` (never a 500), and a table written while it is read served at one version."""

from __future__ import annotations

import json
import logging
import os
import threading
import time

import pytest
import requests

from hoodie_datasource.hoodie_table import HoodieTable
from hoodie_datasource.sharing.file_tokens import FileGrant, FileTokens
from tests.sharing.conftest import (
    TOKEN,
    config_of,
    file_urls,
    new_table,
    read_served,
    rows,
    table_options,
    write_versions,
)

QUERY = "/shares/share/schemas/default/tables/trips/query"


@pytest.fixture
def table(tmp_path) -> str:
    path = str(tmp_path / "trips")
    write_versions(path, "COPY_ON_WRITE", True, 3)
    return path


def _error(response: requests.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["errorCode"] == code and body["message"]
    return body["message"]


def _url_with_token(url: str, token: str) -> str:
    return url.rsplit("/", 1)[0] + "/" + token


def test_missing_token_is_401_and_lists_nothing(table, serve):
    server = serve(config_of({"trips": table}))
    for path in ("/shares", "/shares/share/all-tables", "/shares/share/schemas/default/tables/trips/metadata"):
        response = server.get(path, token=None)
        assert "trips" not in response.text and "share" not in response.json().get("items", [])
        _error(response, 401, "UNAUTHENTICATED")
    _error(server.post(QUERY, token=None, json={}), 401, "UNAUTHENTICATED")


def test_wrong_or_expired_token_is_401(table, serve):
    raw = config_of({"trips": table})
    raw["recipients"] = [{"name": "late", "bearerToken": "late-token", "expirationTime": "2020-01-01T00:00:00Z"}]
    server = serve(raw)
    assert "not valid" in _error(server.get("/shares", token="not-" + TOKEN), 401, "UNAUTHENTICATED")
    assert "expired" in _error(server.get("/shares", token="late-token"), 401, "UNAUTHENTICATED")
    assert server.get("/shares", token=TOKEN).status_code == 200


def test_recipient_never_sees_a_share_not_granted(table, serve):
    raw = config_of({"trips": table})
    raw["shares"].append({"name": "secret", "schemas": [{"name": "default", "tables": [
        {"name": "trips", "location": table}]}]})
    raw["recipients"] = [{"name": "bob", "bearerToken": "bob-token", "shares": ["share"]}]
    server = serve(raw)
    assert [s["name"] for s in server.get("/shares", token="bob-token").json()["items"]] == ["share"]
    assert [s["name"] for s in server.get("/shares", token=TOKEN).json()["items"]] == ["share", "secret"]
    for path in ("/shares/secret", "/shares/SECRET/schemas", "/shares/secret/all-tables",
                 "/shares/secret/schemas/default/tables", "/shares/secret/schemas/default/tables/trips/metadata"):
        # the same answer as for a share that does not exist: its existence is not told
        hidden = _error(server.get(path, token="bob-token"), 404, "RESOURCE_DOES_NOT_EXIST")
        missing = _error(server.get(path.lower().replace("secret", "nosuch"), token="bob-token"),
                         404, "RESOURCE_DOES_NOT_EXIST")
        assert hidden.lower() == missing.replace("nosuch", "secret").lower()
    _error(server.post("/shares/secret/schemas/default/tables/trips/query", token="bob-token", json={}),
           404, "RESOURCE_DOES_NOT_EXIST")
    assert server.post(QUERY, token="bob-token", json={}).status_code == 200


def test_file_url_carries_no_bearer_token_and_logs_hold_no_token(table, serve, caplog):
    server = serve(config_of({"trips": table}))
    with caplog.at_level(logging.INFO, logger="hoodie_datasource.sharing.access"):
        urls = file_urls(server.post(QUERY, json={}))
        assert all(requests.get(url, timeout=30).status_code == 200 for url in urls)
    assert urls and not any(TOKEN in url for url in urls)
    access = [json.loads(r.getMessage()) for r in caplog.records if r.name == "hoodie_datasource.sharing.access"]
    assert {a["path"] for a in access} >= {"/delta-sharing" + QUERY, "/delta-sharing/files/<token>"}
    assert all(a["recipient"] == "default" for a in access if a["path"].endswith("/query"))
    logged = caplog.text
    assert TOKEN not in logged and not any(url.rsplit("/", 1)[1] in logged for url in urls)


def test_file_url_supports_head_and_range_get(table, serve):
    server = serve(config_of({"trips": table}))
    url = file_urls(server.post(QUERY, json={}))[0]
    head = requests.head(url, timeout=30)
    size = int(head.headers["content-length"])
    assert head.status_code == 200 and size > 8 and head.headers["accept-ranges"] == "bytes"
    tail = requests.get(url, headers={"Range": f"bytes={size - 4}-{size - 1}"}, timeout=30)
    assert tail.status_code == 206 and tail.content == b"PAR1"


def test_forged_or_altered_file_token_is_403(table, serve):
    server = serve(config_of({"trips": table}))
    url = file_urls(server.post(QUERY, json={}))[0]
    token = url.rsplit("/", 1)[1]
    payload, mac = token.split(".")
    flipped = payload[:-2] + ("A" if payload[-2] != "A" else "B") + payload[-1]
    other_secret = FileTokens(b"another-secret").sign(FileGrant("x", "a/b.parquet", int(time.time() * 1000) + 60_000))
    for bad in (f"{flipped}.{mac}", f"{payload}.{mac[:-1]}", "not-a-token", other_secret, f"{payload}.", "a.b.c"):
        _error(requests.get(_url_with_token(url, bad), timeout=30), 403, "PERMISSION_DENIED")


def test_file_token_past_its_expiry_is_403(table, serve):
    server = serve(config_of({"trips": table}, preSignedUrlTimeoutSeconds=1))
    before = int(time.time() * 1000)
    response = server.post(QUERY, json={})
    line = json.loads(response.text.splitlines()[2])["file"]
    assert before + 1000 <= line["expirationTimestamp"] <= int(time.time() * 1000) + 1000  # honoured as given
    assert requests.get(line["url"], timeout=30).status_code == 200
    time.sleep(1.2)
    assert "expired" in _error(requests.get(line["url"], timeout=30), 403, "PERMISSION_DENIED")


def test_no_file_outside_the_shared_table_is_served(table, serve, tmp_path):
    """Path traversal in a signed token (one a leaked secret could make), a symlink out of the table, and ``..``
    in the URL itself all fail; only the table's own files are served."""
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    os.symlink(outside, os.path.join(table, "city=sf", "link.parquet") if os.path.isdir(os.path.join(table, "city=sf"))
               else os.path.join(table, "sf", "link.parquet"))
    raw = config_of({"trips": table})
    server = serve(raw)
    url = file_urls(server.post(QUERY, json={}))[0]
    table_id = server.get("/shares/share/all-tables").json()["items"][0]["id"]
    tokens = FileTokens(raw["fileTokenSecret"].encode())
    later = int(time.time() * 1000) + 60_000
    link = "sf/link.parquet" if os.path.isdir(os.path.join(table, "sf")) else "city=sf/link.parquet"
    for path in ("../outside.txt", "/etc/passwd", link, "sf/../../outside.txt"):
        response = requests.get(_url_with_token(url, tokens.sign(FileGrant(table_id, path, later))), timeout=30)
        assert response.status_code in (403, 404) and "secret" not in response.text, path
        assert response.json()["errorCode"] in ("PERMISSION_DENIED", "RESOURCE_DOES_NOT_EXIST")
    response = requests.get(_url_with_token(url, tokens.sign(FileGrant("no-such-table", "x", later))), timeout=30)
    _error(response, 403, "PERMISSION_DENIED")
    base = url.rsplit("/files/", 1)[0]
    for raw_path in ("/files/..%2F..%2Foutside.txt", "/files/../../outside.txt", "/shares/..%2F..%2Fshare"):
        response = requests.get(base + raw_path, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
        assert 400 <= response.status_code < 500 and "secret" not in response.text, raw_path


def test_dot_dot_in_share_schema_and_table_names_is_404(table, serve):
    server = serve(config_of({"trips": table}))
    for path in ("/shares/../schemas", "/shares/share/schemas/..%2F..%2Fdefault/tables",
                 "/shares/share/schemas/default/tables/..%2Ftrips/metadata", "/shares/%2e%2e/all-tables"):
        response = server.get(path)
        assert response.status_code == 404 and response.json()["errorCode"] == "RESOURCE_DOES_NOT_EXIST", path


def test_malformed_and_oversized_bodies_are_4xx(table, serve):
    server = serve(config_of({"trips": table}))
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    for body in (b"{not json", b"[1, 2]", b'{"version": "x"}', b'{"version": -1}', b'{"limitHint": 1e400}',
                 b'{"version": 99999999999999999999999}', b'"text"'):
        response = requests.post(server.url + QUERY, data=body, headers=headers, timeout=30)
        _error(response, 400, "INVALID_PARAMETER_VALUE")
    big = b'{"predicateHints": ["' + b"x" * (2 << 20) + b'"]}'
    _error(requests.post(server.url + QUERY, data=big, headers=headers, timeout=30), 413, "INVALID_PARAMETER_VALUE")

    def chunks():
        yield b'{"predicateHints": ["'
        for _ in range(40):
            yield b"x" * 65536
        yield b'"]}'

    streamed = requests.post(server.url + QUERY, data=chunks(), headers=headers, timeout=30)
    _error(streamed, 413, "INVALID_PARAMETER_VALUE")


def test_unknown_version_timestamp_before_table_and_reversed_range_are_400(table, serve):
    server = serve(config_of({"trips": table}))
    assert "versions are 0 to 2" in _error(server.post(QUERY, json={"version": 3}), 400, "INVALID_PARAMETER_VALUE")
    assert "before the table's first version" in _error(
        server.post(QUERY, json={"timestamp": "2001-01-01T00:00:00Z"}), 400, "INVALID_PARAMETER_VALUE")
    _error(server.post(QUERY, json={"timestamp": "yesterday"}), 400, "INVALID_PARAMETER_VALUE")
    changes = "/shares/share/schemas/default/tables/trips/changes"
    assert "before startingVersion" in _error(
        server.get(changes, params={"startingVersion": 2, "endingVersion": 1}), 400, "INVALID_PARAMETER_VALUE")
    _error(server.get(changes, params={"startingVersion": 5}), 400, "INVALID_PARAMETER_VALUE")
    _error(server.get(changes, params={"startingVersion": "x"}), 400, "INVALID_PARAMETER_VALUE")
    _error(server.get(changes), 400, "INVALID_PARAMETER_VALUE")
    _error(server.get("/shares/share/all-tables", params={"pageToken": "garbage!"}), 400, "INVALID_PARAMETER_VALUE")
    _error(server.get("/shares/share/all-tables", params={"maxResults": -1}), 400, "INVALID_PARAMETER_VALUE")


def test_history_not_shared_refuses_version_and_changes(table, serve):
    raw = config_of({"trips": table})
    raw["shares"][0]["schemas"][0]["tables"][0]["historyShared"] = False
    server = serve(raw)
    assert "historyShared" in _error(server.post(QUERY, json={"version": 0}), 400, "INVALID_PARAMETER_VALUE")
    _error(server.get("/shares/share/schemas/default/tables/trips/changes", params={"startingVersion": 0}),
           400, "INVALID_PARAMETER_VALUE")
    assert server.post(QUERY, json={}).status_code == 200


def test_version_the_cleaner_reached_fails_clearly_and_versions_survive_archival(tmp_path, serve):
    path = str(tmp_path / "trips")
    # the metadata table compacts at each write: archival, which its latest compaction bounds, goes as far
    opts = {**table_options("COPY_ON_WRITE", False), "hoodie.metadata.compact.max.delta.commits": "1"}
    table = HoodieTable(path)
    for n in range(8):
        table.write(rows([0, 1], n), **opts)
    server = serve(config_of({"trips": path}))
    first = server.get("/shares/share/schemas/default/tables/trips/version").headers["Delta-Table-Version"]
    services = {"hoodie.cleaner.commits.retained": "2", "hoodie.keep.min.commits": "3", "hoodie.keep.max.commits": "4",
                "hoodie.metadata.compact.max.delta.commits": "1"}
    table.clean(**services)
    assert table.archive(**services)  # instants left the active timeline
    assert server.get("/shares/share/schemas/default/tables/trips/version").headers["Delta-Table-Version"] == first == "7"
    message = _error(server.post(QUERY, json={"version": 1}), 400, "INVALID_PARAMETER_VALUE")
    assert "cleaner" in message and "earliest instant" in message
    response = server.post(QUERY, json={"version": 7})
    assert response.headers["Delta-Table-Version"] == "7" and len(file_urls(response)) == 1


def test_table_written_while_read_is_served_at_one_version(tmp_path, serve):
    path = str(tmp_path / "trips")
    _, opts = new_table(path, "MERGE_ON_READ", list(range(20)))
    server = serve(config_of({"trips": path}))
    stop = threading.Event()

    def writer():
        n = 1
        while not stop.is_set() and n < 40:
            HoodieTable(path).write(rows([n % 20, 100 + n], n), **opts)
            n += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        seen = set()
        for _ in range(15):
            response = server.post(QUERY, json={})
            version = int(response.headers["Delta-Table-Version"])
            seen.add(version)
            got = read_served(file_urls(response), ["id", "ts"])
            instant = HoodieTable(path).completed_commits()[version]
            expected = HoodieTable(path).scan(**{"as.of.instant": instant}).select(["id", "ts"])
            assert got.equals(expected.sort_by("id")), version
    finally:
        stop.set()
        thread.join()
    assert len(seen) > 1  # the reads did overlap writes
