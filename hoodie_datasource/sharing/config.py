"""The server's configuration: the reference Delta Sharing server's YAML (delta-io/delta-sharing
``server/.../config/ServerConfig.scala``: ``version``, ``shares`` -> ``schemas`` -> ``tables`` with ``name``,
``location``, ``id``, ``historyShared``; ``authorization.bearerToken``; ``host``, ``port``, ``endpoint``,
``preSignedUrlTimeoutSeconds``), plus what that server lacks:

* ``recipients``: several, each with its own ``bearerToken``, the ``shares`` it may see (all when absent) and an
  optional ``expirationTime``; ``authorization.bearerToken`` stands for a recipient named ``default`` that sees
  every share, as the reference server's single token does.
* ``fileTokenSecret``: the HMAC key of the file URLs of local tables (or the ``HOODIE_SHARING_SECRET``
  environment variable); servers with the same secret accept each other's URLs.
* ``cache.maxBytes``: the bound of each table's cache of materialized merge-on-read slices and change files.
* ``storageOptions`` of a table: its ``hoodie.storage.*`` keys (credentials, endpoints of its object store).

Names are case-insensitive, as the protocol says: lookups fold case, responses keep the configured spelling.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from hoodie_datasource.errors import SharingConfigError

logger = logging.getLogger(__name__)

SECRET_ENV = "HOODIE_SHARING_SECRET"
DEFAULT_RECIPIENT = "default"
CACHE_MAX_BYTES = 10 << 30


@dataclass(frozen=True)
class SharedTable:
    name: str
    location: str
    id: str  # stable: the configured one, else a hash of the location
    share: str
    schema: str
    history_shared: bool = False
    start_version: int = 0
    storage_options: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class SharedSchema:
    name: str
    tables: tuple[SharedTable, ...]


@dataclass(frozen=True)
class Share:
    name: str
    schemas: tuple[SharedSchema, ...]

    @property
    def id(self) -> str:
        return _stable_id("share", self.name.lower())


@dataclass(frozen=True)
class Recipient:
    name: str
    bearer_token: str = field(repr=False)
    shares: frozenset[str] | None = None  # lower-cased share names; None: every share
    expiration_time: dt.datetime | None = None

    def may_see(self, share: str) -> bool:
        return self.shares is None or share.lower() in self.shares


@dataclass(frozen=True)
class SharingConfig:
    shares: tuple[Share, ...]
    recipients: tuple[Recipient, ...] = ()
    host: str = "localhost"
    port: int = 80
    endpoint: str = "/delta-sharing"
    pre_signed_url_timeout_seconds: int = 3600
    file_token_secret: bytes = field(default=b"", repr=False)
    cache_max_bytes: int = CACHE_MAX_BYTES
    version: int = 1

    def share(self, name: str) -> Share | None:
        return next((s for s in self.shares if s.name.lower() == name.lower()), None)

    def table_by_id(self, table_id: str) -> SharedTable | None:
        return next((t for s in self.shares for sc in s.schemas for t in sc.tables if t.id == table_id), None)

    def recipient(self, name: str) -> Recipient:
        found = next((r for r in self.recipients if r.name == name), None)
        if found is None:
            raise SharingConfigError(f"No recipient {name!r}; the configuration names: "
                                     f"{', '.join(r.name for r in self.recipients) or 'none'}")
        return found


def _stable_id(*parts: str) -> str:
    """A UUID-shaped id derived from ``parts``: the same on every server reading the same configuration."""
    digest = hashlib.sha256("\0".join(parts).encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def _required(entry: Mapping[str, Any], key: str, where: str) -> Any:
    value = entry.get(key)
    if value is None or value == "":
        raise SharingConfigError(f"'{key}' in {where} must be provided")
    return value


def _name(entry: Mapping[str, Any], where: str, allow_dot: bool) -> str:
    """A share, schema or table name as the protocol admits them (``# Names`` of PROTOCOL.md)."""
    name = str(_required(entry, "name", where))
    bad = [c for c in name if c in " /" or ord(c) < 0x20 or ord(c) == 0x7F or (c == "." and not allow_dot)]
    if len(name) > 255 or bad:
        raise SharingConfigError(f"{where} has the name {name!r}: names are at most 255 characters, without spaces, "
                                 f"'/', control characters{'' if allow_dot else ' or .'}")
    return name


def _unique(names: list[str], what: str) -> None:
    folded = [n.lower() for n in names]
    twice = sorted({n for n in folded if folded.count(n) > 1})
    if twice:
        raise SharingConfigError(f"{what} named more than once (names are case-insensitive): {', '.join(twice)}")


def _table(entry: Mapping[str, Any], share: str, schema: str) -> SharedTable:
    where = f"a table of {share}.{schema}"
    name = _name(entry, where, allow_dot=False)
    location = str(_required(entry, "location", f"table {share}.{schema}.{name}")).rstrip("/")
    options = entry.get("storageOptions") or {}
    if not isinstance(options, Mapping):
        raise SharingConfigError(f"'storageOptions' of table {share}.{schema}.{name} must be a map of "
                                 "hoodie.storage.* keys")
    return SharedTable(name=name, location=location, id=str(entry.get("id") or _stable_id("table", location)),
                       share=share, schema=schema, history_shared=bool(entry.get("historyShared", False)),
                       start_version=int(entry.get("startVersion", 0) or 0),
                       storage_options=tuple(sorted((str(k), str(v)) for k, v in options.items())))


def _share(entry: Mapping[str, Any]) -> Share:
    name = _name(entry, "a share", allow_dot=True)
    schemas = []
    for schema in entry.get("schemas") or ():
        schema_name = _name(schema, f"a schema of share {name}", allow_dot=False)
        tables = tuple(_table(t, name, schema_name) for t in schema.get("tables") or ())
        _unique([t.name for t in tables], f"tables of {name}.{schema_name}")
        schemas.append(SharedSchema(schema_name, tables))
    _unique([s.name for s in schemas], f"schemas of share {name}")
    return Share(name, tuple(schemas))


def _expiry(value: Any, where: str) -> dt.datetime | None:
    if value is None or value == "":
        return None
    try:
        moment = value if isinstance(value, dt.datetime) else dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise SharingConfigError(f"'expirationTime' of {where} is {value!r}: give an ISO 8601 time, "
                                 "e.g. 2027-01-01T00:00:00Z") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc)


def _recipients(raw: Mapping[str, Any], shares: tuple[Share, ...]) -> tuple[Recipient, ...]:
    recipients = []
    token = (raw.get("authorization") or {}).get("bearerToken")
    if raw.get("authorization") is not None and not token:
        raise SharingConfigError("'bearerToken' in 'authorization' must be provided")
    if token:
        recipients.append(Recipient(DEFAULT_RECIPIENT, str(token)))
    known = {s.name.lower() for s in shares}
    for entry in raw.get("recipients") or ():
        name = str(_required(entry, "name", "a recipient"))
        granted = entry.get("shares")
        grants = None if granted is None else frozenset(str(s).lower() for s in granted)
        unknown = sorted((grants or frozenset()) - known)
        if unknown:
            raise SharingConfigError(f"Recipient {name!r} is granted shares that do not exist: {', '.join(unknown)}; "
                                     f"the shares are: {', '.join(sorted(known)) or 'none'}")
        recipients.append(Recipient(name, str(_required(entry, "bearerToken", f"recipient {name}")), grants,
                                    _expiry(entry.get("expirationTime"), f"recipient {name}")))
    _unique([r.name for r in recipients], "recipients")
    tokens = [r.bearer_token for r in recipients]
    if len(set(tokens)) != len(tokens):
        raise SharingConfigError("Two recipients hold the same bearer token: give each its own")
    return tuple(recipients)


def parse_config(raw: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> SharingConfig:
    """The configuration of a parsed YAML document."""
    environ = os.environ if environ is None else environ
    if not isinstance(raw, Mapping):
        raise SharingConfigError("The sharing configuration must be a YAML map with 'version' and 'shares'")
    version = raw.get("version")
    if version is None or int(version) != 1:
        raise SharingConfigError(f"'version' is {version!r}: the configuration format version 1 is supported")
    shares = tuple(_share(s) for s in raw.get("shares") or ())
    _unique([s.name for s in shares], "shares")
    endpoint = "/" + str(raw.get("endpoint") or "/delta-sharing").strip("/")
    timeout = int(raw.get("preSignedUrlTimeoutSeconds", 3600))
    if timeout <= 0:
        raise SharingConfigError(f"'preSignedUrlTimeoutSeconds' is {timeout}: give a positive number of seconds")
    secret = str(raw.get("fileTokenSecret") or environ.get(SECRET_ENV) or "")
    if not secret:
        logger.warning("No fileTokenSecret (nor %s): file URLs of local tables hold for this process only", SECRET_ENV)
    cache = raw.get("cache") or {}
    return SharingConfig(
        shares=shares, recipients=_recipients(raw, shares), host=str(raw.get("host") or "localhost"),
        port=int(raw.get("port", 80)), endpoint=endpoint, pre_signed_url_timeout_seconds=timeout,
        # without a configured secret, URLs hold for this process only
        file_token_secret=secret.encode() if secret else secrets.token_bytes(32),
        cache_max_bytes=int(cache.get("maxBytes", CACHE_MAX_BYTES)))


def load_config(path: str) -> SharingConfig:
    """The configuration in the YAML file at ``path``."""
    try:
        with open(path, encoding="utf-8") as handle:
            raw = yaml.safe_load(handle)
    except OSError as exc:
        raise SharingConfigError(f"Cannot read the sharing configuration {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise SharingConfigError(f"The sharing configuration {path} is not valid YAML: {exc}") from None
    return parse_config(raw)
