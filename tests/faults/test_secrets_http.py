"""Secrets given for an HTTP server (header values, URL userinfo) never show, even when the server
echoes them back: in an HTTP error body, a JSON-RPC error message, a task's status message, a log
notification or a progress message (the scripted fault server over loopback HTTP)."""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import urllib.parse

import pytest

import mcp_tasks_jupyter as mtj

from .secrets_support import assert_hidden, new_secret, shown
from .server import Error, Raw, closed_port, http_fault_server

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]


def _token_forms(token: str) -> list[str]:
    return [token, urllib.parse.quote(f"Bearer {token}")]


async def _connect(url: str, token: str) -> mtj.Client:
    return await mtj.connect(url, headers={"Authorization": f"Bearer {token}"}, index=os.environ["MTJ_INDEX"])


@pytest.mark.timeout(30)
async def test_a_500_body_echoing_the_bearer_token(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG)
    token = new_secret("token")
    async with http_fault_server() as server:
        server.brain.script["tasks/get"] = lambda m: Raw(
            500,
            f"upstream said: bad credentials Authorization: Bearer {token} "
            f"(or {urllib.parse.quote('Bearer ' + token)})",
            "text/plain",
        )
        client = await _connect(server.url, token)
        try:
            client.max_poll_failures = 1
            handle = await client.start_task("job")
            with pytest.raises(mtj.TaskLost) as lost:
                await handle
            assert "HTTP 500" in str(lost.value) and "bad credentials" in str(lost.value)
            assert server.http[-1][1]["authorization"] == f"Bearer {token}"  # it was sent, of course
            assert_hidden(_token_forms(token), shown(client=client, handle=handle, exc=lost.value), caplog)
            # The same answer to a plain request: an HTTPStatusError whose body keeps the rest.
            server.brain.script["tools/list"] = server.brain.script["tasks/get"]
            with pytest.raises(mtj.HTTPStatusError) as status:
                await client.list_tools(refresh=True)
            assert status.value.status_code == 500 and "upstream said" in status.value.body
            assert_hidden(_token_forms(token), shown(exc=status.value), caplog)
        finally:
            await client.aclose()


@pytest.mark.timeout(30)
async def test_a_json_rpc_error_message_echoing_the_token(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG)
    token = new_secret("token")
    async with http_fault_server() as server:
        server.brain.script["tasks/get"] = lambda m: Error(
            -32603, f"backend refused key {token}", data={"echo": {"Authorization": f"Bearer {token}"}}
        )
        client = await _connect(server.url, token)
        try:
            handle = await client.start_task("job")
            with pytest.raises(mtj.TaskFailed) as failed:
                await handle
            assert "backend refused key ***" in str(failed.value)
            assert_hidden([token], shown(client=client, handle=handle, exc=failed.value), caplog)
            # Asked directly: the ProtocolError keeps the code and the scrubbed message and data.
            with pytest.raises(mtj.ProtocolError) as refused:
                await client.session.request("tasks/get", {"taskId": handle.task_id})
            assert refused.value.code == -32603 and refused.value.error["data"]["echo"]["Authorization"] == "***"
            assert_hidden([token], shown(exc=refused.value), caplog)
        finally:
            await client.aclose()


@pytest.mark.timeout(30)
async def test_a_status_message_log_and_progress_echoing_the_token(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG)
    token = new_secret("token")
    async with http_fault_server() as server:
        brain = server.brain

        def echo(message: dict) -> None:
            task = brain.tasks[message["params"]["taskId"]]
            if task.status_message is None:
                task.status_message = f"signed in with {token}"
                related = {"_meta": {"io.modelcontextprotocol/related-task": {"taskId": task.task_id}}}
                brain.push(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/message",
                        "params": {
                            "level": "info",
                            "logger": "auth",
                            "data": {"token": token, "note": f"using {token}"},
                            **related,
                        },
                    }
                )
                brain.push(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/message",
                        "params": {"level": "info", "data": f"no task, still {token}"},
                    }
                )
            return None  # the normal answer, with the status message set above

        brain.script["tasks/get"] = echo
        client = await _connect(server.url, token)
        try:
            handle = await client.start_task("job")
            brain.push(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {
                        "progressToken": handle.progress_token,
                        "progress": 1,
                        "total": 2,
                        "message": f"half way with {token}",
                    },
                }
            )
            async with asyncio.timeout(10):
                while not (handle.logs and client.logs and handle.progress and handle.status_message):
                    await asyncio.sleep(0.02)
            assert handle.status_message == "signed in with ***"
            assert handle.progress.message == "half way with ***"
            assert handle.logs[0]["data"] == {"token": "***", "note": "using ***"}
            assert client.logs[0]["data"] == "no task, still ***"
            assert_hidden([token], shown(client=client, handle=handle), caplog)
            brain.tasks[handle.task_id].status_message = f"gave up: {token} was refused"
            brain.finish(handle.task_id, text="refused", status="failed")
            try:
                await handle
            except mtj.TaskFailed:
                pass
            assert (
                handle.status == "error"
                and handle.server_status == "failed"
                and handle.status_message == "gave up: *** was refused"
            )
            assert_hidden([token], shown(client=client, handle=handle, exc=handle.exception()), caplog)
        finally:
            await client.aclose()


@pytest.mark.timeout(30)
async def test_url_userinfo_is_never_shown_but_still_authenticates(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG)
    password = new_secret("pw") + "@:/"  # characters that must be percent-encoded in a URL
    quoted = urllib.parse.quote(password, safe="")
    async with http_fault_server() as server:
        url = server.url.replace("http://", f"http://alice:{quoted}@")
        client = await mtj.connect(url, index=os.environ["MTJ_INDEX"])
        try:
            handle = await client.start_task("job", {"seconds": 0.1})
            assert (await handle).text == "done"
            expected = "Basic " + base64.b64encode(f"alice:{password}".encode()).decode()
            assert server.http[-1][1]["authorization"] == expected  # the real URL kept working
            assert client.describe()["target"] == server.url  # labels: no userinfo at all
            assert client.target == server.url and server.url in client.name
            assert_hidden([password, quoted, expected], shown(client=client, handle=handle), caplog)
            # What the HTTP engine logs is scrubbed too (aiohttp logs no request; say one it could).
            logging.getLogger("aiohttp.client").warning("Unclosed connection to %s", url)
            assert_hidden([password, quoted, expected], {}, caplog)
            assert any("Unclosed connection to" in r.getMessage() for r in caplog.records)
        finally:
            await client.aclose()
    # A URL that cannot be reached: the error names it without the password.
    port = closed_port()
    with pytest.raises(mtj.ConnectionFailed) as refused:
        await mtj.connect(f"http://alice:{quoted}@127.0.0.1:{port}/mcp", timeout=5)
    assert f"cannot connect to http://127.0.0.1:{port}/mcp" in str(refused.value)
    assert_hidden([password, quoted], shown(exc=refused.value), caplog)
