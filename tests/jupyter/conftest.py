"""Jupyter-layer tests: a demo server over stdio, widgets with their comm messages counted."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

import mcp_tasks_jupyter as mtj
from tests.support import demo_stdio_argv

WAIT = 30  # seconds: a bound on every wait, never a speed claim

#: Strings a hostile server could send; none may reach HTML or the DOM as markup.
HOSTILE = ['<script>alert("x")</script>', '"><img src=x onerror=alert(1)>', "' onmouseover='alert(2)"]


#: The views are tested on the 2025-11-25 dialect: it pushes every status change, progress and log
#: line, which is what makes a task change fast. (``test_widget_follows_a_task_in_every_dialect``
#: covers the others.)
DIALECT = ("--dialect", "2025-11-25")


@contextlib.asynccontextmanager
async def demo_client(
    *server_args: str, name: str = "demo", dialect: tuple[str, ...] = DIALECT, **options: Any
) -> AsyncIterator[mtj.Client]:
    """A client on a fresh demo server over stdio, named ``name`` (server names show in the views)."""
    async with mtj.connect(demo_stdio_argv(*dialect, *server_args), name=name, **options) as client:
        yield client


@pytest.fixture
async def demo() -> AsyncIterator[mtj.Client]:
    async with demo_client("--poll-interval", "100") as client:
        yield client


class UpdateCounter:
    """Counts the ``update`` messages a widget sends through its comm (ipywidgets 8: ``comm.send``);
    ``sent`` keeps every message in order (``update`` and ``custom``)."""

    def __init__(self, widget: Any) -> None:
        self.messages: list[dict[str, Any]] = []
        self.sent: list[dict[str, Any]] = []
        comm = widget.comm
        send = comm.send

        def counting_send(data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
            if isinstance(data, dict) and data.get("method") == "update":
                self.messages.append(data)
            if isinstance(data, dict):
                self.sent.append(data)
            send(data=data, metadata=metadata, buffers=buffers)

        comm.send = counting_send

    def __len__(self) -> int:
        return len(self.messages)


@pytest.fixture
def count_updates() -> Any:
    return UpdateCounter
