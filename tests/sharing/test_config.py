"""The configuration (the reference server's YAML and what ours adds), the ``hoodie-sharing`` command line (serve,
profile, graceful shutdown, ``/health``), and several servers with one secret serving the same tables."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
import yaml

from hoodie_datasource.errors import SharingConfigError
from hoodie_datasource.sharing.config import DEFAULT_RECIPIENT, load_config, parse_config
from hoodie_datasource.sharing.profiles import profile
from tests.conftest import REPO
from tests.server_process import stop_process
from tests.sharing.conftest import TOKEN, config_of, write_versions

# the reference server's template (delta-io/delta-sharing server/src/universal/conf/delta-sharing-server.yaml.template),
# its options this server does not use kept, as a configuration written for it is
REFERENCE_YAML = """
version: 1
shares:
- name: "share1"
  schemas:
  - name: "schema1"
    tables:
    - name: "table1"
      location: "s3a://bucket/the-table-path"
      id: "00000000-0000-0000-0000-000000000000"
    - name: "table2"
      location: "wasbs://container@account.blob.core.windows.net/the-table-path"
      id: "00000000-0000-0000-0000-000000000001"
- name: "share2"
  schemas:
  - name: "schema2"
    tables:
    - name: "table3"
      location: "abfss://container@account.dfs.core.windows.net/the-table-path"
      historyShared: true
      id: "00000000-0000-0000-0000-000000000002"
    - name: "table4"
      location: "gs://bucket/the-table-path"
authorization:
  bearerToken: "token"
host: "localhost"
port: 8080
endpoint: "/delta-sharing"
preSignedUrlTimeoutSeconds: 900
temporaryCredentialValiditySeconds: 3600
deltaTableCacheSize: 10
stalenessAcceptable: false
evaluatePredicateHints: false
evaluateJsonPredicateHints: true
queryTablePageSizeLimit: 10000
"""


def test_reference_server_configuration_loads(tmp_path):
    path = tmp_path / "server.yaml"
    path.write_text(REFERENCE_YAML)
    config = load_config(str(path))
    assert [s.name for s in config.shares] == ["share1", "share2"]
    table3 = config.shares[1].schemas[0].tables[0]
    assert (table3.name, table3.id, table3.history_shared) == ("table3", "00000000-0000-0000-0000-000000000002", True)
    table4 = config.shares[1].schemas[0].tables[1]
    assert len(table4.id) == 36 and table4.id == load_config(str(path)).shares[1].schemas[0].tables[1].id  # stable
    assert (config.host, config.port, config.endpoint, config.pre_signed_url_timeout_seconds) == (
        "localhost", 8080, "/delta-sharing", 900)
    assert [(r.name, r.bearer_token, r.shares) for r in config.recipients] == [(DEFAULT_RECIPIENT, "token", None)]
    assert config.share("SHARE2") is config.shares[1]  # names are case-insensitive


@pytest.mark.parametrize("change, message", [
    (lambda raw: raw["shares"][0]["schemas"][0]["tables"][0].pop("location"), "'location'"),
    (lambda raw: raw["shares"][0].pop("name"), "'name' in a share"),
    (lambda raw: raw.update(version=2), "'version'"),
    (lambda raw: raw.update(authorization={}), "'bearerToken' in 'authorization'"),
    (lambda raw: raw.update(recipients=[{"name": "x", "bearerToken": "t", "shares": ["nope"]}]), "nope"),
    (lambda raw: raw.update(recipients=[{"name": "x", "bearerToken": TOKEN}]), "same bearer token"),
    (lambda raw: raw["shares"][0]["schemas"][0]["tables"].append({"name": "T", "location": "/x"}), "more than once"),
    (lambda raw: raw["shares"][0]["schemas"][0]["tables"][0].update(name="a.b"), "names are at most"),
    (lambda raw: raw.update(preSignedUrlTimeoutSeconds=0), "preSignedUrlTimeoutSeconds"),
])
def test_invalid_configuration_names_what_is_wrong(change, message):
    raw = config_of({"t": "/tmp/t"})
    change(raw)
    with pytest.raises(SharingConfigError, match=message):
        parse_config(raw)


def test_recipients_get_their_own_profiles(tmp_path):
    raw = config_of({"t": "/tmp/t"})
    raw["recipients"] = [{"name": "alice", "bearerToken": "a-token", "shares": ["share"],
                          "expirationTime": "2030-01-01T00:00:00Z"}]
    path = tmp_path / "server.yaml"
    path.write_text(yaml.safe_dump(raw))
    out = tmp_path / "alice.share"
    done = subprocess.run([sys.executable, "-m", "hoodie_datasource.sharing", "profile", "--config", str(path),
                           "--recipient", "alice", "--endpoint", "https://share.example/delta-sharing",
                           "--output", str(out)], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text()) == {"shareCredentialsVersion": 1, "endpoint": "https://share.example/delta-sharing",
                                           "bearerToken": "a-token", "expirationTime": "2030-01-01T00:00:00Z"}
    assert profile(parse_config(raw), DEFAULT_RECIPIENT)["endpoint"] == "http://localhost:80/delta-sharing"
    with pytest.raises(SharingConfigError, match="alice"):
        profile(parse_config(raw), "mallory")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_command_line_serves_health_and_stops_gracefully(tmp_path):
    table = str(tmp_path / "trips")
    write_versions(table, "COPY_ON_WRITE", False, 1)
    port = _free_port()
    path = tmp_path / "server.yaml"
    path.write_text(yaml.safe_dump({**config_of({"trips": table}), "host": "127.0.0.1", "port": port}))
    log = (tmp_path / "server.log").open("w")
    process = subprocess.Popen([sys.executable, "-m", "hoodie_datasource.sharing", "--config", str(path)], cwd=REPO,
                               stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                health = requests.get(f"http://127.0.0.1:{port}/health", timeout=5)
                break
            except requests.ConnectionError:
                assert process.poll() is None and time.monotonic() < deadline, (tmp_path / "server.log").read_text()
                time.sleep(0.2)
        assert health.json() == {"status": "ok"}
        listed = requests.get(f"http://127.0.0.1:{port}/delta-sharing/shares",
                              headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
        assert listed.json()["items"][0]["name"] == "share"
        process.send_signal(signal.SIGTERM)
        # uvicorn shuts down (the socket closed, requests in flight finished), then raises the signal again
        assert process.wait(30) in (0, -signal.SIGTERM)
    finally:
        stop_process(process)
        log.close()
    text = Path(tmp_path / "server.log").read_text()
    assert "Shutting down" in text and "Finished server process" in text
    assert TOKEN not in text


def test_servers_sharing_a_secret_serve_each_others_file_urls(tmp_path, serve):
    table = str(tmp_path / "trips")
    write_versions(table, "MERGE_ON_READ", True, 3)
    first, second = serve(config_of({"trips": table})), serve(config_of({"trips": table}))
    stranger = serve({**config_of({"trips": table}), "fileTokenSecret": "another"})
    response = first.post("/shares/share/schemas/default/tables/trips/query", json={})
    urls = [json.loads(line)["file"]["url"] for line in response.text.splitlines()[2:]]
    assert urls
    for url in urls:
        moved = url.replace(f":{first.port}/", f":{second.port}/")
        assert requests.get(moved, timeout=30).content == requests.get(url, timeout=30).content
        assert requests.get(url.replace(f":{first.port}/", f":{stranger.port}/"), timeout=30).status_code == 403
    again = second.post("/shares/share/schemas/default/tables/trips/query", json={})
    ids = lambda r: sorted(json.loads(line)["file"]["id"] for line in r.text.splitlines()[2:])  # noqa: E731
    assert ids(again) == ids(response)  # stable file ids, the merged slices made once
