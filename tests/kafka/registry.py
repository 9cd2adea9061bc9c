"""A real schema registry for the AvroKafkaSource tests: Apicurio Registry, through its Confluent-compatible API
(``/apis/ccompat/v7``: subjects, versions and ``/schemas/ids/<id>`` as Confluent's registry serves them).

Karapace, the first candidate (a Confluent-API registry in Python that keeps its schemas in a Kafka topic), is
not on PyPI (``pip download karapace``: "No matching distribution found"). Confluent's own registry is not on
Maven Central. Apicurio is, as a Quarkus application's classes: ``make apicurio`` builds the runnable application
from them (``tests/apicurio.pom.xml``) into ``.tools/apicurio/<version>``. It runs with java on a free loopback
port, its schemas in an in-memory H2 database (gone when it stops), with a 256 MB heap; it is ready when its
subjects list answers. A missing build or java skips the tests locally and fails them under ``CI=true``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO, _missing
from tests.object_stores import free_port
from tests.server_process import ServerProcess, wait_until_ready

APICURIO_VERSION = "2.4.2.Final"  # as the Makefile's APICURIO_VERSION
APICURIO_DIR = REPO / ".tools" / "apicurio" / APICURIO_VERSION
RUNNER = APICURIO_DIR / "apicurio-registry-runner-1-runner.jar"  # Quarkus's legacy jar, beside its lib/
COMPLETE = ".complete"  # written by the Makefile once the build is done
CCOMPAT = "/apis/ccompat/v7"


class SchemaRegistry(ServerProcess):
    @property
    def url(self) -> str:
        """The root of the Confluent-compatible API: ``schema.registry.url``."""
        return f"http://127.0.0.1:{self.port}{CCOMPAT}"

    def subject_url(self, subject: str, version: str = "latest") -> str:
        """``hoodie.streamer.schemaprovider.registry.url`` of ``subject``'s ``version``."""
        return f"{self.url}/subjects/{subject}/versions/{version}"

    def register(self, subject: str, schema: dict) -> int:
        """A new version of ``subject`` (as a producer's serializer registers it); its schema id."""
        body = json.dumps({"schema": json.dumps(schema)}).encode()
        request = urllib.request.Request(f"{self.url}/subjects/{subject}/versions", data=body, method="POST",
                                         headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())["id"]


def start_registry(work: Path, timeout: float = 120.0) -> SchemaRegistry:
    java = shutil.which("java")
    if not (APICURIO_DIR / COMPLETE).is_file() or java is None:
        _missing(f"Apicurio Registry {APICURIO_VERSION} is not built in {APICURIO_DIR.relative_to(REPO)} (or java is "
                 "missing): run `make apicurio` (it needs mvn)")
    port = free_port()
    log_path = work / "registry.log"
    with open(log_path, "ab") as log:
        process = subprocess.Popen([java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                                    f"-Dquarkus.http.port={port}", "-Dquarkus.http.host=127.0.0.1",
                                    "-Dquarkus.log.level=WARN", "-jar", str(RUNNER)],
                                   stdout=log, stderr=subprocess.STDOUT, cwd=work)
    registry = SchemaRegistry(port, process, log_path)
    wait_until_ready(process, "Apicurio Registry", registry.url, lambda: _get(f"{registry.url}/subjects"), log_path,
                     timeout, interval=0.5)
    return registry


def _get(url: str) -> None:
    with urllib.request.urlopen(url, timeout=2):
        pass


@pytest.fixture(scope="session")
def schema_registry(tmp_path_factory) -> Iterator[SchemaRegistry]:
    registry = start_registry(tmp_path_factory.mktemp("registry"))
    yield registry
    registry.stop()
