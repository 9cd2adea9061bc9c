"""Real object-store servers for the tests, started by the tests: moto's S3 server and Azurite.

Each server runs as a child process on a free loopback port for the whole test session and is stopped
after it. Its access log (werkzeug's for moto, Azurite's own; both ``"PUT /path HTTP/1.1" 201``) is kept
in a file, so a test or a benchmark can count the requests an operation made:

    mark = moto.mark()
    storage.list_dir(".hoodie")
    assert moto.requests_since(mark)["LIST"] == 1

Every test gets its own new bucket (``s3_bucket``) or container (``azure_container``); their
``options`` are the table options that reach them (``hoodie.storage.*``), their ``env`` the same
settings as environment variables. A missing server binary skips the test locally and fails it under
``CI=true`` (like the shared tables in tests/conftest.py). Azurite comes from npm: ``make install``
puts it under ``.tools/``.

Authentication: moto accepts any key unless told otherwise, so the access tests use a second moto
server (``moto_auth``) whose IAM users are created first and whose authentication is then switched on
(``POST /moto-api/reset-auth``): an admin allowed ``s3:*`` and a reader allowed only ``s3:Get*`` and ``s3:List*``.
Azurite always checks the shared key; a SAS without write permission is its "no permission".
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import http.client
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from email.utils import formatdate
from pathlib import Path

import pytest

from tests.conftest import REPO, _missing, require_module
from tests.server_process import log_tail, stop_process

AZURITE_BIN = REPO / ".tools" / "node_modules" / ".bin" / "azurite-blob"
AZURE_ACCOUNT = "devstoreaccount1"
# Azurite's well-known development account key (public, documented by Microsoft)
AZURE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
AZURE_API_VERSION = "2021-08-06"
S3_KEY = "testing"
S3_SECRET = "testing-secret"
REGION = "us-east-1"
_ACCESS_LINE = re.compile(r'"(GET|PUT|HEAD|DELETE|POST) (\S+) HTTP/[\d.]+" (\d{3})')
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_INTERNAL = ("/moto-api",)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _verb(method: str, path: str) -> str:
    """A listing is a GET with a listing query (S3: list-type / delimiter; Azure: comp=list)."""
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query, keep_blank_values=True)
    if method == "GET" and ("list-type" in query or "delimiter" in query or query.get("comp") == ["list"]):
        return "LIST"
    return method


class Server:
    """A server process on a loopback port, its access log in ``log_path``."""

    def __init__(self, name: str, command: list[str], port: int, log_path: Path, env: dict[str, str] | None = None,
                 ready_path: str = "/") -> None:
        self.name = name
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.log_path = log_path
        self._log = open(log_path, "wb")  # noqa: SIM115 - open for the server's lifetime
        self.process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT,
                                        env={**os.environ, **(env or {})}, cwd=log_path.parent)
        self._wait_ready(ready_path)

    @classmethod
    def attached(cls, url: str, log_path: Path) -> Server:
        """A server another process started and keeps serving (a benchmark's table built once, measured by later
        runs), its requests counted from its access log ``log_path``; ``stop`` leaves it running."""
        server = cls.__new__(cls)
        server.name, server.url, server.log_path = "attached", url, log_path
        server.port = int(urllib.parse.urlsplit(url).port or 80)
        server.process, server._log = None, None
        return server

    def _wait_ready(self, path: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode}: {self.log_tail()}")
            try:
                urllib.request.urlopen(self.url + path, timeout=2).close()
                return
            except urllib.error.HTTPError:
                return  # it answered
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"{self.name} did not answer on {self.url} within {timeout:.0f}s: {self.log_tail()}")

    def log_tail(self, lines: int = 20) -> str:
        return log_tail(self.log_path, lines)

    def stop(self) -> None:
        if self.process is None:
            return
        stop_process(self.process)
        self._log.close()

    def _sync(self) -> None:
        """Make one marker request and wait for its log line, so every earlier request is logged."""
        token = uuid.uuid4().hex
        try:
            urllib.request.urlopen(f"{self.url}/moto-api/sync-{token}", timeout=5).close()
        except urllib.error.HTTPError:
            pass
        deadline = time.monotonic() + 5
        while token not in self.log_path.read_text(errors="replace") and time.monotonic() < deadline:
            time.sleep(0.01)

    def mark(self) -> int:
        """A point in the access log; pass it to ``requests_since``."""
        self._sync()
        return self.log_path.stat().st_size

    def requests_since(self, mark: int) -> Counter:
        """Requests by verb since ``mark``: GET, PUT, HEAD, DELETE, POST, and LIST (a listing GET)."""
        return Counter(verb for verb, _ in self.request_log_since(mark))

    def listings_since(self, mark: int) -> Counter:
        """LIST requests since ``mark`` by what they list: the timeline (``.hoodie/``, one level), the table
        (every file, at any depth), or another folder."""
        kinds: Counter = Counter()
        for verb, path in self.request_log_since(mark):
            if verb != "LIST":
                continue
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)
            prefix = query.get("prefix", [""])[0]
            deep = "delimiter" not in query
            if prefix.endswith("/.hoodie/") and not deep:
                kinds["timeline"] += 1
            elif deep and prefix.count("/") == 1:
                kinds["table"] += 1
            else:
                kinds[prefix] += 1
        return kinds

    def request_log_since(self, mark: int) -> list[tuple[str, str]]:
        """(verb, path with query) of every request since ``mark``, in order."""
        self._sync()
        with open(self.log_path, "rb") as handle:
            handle.seek(mark)
            text = _ANSI.sub("", handle.read().decode(errors="replace"))
        return [(_verb(method, path), path) for method, path, _status in _ACCESS_LINE.findall(text)
                if not path.startswith(_INTERNAL)]


def _moto_bin() -> str:
    found = shutil.which("moto_server") or str(Path(sys.executable).parent / "moto_server")
    if not Path(found).is_file():
        _missing("moto_server is not installed (pip install -e '.[test]' installs moto[server])")
    return found


def start_moto(log_dir: Path, name: str = "moto") -> Server:
    port = free_port()
    return Server(name, [_moto_bin(), "-H", "127.0.0.1", "-p", str(port)], port, log_dir / f"{name}.log",
                  ready_path="/moto-api/reset-auth")


@dataclass
class S3Bucket:
    """A new bucket on an S3 server; ``uri(key)`` names a table in it."""

    name: str
    server: Server
    access_key: str = S3_KEY
    secret_key: str = S3_SECRET

    def uri(self, key: str = "table") -> str:
        return f"s3://{self.name}/{key}" if key else f"s3://{self.name}"

    @property
    def options(self) -> dict[str, str]:
        return {"hoodie.storage.s3.endpoint": self.server.url, "hoodie.storage.s3.access.key": self.access_key,
                "hoodie.storage.s3.secret.key": self.secret_key, "hoodie.storage.s3.region": REGION}

    @property
    def env(self) -> dict[str, str]:
        return {"AWS_ENDPOINT_URL": self.server.url, "AWS_ACCESS_KEY_ID": self.access_key,
                "AWS_SECRET_ACCESS_KEY": self.secret_key, "AWS_REGION": REGION, "AWS_ALLOW_HTTP": "true"}


def _boto_client(service: str, url: str, key: str = S3_KEY, secret: str = S3_SECRET):
    boto3 = require_module("boto3")  # moto's own dependency
    return boto3.client(service, endpoint_url=url, aws_access_key_id=key, aws_secret_access_key=secret,
                        region_name=REGION)


def new_bucket_name() -> str:
    return f"hoodie-{uuid.uuid4().hex[:20]}"


@pytest.fixture(scope="session")
def moto(tmp_path_factory) -> Iterator[Server]:
    """moto's S3 server (no authentication: any key is accepted)."""
    server = start_moto(tmp_path_factory.mktemp("moto"))
    yield server
    server.stop()


def new_s3_bucket(server: Server) -> S3Bucket:
    """A new bucket on a moto server without authentication (benchmarks call it too)."""
    name = new_bucket_name()
    urllib.request.urlopen(urllib.request.Request(f"{server.url}/{name}", method="PUT"), timeout=10).close()
    return S3Bucket(name, server)


def _in_environment(target, monkeypatch):
    """``target`` (a bucket or container) after putting its ``env`` settings in the environment."""
    for key, value in target.env.items():
        monkeypatch.setenv(key, value)
    return target


@pytest.fixture
def s3_bucket(moto: Server) -> S3Bucket:
    return new_s3_bucket(moto)


@pytest.fixture
def s3_env(s3_bucket: S3Bucket, monkeypatch) -> S3Bucket:
    """``s3_bucket`` with its settings in the environment (and no AWS profile in the way)."""
    return _in_environment(s3_bucket, monkeypatch)


@dataclass
class MotoAuth:
    """A moto server that checks signatures and IAM policies, with an admin and a read-only user."""

    server: Server
    admin: tuple[str, str]
    reader: tuple[str, str]

    def new_bucket(self, user: tuple[str, str] | None = None) -> S3Bucket:
        """A new bucket (created by the admin), seen with ``user``'s keys (the admin's by default)."""
        name = new_bucket_name()
        _boto_client("s3", self.server.url, *self.admin).create_bucket(Bucket=name)
        key, secret = user or self.admin
        return S3Bucket(name, self.server, key, secret)


@pytest.fixture(scope="session")
def moto_auth(tmp_path_factory) -> Iterator[MotoAuth]:
    server = start_moto(tmp_path_factory.mktemp("moto-auth"), "moto-auth")
    try:
        iam = _boto_client("iam", server.url)

        def user(name: str, actions: list[str]) -> tuple[str, str]:
            iam.create_user(UserName=name)
            policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]}
            iam.put_user_policy(UserName=name, PolicyName=f"{name}-policy", PolicyDocument=json.dumps(policy))
            created = iam.create_access_key(UserName=name)["AccessKey"]
            return created["AccessKeyId"], created["SecretAccessKey"]

        admin = user("admin", ["s3:*"])
        reader = user("reader", ["s3:Get*", "s3:List*"])
        switch_on = urllib.request.Request(f"{server.url}/moto-api/reset-auth", data=b"0", method="POST",
                                           headers={"Content-Type": "text/plain"})
        urllib.request.urlopen(switch_on, timeout=10).close()
        yield MotoAuth(server, admin, reader)
    finally:
        server.stop()


class _Proxy(http.server.BaseHTTPRequestHandler):
    """Forwards every request to ``upstream`` without the headers in ``dropped`` (If-None-Match: a store
    that ignores conditional puts), and answers a PUT whose path matches ``refused`` with 403 Access
    Denied instead of forwarding it (a store that fails one write in the middle of others)."""

    upstream: tuple[str, int]
    dropped: tuple[str, ...] = ()
    refused: re.Pattern | None = None
    protocol_version = "HTTP/1.1"

    def _forward(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        if self.command == "PUT" and self.refused is not None and self.refused.search(self.path):
            self._refuse()
            return
        headers = {k: v for k, v in self.headers.items() if k.lower() not in (*self.dropped, "connection")}
        conn = http.client.HTTPConnection(*self.upstream, timeout=30)
        try:
            conn.request(self.command, self.path, body=body, headers=headers)
            response = conn.getresponse()
            data = response.read()
        finally:
            conn.close()
        self.send_response(response.status)
        for key, value in response.getheaders():
            if key.lower() not in ("transfer-encoding", "connection", "content-length", "date", "server"):
                self.send_header(key, value)
        # a HEAD answer has no body but the object's length
        length = response.getheader("Content-Length") if self.command == "HEAD" else None
        self.send_header("Content-Length", length or str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _refuse(self) -> None:
        data = b"<Error><Code>AccessDenied</Code><Message>Access Denied (refused by the test proxy)</Message></Error>"
        self.send_response(403)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_PUT = do_HEAD = do_DELETE = do_POST = _forward

    def log_message(self, format, *args) -> None:  # noqa: A002 - the base class's signature
        pass


@contextlib.contextmanager
def proxy(server: Server, dropped: tuple[str, ...] = (), refused: str | None = None) -> Iterator[str]:
    """The URL of a ``_Proxy`` in front of ``server`` while the block runs."""
    attrs = {"upstream": ("127.0.0.1", server.port), "dropped": dropped,
             "refused": re.compile(refused) if refused else None}
    handler = type("Handler", (_Proxy,), attrs)
    running = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=running.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{running.server_address[1]}"
    finally:
        running.shutdown()
        running.server_close()


@pytest.fixture
def no_conditional_put_proxy(moto: Server) -> Iterator[str]:
    """The URL of a proxy in front of ``moto`` that strips If-None-Match."""
    with proxy(moto, dropped=("if-none-match",)) as url:
        yield url


def azure_shared_key_request(url: str, method: str = "PUT", key: str = AZURE_KEY) -> int:
    """One Blob service request signed with the account's shared key (to create containers)."""
    headers = {"x-ms-date": formatdate(usegmt=True), "x-ms-version": AZURE_API_VERSION}
    parts = urllib.parse.urlsplit(url)
    canonical_headers = "".join(f"{k}:{v}\n" for k, v in sorted(headers.items()))
    query = urllib.parse.parse_qs(parts.query)
    resource = f"/{AZURE_ACCOUNT}{parts.path}" + "".join(
        f"\n{k.lower()}:{','.join(sorted(v))}" for k, v in sorted(query.items()))
    # VERB, then eleven standard headers (all empty here: no body), then the x-ms-* headers and the resource
    to_sign = "\n".join([method] + [""] * 11) + "\n" + canonical_headers + resource
    signature = base64.b64encode(hmac.new(base64.b64decode(key), to_sign.encode(), hashlib.sha256).digest()).decode()
    headers["Authorization"] = f"SharedKey {AZURE_ACCOUNT}:{signature}"
    if method == "PUT":
        headers["Content-Length"] = "0"
    with urllib.request.urlopen(urllib.request.Request(url, method=method, headers=headers), timeout=10) as response:
        return response.status


def azure_account_sas(permissions: str, key: str = AZURE_KEY) -> str:
    """An account SAS for the Blob service with ``permissions`` (``rl``: read and list only)."""
    fields = {"sv": "2019-12-12", "ss": "b", "srt": "sco", "sp": permissions, "se": "2099-01-01T00:00:00Z",
              "spr": "https,http"}
    to_sign = "\n".join([AZURE_ACCOUNT, fields["sp"], fields["ss"], fields["srt"], "", fields["se"], "",
                         fields["spr"], fields["sv"], ""])
    fields["sig"] = base64.b64encode(hmac.new(base64.b64decode(key), to_sign.encode(), hashlib.sha256).digest()).decode()
    return urllib.parse.urlencode(fields)


@dataclass
class AzureContainer:
    """A new container on Azurite; ``uri(key)`` names a table in it."""

    name: str
    server: Server

    @property
    def endpoint(self) -> str:
        return f"{self.server.url}/{AZURE_ACCOUNT}"

    def uri(self, key: str = "table") -> str:
        return f"az://{self.name}/{key}" if key else f"az://{self.name}"

    @property
    def options(self) -> dict[str, str]:
        return {"hoodie.storage.azure.account.name": AZURE_ACCOUNT, "hoodie.storage.azure.account.key": AZURE_KEY,
                "hoodie.storage.azure.endpoint": self.endpoint}

    def connection_string(self, key: str = AZURE_KEY) -> str:
        return (f"DefaultEndpointsProtocol=http;AccountName={AZURE_ACCOUNT};AccountKey={key};"
                f"BlobEndpoint={self.endpoint};")

    @property
    def env(self) -> dict[str, str]:
        return {"AZURE_STORAGE_CONNECTION_STRING": self.connection_string()}


def start_azurite(work: Path) -> Server:
    """Azurite's Blob service on a free port, its data and access log in ``work``."""
    if not AZURITE_BIN.is_file():
        _missing(f"Azurite is not installed at {AZURITE_BIN.relative_to(REPO)}: run `make install` (needs node and npm)")
    port = free_port()
    return Server("azurite", [str(AZURITE_BIN), "--blobHost", "127.0.0.1", "--blobPort", str(port), "--location",
                              str(work), "--skipApiVersionCheck", "--loose", "--disableTelemetry"],
                  port, work / "azurite.log")


def new_azure_container(server: Server) -> AzureContainer:
    name = f"hoodie-{uuid.uuid4().hex[:20]}"
    azure_shared_key_request(f"{server.url}/{AZURE_ACCOUNT}/{name}?restype=container")
    return AzureContainer(name, server)


@pytest.fixture(scope="session")
def azurite(tmp_path_factory) -> Iterator[Server]:
    server = start_azurite(tmp_path_factory.mktemp("azurite"))
    yield server
    server.stop()


@pytest.fixture
def azure_container(azurite: Server) -> AzureContainer:
    return new_azure_container(azurite)


@pytest.fixture
def azure_env(azure_container: AzureContainer, monkeypatch) -> AzureContainer:
    """``azure_container`` with its connection string in the environment."""
    return _in_environment(azure_container, monkeypatch)
