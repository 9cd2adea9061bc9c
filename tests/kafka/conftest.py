"""The Kafka broker fixture (``tests/kafka/server.py``) and the schema registry's (``tests/kafka/registry.py``)
for the tests of this folder."""

from tests.kafka.registry import schema_registry  # noqa: F401
from tests.kafka.server import kafka  # noqa: F401
