"""The Kafka broker fixture (``tests/kafka/server.py``) for the tests of this folder."""

from tests.kafka.server import kafka  # noqa: F401
