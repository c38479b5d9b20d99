"""The fault suite: every scenario runs under a hard timeout (here, unless a test sets a tighter one)."""

import sys
from pathlib import Path

import pytest

from mcp_tasks_jupyter.running import poller

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("timeout") is None and HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.timeout(60))


@pytest.fixture
def short_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries of failed polls wait 0.2 s instead of 2, 4, 8... s: the same retries, sooner."""
    monkeypatch.setattr(poller, "MAX_BACKOFF_S", 0.2)


def stdio_argv(scenario: str) -> list[str]:
    """The command line of the stdio fault server playing ``scenario``."""
    return [sys.executable, str(HERE / "stdio_server.py"), scenario]
