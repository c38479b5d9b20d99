"""Shared pytest set-up: async tests run on asyncio through anyio's plugin."""

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _own_task_index(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test records tasks in a task index of its own, never in the user's data directory."""
    monkeypatch.setenv("MTJ_INDEX", str(tmp_path_factory.mktemp("index") / "tasks.sqlite3"))
