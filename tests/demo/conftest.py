"""Tests of the bundled demo server (``mcp_tasks_jupyter.demo``), driven over real pipes and sockets."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # for demo_harness


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
