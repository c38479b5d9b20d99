"""Fixtures for the official conformance suite (@modelcontextprotocol/conformance, installed by `make peers`)."""

from __future__ import annotations

import pytest

from tests.support import conformance as _conformance
from tests.support.paths import conformance_js, node22


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def conformance_suite():
    """The scenario runner, after checking the suite and Node 22 are installed (else: run `make peers`)."""
    node22()
    conformance_js()
    return _conformance.run_client_scenario
