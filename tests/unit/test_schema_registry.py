"""The schema registry client (``streamer.schema_registry``) against a small HTTP server on loopback answering as
Confluent's REST API does: credentials in a URL go in a Basic Authorization header (never in the request line,
never in an error message), a 404 is an unknown id, anything else that is not a schema is ``SchemaRegistryError``,
and a list of registries is asked in turn. No JVM; the suite's real registry is in tests/kafka."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hoodie_datasource.errors import SchemaRegistryError
from hoodie_datasource.streamer.schema_registry import UnknownSchemaId, registry_root, subject_schema, writer_schema
from tests.object_stores import free_port

TRIP = {"type": "record", "name": "trip", "fields": [{"name": "id", "type": "string"}]}


class Answers(BaseHTTPRequestHandler):
    seen: list[tuple[str, str | None]] = []

    def do_GET(self):  # noqa: N802 - the handler's method name
        Answers.seen.append((self.path, self.headers.get("Authorization")))
        status, body = {
            "/subjects/trips-value/versions/latest": (200, {"id": 1, "version": 1, "schema": json.dumps(TRIP)}),
            "/schemas/ids/1": (200, {"schema": json.dumps(TRIP)}),
            "/schemas/ids/2": (200, {"schemaType": "PROTOBUF", "schema": "syntax = \"proto3\";"}),
            "/schemas/ids/3": (200, "not a schema answer"),
            "/broken/schemas/ids/1": (500, {"error_code": 50001, "message": "store down"}),
        }.get(self.path, (404, {"error_code": 40403, "message": "Schema not found"}))
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def registry() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Answers)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join()


def test_the_subjects_latest_version_with_the_urls_credentials_as_basic_auth(registry):
    Answers.seen.clear()
    url = f"http://ann:s%40cret@{registry}/subjects/trips-value/versions/latest"
    assert subject_schema(url) == TRIP
    assert Answers.seen == [("/subjects/trips-value/versions/latest", "Basic YW5uOnNAY3JldA==")]  # ann:s@cret
    assert registry_root(url) == f"http://ann:s%40cret@{registry}"
    with pytest.raises(SchemaRegistryError, match=r"No Avro schema at .*ann:\*\*\*@.*/subjects/nope/versions/latest"):
        subject_schema(f"http://ann:s%40cret@{registry}/subjects/nope/versions/latest")


def test_writer_schemas_by_id_kept_once_fetched_and_unknown_ones_told_apart(registry):
    Answers.seen.clear()
    assert writer_schema(f"http://{registry}", 1)["name"] == "trip"
    assert writer_schema(f"http://{registry}", 1)["name"] == "trip"
    assert [path for path, _ in Answers.seen] == ["/schemas/ids/1"]  # asked once
    with pytest.raises(UnknownSchemaId, match="none at"):
        writer_schema(f"http://{registry}", 99)
    with pytest.raises(UnknownSchemaId, match="PROTOBUF schema, not an Avro one"):
        writer_schema(f"http://{registry}", 2)
    with pytest.raises(SchemaRegistryError, match="has no Avro schema in its 'schema' field"):
        writer_schema(f"http://{registry}", 3)


def test_a_registry_that_fails_or_does_not_answer_is_a_schema_registry_error_and_the_next_one_is_asked(registry):
    with pytest.raises(SchemaRegistryError, match=r"answered 500 .* GET http://.*/broken/schemas/ids/1"):
        writer_schema(f"http://{registry}/broken", 1)
    dead = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(SchemaRegistryError, match=f"registry at {dead}/schemas/ids/1 did not answer"):
        writer_schema(dead, 1)
    assert writer_schema(f"{dead}, http://{registry}/", 1)["name"] == "trip"
