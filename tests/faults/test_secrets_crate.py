"""No secret in an RO-Crate (issue 34): a bearer token, a URL's password and a secret argument, while the
server echoes the token in a task's status message, its result and its failure. The crate is written here
(where the token is registered) and by ``mcp-tasks export --ro-crate`` in another process (where nothing is
registered, so only what the index keeps can reach it), as a folder and as a zip."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import urllib.parse
import zipfile
from pathlib import Path

import pytest

import mcp_tasks_jupyter as mtj
from tests.support.processes import python_env

from .secrets_support import assert_hidden, new_secret
from .server import TOOLS, http_fault_server

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]


def crate_bytes(path: Path) -> dict[str, str]:
    """Every file of a crate (a folder or a zip), by name, as text."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            return {f"{path.name}:{n}": archive.read(n).decode("utf-8", "replace") for n in archive.namelist()}
    return {str(p.relative_to(path)): p.read_text("utf-8", "replace") for p in path.rglob("*") if p.is_file()}


@pytest.mark.timeout(60)
async def test_a_crate_holds_no_secret(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    token, argument, password = new_secret("token"), new_secret("key"), new_secret("pw")
    async with http_fault_server() as server:
        brain = server.brain
        signed = {"type": "object", "properties": {"seconds": {"type": "number"}, "api_key": {"type": "string"}}}
        tools = [{**tool, "inputSchema": signed} if tool["name"] == "job" else tool for tool in TOOLS]
        brain.script["tools/list"] = lambda _message: {"tools": tools}

        def echo(message: dict) -> None:
            task = brain.tasks[message["params"]["taskId"]]
            task.status_message = task.status_message or f"signed in with {token}"
            return None

        brain.script["tasks/get"] = echo
        url = server.url.replace("http://", f"http://alice:{urllib.parse.quote(password)}@")
        headers = {"Authorization": f"Bearer {token}"}
        async with mtj.connect(url, headers=headers, index=os.environ["MTJ_INDEX"]) as client:
            done = await client.start_task("job", {"api_key": argument})
            failed = await client.start_task("job", {"seconds": 60})
            await asyncio.sleep(0.3)  # polled: the status message echoes the token
            brain.finish(done.task_id, text=f"done, signed with {token}")
            brain.tasks[failed.task_id].status_message = f"gave up: {token} was refused"
            brain.finish(failed.task_id, text=f"refused {token}", status="failed")
            await asyncio.wait_for(mtj.gather(done, failed, return_exceptions=True), 20)
            assert done.status == "completed" and failed.status == "error"
            here = [tmp_path / "here.crate", tmp_path / "here.crate.zip"]
            for path in here:
                assert mtj.export([done, failed], path, license="CC0-1.0") == 2
    elsewhere = tmp_path / "elsewhere.crate.zip"
    env = python_env()
    command = [
        sys.executable,
        "-m",
        "mcp_tasks_jupyter",
        "export",
        "--ro-crate",
        str(elsewhere),
        "--license",
        "CC0-1.0",
    ]
    exported = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert exported.returncode == 0, exported.stderr
    seen = {name: text for path in [*here, elsewhere] for name, text in crate_bytes(path).items()}
    assert any("<redacted>" in text for text in seen.values())  # the argument is there, its value is not
    assert any("signed in with ***" in text for text in seen.values())  # the echo is there, the token is not
    secrets = [token, argument, password, urllib.parse.quote(password), f"Bearer {token}"]
    assert_hidden(secrets, {**seen, "the command's output": exported.stdout + exported.stderr}, caplog)
