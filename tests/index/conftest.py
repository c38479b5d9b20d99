"""Tests of the task index: the demo server over stdio and over Streamable HTTP
(``tests/support/demo_fixtures.py``)."""

from tests.support.demo_fixtures import connect_demo, demo_client, transport

__all__ = ["connect_demo", "demo_client", "transport"]
