"""Signing in from a notebook, in a real kernel against the OAuth-protected demo server: ``%mcp_connect``
shows "Sign in to NAME" in the cell, the "person" opens it (a browser would: the demo approves at once
and redirects to the kernel's loopback listener), the cell goes on, the link becomes one line; a task
runs across token expiries; ``%mcp_logout`` forgets the tokens. No token appears in any output, the
task index or any file but the token store.
"""

from __future__ import annotations

import json
import queue
import re
import time
from pathlib import Path

import httpx
import pytest

from tests.jupyter.kernel_harness import CELL_TIMEOUT, CellRun, running_kernel
from tests.support.auth_demo import start_auth_demo

pytestmark = pytest.mark.timeout(180)


def follow(url: str) -> None:
    """What the person's browser does with the sign-in link."""
    with httpx.Client(timeout=10, follow_redirects=False) as http:
        answer = http.get(url)
        assert answer.status_code in (302, 303), answer.text
        http.get(answer.headers["location"])


def kept_tokens(store: Path) -> list[str]:
    values = []
    for path in store.glob("*.json"):
        tokens = json.loads(path.read_text())["tokens"] or {}
        values += [v for k, v in tokens.items() if k in ("access_token", "refresh_token") and v]
    return values


def test_a_notebook_signs_in_runs_a_task_across_expiries_and_signs_out(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    store = home / "tokens"
    with start_auth_demo(token_ttl=2) as demo, running_kernel(home) as kernel:
        kernel.run("%load_ext mcp_tasks_jupyter")
        msg_id = kernel.submit(f"%mcp_connect secure {demo.url}")
        seen: list[tuple[str, dict]] = []
        link = None
        deadline = time.monotonic() + CELL_TIMEOUT
        while link is None and time.monotonic() < deadline:
            try:
                message = kernel.client.get_iopub_msg(timeout=1)
            except queue.Empty:
                continue
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            seen.append((message["msg_type"], message["content"]))
            data = message["content"].get("data", {})
            if message["msg_type"] == "display_data" and "Sign in to secure" in data.get("text/html", ""):
                link = re.search(r"open (\S+)$", data["text/plain"]).group(1)  # type: ignore[union-attr]
        assert link is not None, f"no sign-in link was shown: {seen}"
        assert 'target="_blank"' in next(c for t, c in seen if t == "display_data")["data"]["text/html"]
        follow(link)
        connected = kernel.collect(msg_id, "%mcp_connect")
        connected.messages[:0] = seen
        connected.check()
        assert "connected secure" in connected.stdout
        updates = [c for t, c in connected.messages if t == "update_display_data"]
        assert updates and "signed in to secure" in updates[-1]["data"]["text/plain"]
        first = kept_tokens(store)
        assert first

        task = kernel.run("%mcp_task --wait -o result secure:slow_compute seconds=5", timeout=60)
        value = kernel.value("(result.is_error, result.text[:40])")
        assert value[0] is False, value
        last = kept_tokens(store)
        assert not set(first) & set(last)  # refreshed while the task ran

        servers = kernel.run("%mcp_servers")
        logout = kernel.run("%mcp_logout secure")
        assert "signed out of secure" in logout.stdout
        assert kept_tokens(store) == []
        runs: list[CellRun] = [connected, task, servers, logout]

    shown = json.dumps([run.messages for run in runs])
    files = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file() and store not in p.parents)
    for token in first + last:
        assert token not in shown
        assert token.encode() not in files
