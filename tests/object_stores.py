"""Real object-store servers for the tests, started by the tests: moto's S3 server, Azurite and fake-gcs-server.

Each server runs as a child process on a free loopback port for the whole test session and is stopped
after it. Its access log (werkzeug's for moto, Azurite's own; both ``"PUT /path HTTP/1.1" 201``) is kept
in a file, so a test or a benchmark can count the requests an operation made:

    mark = moto.mark()
    storage.list_dir(".hoodie")
    assert moto.requests_since(mark)["LIST"] == 1

Every test gets its own new bucket (``s3_bucket``) or container (``azure_container``); their
``options`` are the table options that reach them (``hoodie.storage.*``), their ``env`` the same
settings as environment variables. A missing server binary skips the test locally and fails it under
``CI=true`` (like the shared tables in tests/conftest.py). Azurite comes from npm, fake-gcs-server is built from its
Go module: ``make install`` puts them under ``.tools/``. fake-gcs-server sits behind ``_GcsFront``, which verifies
signed URLs as GCS does and takes the XML API's object uploads it lacks (``gcs_bucket``).

Authentication: moto accepts any key unless told otherwise, so the access tests use a second moto
server (``moto_auth``) whose IAM users are created first and whose authentication is then switched on
(``POST /moto-api/reset-auth``): an admin allowed ``s3:*`` and a reader allowed only ``s3:Get*`` and ``s3:List*``.
Azurite always checks the shared key; a SAS without write permission is its "no permission".
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import functools
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
GCS_HOST = "storage.googleapis.com"
FAKE_GCS_VERSION = "1.56.1"  # also in the Makefile
FAKE_GCS_BIN = REPO / ".tools" / "fake-gcs-server" / FAKE_GCS_VERSION / "fake-gcs-server"
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
        body = self._body()
        if self.command == "PUT" and self.refused is not None and self.refused.search(self.path):
            self._refuse()
            return
        self._reply(*self._exchange(self.command, self.path, body))

    def _body(self) -> bytes | None:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else None

    def _exchange(self, method: str, path: str, body: bytes | None) -> tuple[int, list[tuple[str, str]], bytes]:
        """The upstream's answer to the request (status, headers, body), sent without the ``dropped`` headers."""
        headers = {k: v for k, v in self.headers.items() if k.lower() not in (*self.dropped, "connection")}
        conn = http.client.HTTPConnection(*self.upstream, timeout=30)
        try:
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            return response.status, response.getheaders(), response.read()
        finally:
            conn.close()

    def _reply(self, status: int, headers: list[tuple[str, str]], data: bytes) -> None:
        self.send_response(status)
        length = None
        for key, value in headers:
            if key.lower() == "content-length":
                length = value
            elif key.lower() not in ("transfer-encoding", "connection", "date", "server"):
                self.send_header(key, value)
        # a HEAD answer has no body but the object's length
        self.send_header("Content-Length", (length if self.command == "HEAD" else None) or str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _refuse(self) -> None:
        self._error(403, "AccessDenied", "Access Denied (refused by the test proxy)")

    def _error(self, status: int, code: str, message: str) -> None:
        data = f"<Error><Code>{code}</Code><Message>{message}</Message></Error>".encode()
        self._reply(status, [("Content-Type", "application/xml")], data)

    do_GET = do_PUT = do_HEAD = do_DELETE = do_POST = _forward

    def log_message(self, format, *args) -> None:  # noqa: A002 - the base class's signature
        pass


@contextlib.contextmanager
def proxy(server: Server, dropped: tuple[str, ...] = (), refused: str | None = None) -> Iterator[str]:
    """The URL of a ``_Proxy`` in front of ``server`` while the block runs."""
    attrs = {"upstream": ("127.0.0.1", server.port), "dropped": dropped,
             "refused": re.compile(refused) if refused else None}
    with _serving(type("Handler", (_Proxy,), attrs)) as url:
        yield url


@contextlib.contextmanager
def _serving(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """The URL of ``handler`` served by a thread of this process on a free loopback port while the block runs."""
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


class _GcsFront(_Proxy):
    """In front of fake-gcs-server, the two things of Google Cloud Storage that it lacks and the tests need.

    - Signed URLs are verified as GCS does (V4, ``GOOG4-RSA-SHA256``): the signature over the canonical request with
      the service account's public key, and the expiry (``X-Goog-Date`` + ``X-Goog-Expires``); a wrong one is
      refused with 403 ``SignatureDoesNotMatch``, an expired one with 400 ``ExpiredToken``. fake-gcs-server serves any
      signed URL without looking at its signature.
    - An object upload (``PUT /bucket/object``, with ``x-goog-if-generation-match`` for a conditional create: what
      obstore sends) is made the JSON API's media upload, which fake-gcs-server has (its XML API has no plain PUT:
      fsouza/fake-gcs-server#1164); the answer carries the object's ``ETag`` and ``x-goog-generation`` as GCS's does.
    """

    public_key: object  # the service account's RSA public key
    dropped = ("host",)  # fake-gcs-server serves the XML API on its own host name only

    def _forward(self) -> None:
        body = self._body()
        problem = self._signature_problem()
        if problem:
            self._error(*problem)
            return
        parts = urllib.parse.urlsplit(self.path)
        if self.command != "PUT" or parts.path.startswith(("/storage/", "/upload/")) or "X-Goog-Signature" in parts.query:
            self._reply(*self._exchange(self.command, self.path, body))
            return
        bucket, name = parts.path.lstrip("/").split("/", 1)
        query = {"uploadType": "media", "name": urllib.parse.unquote(name)}
        if self.headers.get("x-goog-if-generation-match") is not None:
            query["ifGenerationMatch"] = self.headers["x-goog-if-generation-match"]
        status, headers, data = self._exchange("POST", f"/upload/storage/v1/b/{bucket}/o?"
                                               f"{urllib.parse.urlencode(query)}", body)
        if status == 200:
            created = json.loads(data)
            headers, data = [("ETag", f'"{created["etag"]}"'), ("x-goog-generation", created["generation"])], b""
        self._reply(status, headers, data)

    do_GET = do_PUT = do_HEAD = do_DELETE = do_POST = _forward

    def _signature_problem(self) -> tuple[int, str, str] | None:
        """(status, code, message) refusing a signed URL request, or None (a valid one, or no signed URL)."""
        parts = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
        fields = dict(query)
        if "X-Goog-Signature" not in fields:
            return None
        signed_at = datetime.datetime.strptime(fields["X-Goog-Date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.UTC)
        if time.time() > signed_at.timestamp() + int(fields["X-Goog-Expires"]):
            return 400, "ExpiredToken", f"The provided token has expired (signed {fields['X-Goog-Date']})."
        encode = functools.partial(urllib.parse.quote, safe="-_.~")
        canonical_query = "&".join(f"{encode(k)}={encode(v)}" for k, v in sorted(query) if k != "X-Goog-Signature")
        signed_headers = fields["X-Goog-SignedHeaders"]
        # the front stands for GCS's own host, the one a URL is signed for (object_store signs ``host:
        # storage.googleapis.com`` whatever its base URL: object_store's gcp/credential.rs, GCSAuthorizer::sign)
        values = {**{k.lower(): v.strip() for k, v in self.headers.items()}, "host": GCS_HOST}
        canonical_headers = "".join(f"{h}:{values.get(h, '')}\n" for h in signed_headers.split(";"))
        canonical_request = "\n".join([self.command, parts.path, canonical_query, canonical_headers, signed_headers,
                                       "UNSIGNED-PAYLOAD"])
        scope = fields["X-Goog-Credential"].split("/", 1)[1]
        to_sign = "\n".join(["GOOG4-RSA-SHA256", fields["X-Goog-Date"], scope,
                             hashlib.sha256(canonical_request.encode()).hexdigest()])
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding
        try:
            self.public_key.verify(bytes.fromhex(fields["X-Goog-Signature"]), to_sign.encode(), padding.PKCS1v15(),
                                   hashes.SHA256())
        except (InvalidSignature, ValueError):
            return 403, "SignatureDoesNotMatch", "The request signature does not match the signature you provided."
        return None


@dataclass
class FakeGcs:
    """fake-gcs-server and its ``_GcsFront``, whose URL (``url``) is the store's endpoint; ``service_account`` is a
    key file naming it (``gcs_base_url``, the key object_store's GCS client takes an emulator's URL from) with a
    new RSA key that signs URLs (and the JWTs the client sends as bearer tokens, which the emulator ignores)."""

    server: Server
    url: str
    service_account: Path


@pytest.fixture(scope="session")
def fake_gcs(tmp_path_factory) -> Iterator[FakeGcs]:
    """fake-gcs-server (``make install`` builds it into ``.tools/``) behind ``_GcsFront``, for the test session."""
    if not FAKE_GCS_BIN.is_file():
        _missing(f"fake-gcs-server is not installed at {FAKE_GCS_BIN.relative_to(REPO)}: run `make install` (needs go)")
    require_module("cryptography")  # moto's own dependency
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    work = tmp_path_factory.mktemp("fake-gcs")
    port = free_port()
    server = Server("fake-gcs-server", [str(FAKE_GCS_BIN), "-scheme", "http", "-host", "127.0.0.1", "-port", str(port),
                                        "-backend", "memory", "-public-host", f"127.0.0.1:{port}"],
                    port, work / "fake-gcs-server.log", ready_path="/_internal/healthcheck")
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    try:
        with _serving(type("Handler", (_GcsFront,), {"upstream": ("127.0.0.1", port),
                                                      "public_key": key.public_key()})) as url:
            service_account = work / "service-account.json"
            service_account.write_text(json.dumps({
                "type": "service_account", "client_email": "hoodie-tests@hoodie.iam.gserviceaccount.com",
                "private_key_id": "hoodie-tests", "private_key": pem, "gcs_base_url": url}))
            yield FakeGcs(server, url, service_account)
    finally:
        server.stop()


@dataclass
class GcsBucket:
    """A new bucket on fake-gcs-server; ``uri(key)`` names a table in it."""

    name: str
    server: FakeGcs

    def uri(self, key: str = "table") -> str:
        return f"gs://{self.name}/{key}" if key else f"gs://{self.name}"

    @property
    def options(self) -> dict[str, str]:
        return {"hoodie.storage.gcs.service.account.path": str(self.server.service_account),
                "hoodie.storage.allow.http": "true"}


@pytest.fixture
def gcs_bucket(fake_gcs: FakeGcs) -> GcsBucket:
    name = new_bucket_name()
    create = urllib.request.Request(f"{fake_gcs.url}/storage/v1/b", data=json.dumps({"name": name}).encode(),
                                    headers={"Content-Type": "application/json"}, method="POST")
    urllib.request.urlopen(create, timeout=10).close()
    return GcsBucket(name, fake_gcs)
