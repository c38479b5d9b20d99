"""What the secrecy tests look through: everything the library shows, raises, logs or stores."""

from __future__ import annotations

import json
import logging
import os
import uuid
from pathlib import Path
from typing import Any

import pytest


def new_secret(kind: str = "secret") -> str:
    """A value found nowhere else (so finding it anywhere is a leak)."""
    return f"{kind}-{uuid.uuid4().hex}"


def index_bytes() -> bytes:
    """Every byte of this test's task index (the database, its WAL and shared-memory files)."""
    base = Path(os.environ["MTJ_INDEX"])
    return b"".join(p.read_bytes() for p in sorted(base.parent.glob(base.name + "*")) if p.is_file())


def log_texts(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Each captured record as a handler writes it (message, exception, stack), and the whole text."""
    formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
    return [formatter.format(record) for record in caplog.records] + [caplog.text]


def shown(*, client: Any = None, handle: Any = None, exc: BaseException | None = None) -> dict[str, str]:
    """What a person (or a saved notebook) can see of these, by where it shows."""
    seen: dict[str, str] = {}
    if exc is not None:
        seen["str(exc)"] = str(exc)
        seen["repr(exc)"] = repr(exc)
        seen["exc attributes"] = repr(vars(exc))
        seen["exc cause"] = repr(exc.__cause__) + str(exc.__cause__)
    if client is not None:
        seen["repr(client)"] = repr(client)
        seen["client.describe()"] = json.dumps(client.describe(), default=str)
        seen["client.name"] = client.name
        seen["client.target"] = client.target
        seen["client.logs"] = json.dumps(list(client.logs), default=str)
    if handle is not None:
        from mcp_tasks_jupyter.jupyter.widgets.state import TaskTraits, board_row

        seen["repr(handle)"] = repr(handle)
        seen["handle._repr_mimebundle_()"] = json.dumps(handle._repr_mimebundle_())
        seen["handle.status_message"] = str(handle.status_message)
        seen["handle.logs"] = json.dumps(list(handle.logs), default=str)
        seen["handle.progress"] = repr(handle.progress)
        seen["widget state"] = json.dumps(TaskTraits(handle).traits(), default=str)
        seen["board row"] = json.dumps(board_row(1, handle), default=str)
        if handle.done() and handle.exception() is not None:
            seen["handle.exception()"] = repr(handle.exception()) + str(handle.exception())
    return seen


def assert_hidden(
    secrets: list[str], seen: dict[str, str], caplog: pytest.LogCaptureFixture | None = None, *, index: bool = True
) -> None:
    """None of ``secrets`` appears in ``seen``, in the captured log records, or in the task index."""
    places = dict(seen)
    if caplog is not None:
        for n, text in enumerate(log_texts(caplog)):
            places[f"log record {n}"] = text
    leaks = [
        f"{secret!r} in {where}: {text[:300]!r}"
        for where, text in places.items()
        for secret in secrets
        if secret in text
    ]
    if index:
        data = index_bytes()
        leaks += [f"{secret!r} in the task index file" for secret in secrets if secret.encode() in data]
    assert not leaks, "\n".join(leaks)
