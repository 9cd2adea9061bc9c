"""The server fuzzed with schemathesis from its own OpenAPI document (``/openapi.json``): every operation, with
valid and invalid parameters and bodies, on a real merge-on-read table (every other case aimed at the shared
table's real names, so versions, timestamps and change ranges are fuzzed past the name lookup), with and without
the bearer token. No request may get a server error, and every error must be the protocol's
``{errorCode, message}``. Bounded to about a minute: ``FUZZ_EXAMPLES`` per operation and generation mode (valid, invalid)."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error

from hoodie_datasource.sharing.app import create_app
from hoodie_datasource.sharing.config import parse_config
from tests.sharing.conftest import TOKEN, config_of, write_versions

FUZZ_EXAMPLES = 30
REAL_NAMES = {"share": "share", "schema": "default", "table": "trips"}
_turn = itertools.count()
_STATUSES: Counter[int] = Counter()


@pytest.fixture(scope="module")
def sharing_api(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("fuzz") / "trips")
    write_versions(path, "MERGE_ON_READ", True, 4)
    return schemathesis.openapi.from_asgi("/openapi.json", create_app(parse_config(config_of({"trips": path}))))


def _check(case) -> None:
    turn = next(_turn)
    if turn % 2 and case.path_parameters:
        case.path_parameters = {k: REAL_NAMES.get(k, v) for k, v in case.path_parameters.items()}
    headers = {"Authorization": f"Bearer {TOKEN}"} if turn % 3 else {}
    response = case.call(headers=headers)
    _STATUSES[response.status_code] += 1
    case.validate_response(response, checks=[not_a_server_error])
    if response.status_code >= 400 and case.method.upper() != "HEAD":
        body = response.json()
        assert set(body) == {"errorCode", "message"} and body["message"], body


def test_no_request_gets_a_server_error(sharing_api):
    operations = [result.ok() for result in sharing_api.get_all_operations()]
    assert len(operations) >= 12  # every endpoint is in the document
    statuses: Counter[int] = Counter()
    for operation, mode in itertools.product(operations, GenerationMode):
        strategy = operation.as_strategy(generation_mode=mode)
        fuzz = settings(max_examples=FUZZ_EXAMPLES, deadline=None, database=None,
                        suppress_health_check=list(HealthCheck))(given(case=strategy)(_check))
        try:
            fuzz()
        except Unsatisfiable:  # nothing invalid to send: an operation without parameters (/health)
            assert mode is GenerationMode.NEGATIVE and not operation.path_parameters and not operation.query
    statuses.update(_STATUSES)
    # the fuzzing reached the tables' answers, not only the refusals of malformed requests
    assert statuses[200] >= 50 and statuses[400] >= 50 and statuses[401] >= 50 and statuses[404] >= 50, statuses
