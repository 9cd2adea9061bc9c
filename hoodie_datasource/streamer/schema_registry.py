"""Avro schemas from a schema registry that speaks Confluent's REST API (Confluent Schema Registry, Karapace,
Apicurio's ``/apis/ccompat/v7``), fetched as Apache Hudi fetches them.

The streamer's schemas (``org.apache.hudi.utilities.schema.SchemaRegistryProvider``):
``hoodie.streamer.schemaprovider.registry.url`` names a subject version, usually the latest
(``http://host:8081/subjects/<topic>-value/versions/latest``), whose answer's ``schema`` field is the source
schema; ``hoodie.streamer.schemaprovider.registry.targetUrl`` (by default the same URL) gives the target
schema. Both are fetched again every round, so a version registered between rounds is used from the next
one. Credentials in the URL (``https://user:secret@host/...``) go in a Basic ``Authorization`` header and not
in the request line, as ``SchemaRegistryProvider.fetchSchemaFromRegistry`` sends them.

A message's writer schema (Confluent's ``KafkaAvroDeserializer``): a framed value names its schema by a
4-byte id, looked up at ``<schema.registry.url>/schemas/ids/<id>``. Ids name immutable schemas in these
registries, so each process keeps what it fetched (``writer_schema``): a Spark task asks once per id.
An id the registry does not know (HTTP 404) is the message's fault (``UnknownSchemaId``); a registry that
does not answer, or answers anything else, is ``SchemaRegistryError``.
"""

from __future__ import annotations

import base64
import functools
import json
import logging
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

import fastavro

from hoodie_datasource.errors import SchemaRegistryError

logger = logging.getLogger(__name__)
SUBJECTS = "/subjects/"
TIMEOUT_S = 30.0


@dataclass(frozen=True)
class SchemaRegistryConfig:
    url: str  # hoodie.streamer.schemaprovider.registry.url: the source schema's subject version
    target_url: str  # hoodie.streamer.schemaprovider.registry.targetUrl (the url when not set)
    timeout_s: float = TIMEOUT_S


class UnknownSchemaId(LookupError):  # noqa: N818 - a message's fault, reported as a bad record, never raised out
    """The registry has no schema of this id (or it is not an Avro schema)."""


def registry_root(subject_url: str) -> str | None:
    """The registry's base URL in a subject-version URL (what precedes ``/subjects/``), or None."""
    root, found, _ = subject_url.partition(SUBJECTS)
    return root if found else None


def _request(url: str) -> urllib.request.Request:
    """A GET of ``url`` with the URL's user info, if any, as a Basic Authorization header instead."""
    parts = urllib.parse.urlsplit(url)
    headers = {"Accept": "application/vnd.schemaregistry.v1+json, application/json"}
    if parts.username is not None:
        credentials = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
        headers["Authorization"] = "Basic " + base64.b64encode(credentials.encode("utf-8")).decode("ascii")
        host = parts.hostname + (f":{parts.port}" if parts.port else "")
        url = urllib.parse.urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    return urllib.request.Request(url, headers=headers)


def _redacted(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    return url.replace(f":{parts.password}@", ":***@", 1)


def _get_schema(url: str, timeout_s: float) -> dict:
    """The Avro schema in the ``schema`` field of the registry's answer to ``url``; ``UnknownSchemaId`` on 404."""
    try:
        with urllib.request.urlopen(_request(url), timeout=timeout_s) as response:  # noqa: S310 - the user's URL
            answer = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise UnknownSchemaId(f"the schema registry has none at {_redacted(url)}") from None
        raise SchemaRegistryError(f"The schema registry answered {exc.code} {exc.reason} to GET {_redacted(url)}") \
            from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise SchemaRegistryError(f"The schema registry at {_redacted(url)} did not answer: {reason}") from None
    except ValueError as exc:
        raise SchemaRegistryError(f"The schema registry's answer to GET {_redacted(url)} is not JSON: {exc}") from None
    if isinstance(answer, dict) and answer.get("schemaType", "AVRO") != "AVRO":
        raise UnknownSchemaId(f"{_redacted(url)} is a {answer['schemaType']} schema, not an Avro one")
    try:
        return json.loads(answer["schema"])
    except (KeyError, TypeError, ValueError) as exc:
        raise SchemaRegistryError(f"The schema registry's answer to GET {_redacted(url)} has no Avro schema in its "
                                  f"'schema' field: {exc!r}") from None


def subject_schema(url: str, timeout_s: float = TIMEOUT_S) -> dict:
    """The schema of the subject version ``url`` names (``SchemaRegistryProvider.parseSchemaFromRegistry``)."""
    try:
        return _get_schema(url, timeout_s)
    except UnknownSchemaId as exc:
        raise SchemaRegistryError(f"No Avro schema at hoodie.streamer.schemaprovider.registry.url: {exc}; it should "
                                  "name a subject version, as http://host:8081/subjects/<subject>/versions/latest") \
            from None


@functools.lru_cache(maxsize=256)
def writer_schema(registry_urls: str, schema_id: int, timeout_s: float = TIMEOUT_S) -> dict:
    """The parsed Avro schema of ``schema_id`` (``schema.registry.url``: one URL or several, comma separated,
    asked in turn while one does not answer)."""
    urls = [u.strip().rstrip("/") for u in registry_urls.split(",") if u.strip()]
    for i, root in enumerate(urls):
        try:
            return fastavro.parse_schema(_get_schema(f"{root}/schemas/ids/{schema_id}", timeout_s))
        except SchemaRegistryError:
            if i == len(urls) - 1:
                raise
            logger.warning("Schema registry %s did not answer for schema id %d; asking %s", _redacted(root),
                           schema_id, _redacted(urls[i + 1]))
    raise SchemaRegistryError(f"schema.registry.url={registry_urls!r} names no registry")
