"""Bad input over a real loopback socket: each fault gives a clear MCPError naming the server."""

import asyncio

import pytest

import mcp_tasks_jupyter as mtj

from .fault_server import free_port, serve_faults

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]


async def test_unreachable_url_names_the_url():
    url = f"http://127.0.0.1:{free_port()}/mcp"
    with pytest.raises(mtj.ConnectionFailed, match=f"cannot connect to {url}"):
        await mtj.connect(url, timeout=5)


async def test_malformed_json_answer():
    async with serve_faults() as (base, _), mtj.connect(f"{base}/malformed") as client:
        with pytest.raises(mtj.InvalidMessage, match=r"fault-server.*unreadable answer to tasks/get"):
            await client.session.request("tasks/get", {"taskId": "x"})


async def test_nonsense_answers_are_refused_with_the_reason():
    async with serve_faults() as (base, _), mtj.connect(f"{base}/nonsense") as client:
        with pytest.raises(mtj.InvalidMessage, match=r"tools/list: invalid tools/list result: tools"):
            await client.list_tools()
        client._tools = {t.name: t for t in [mtj.Tool(name="job", execution={"taskSupport": "optional"})]}
        with pytest.raises(mtj.InvalidMessage, match=r"CreateTaskResult\.task"):
            await client.start_task("job")
        with pytest.raises(mtj.InvalidMessage, match="tasks/get result"):
            await client.dialect.get("t")


@pytest.mark.parametrize("code", [401, 403, 500, 503])
async def test_http_error_status(code):
    # (A 401/403 to the server/discover probe would fail the connect: tests/faults/test_auth_refused.py.)
    legacy = {"protocol_version": "2025-11-25"} if code in (401, 403) else {}
    async with serve_faults() as (base, _), mtj.connect(f"{base}/status?code={code}", **legacy) as client:
        with pytest.raises(mtj.HTTPStatusError, match=f"HTTP {code}.*tasks/get: server says {code}") as info:
            await client.session.request("tasks/get", {"taskId": "x"})
        assert info.value.status_code == code and "fault-server" in str(info.value)
        assert isinstance(info.value, mtj.AuthenticationFailed) == (code in (401, 403))


async def test_wrong_content_type():
    async with serve_faults() as (base, _), mtj.connect(f"{base}/wrongtype") as client:
        with pytest.raises(mtj.InvalidMessage, match="content type 'text/html'"):
            await client.session.request("tasks/get", {"taskId": "x"})


async def test_sse_cut_without_event_id_fails_the_request_not_hangs():
    async with serve_faults() as (base, _), mtj.connect(f"{base}/cut") as client:
        with pytest.raises(mtj.ConnectionFailed, match="SSE stream closed before the answer"):
            await asyncio.wait_for(client.session.request("tasks/get", {"taskId": "x"}), 5)


async def test_sse_cut_with_event_id_is_resumed_with_last_event_id():
    async with serve_faults() as (base, state), mtj.connect(f"{base}/resume") as client:
        result = await asyncio.wait_for(client.call_tool("job"), 5)
        assert result.text == "resumed"
        gets = [h for (m, mode, h) in state.requests if m == "GET" and "last-event-id" in h]
        assert gets and gets[-1]["last-event-id"].startswith("e")
        assert gets[-1]["mcp-session-id"] == "s1" and gets[-1]["mcp-protocol-version"] == "2025-11-25"


async def test_silent_server_times_out_and_withdraws_the_request():
    async with serve_faults() as (base, state), mtj.connect(f"{base}/silent") as client:
        client.session.request_timeout = 0.5
        with pytest.raises(mtj.RequestTimeout, match=r"tools/list: no answer within 0\.5 s"):
            await client.list_tools()
        await asyncio.wait_for(state.cancelled.wait(), 10)  # a hang guard: the withdrawal must come
    [asked] = [m for m in state.messages if m.get("method") == "tools/list"]
    withdrawn = [m for m in state.messages if m.get("method") == "notifications/cancelled"]
    assert [m["params"]["requestId"] for m in withdrawn] == [asked["id"]]  # that request, once


async def test_forgotten_session_is_session_expired():
    async with serve_faults() as (base, _), mtj.connect(f"{base}/expire") as client:
        with pytest.raises(mtj.SessionExpired, match="ended the session"):
            await client.list_tools()


async def test_user_headers_go_on_every_request_and_delete_ends_the_session():
    async with (
        serve_faults() as (base, state),
        mtj.connect(f"{base}/status", headers={"Authorization": "Bearer sekrit"}),
    ):
        pass
    methods = [m for (m, _mode, _h) in state.requests]
    assert methods[-1] == "DELETE"
    assert all(h.get("authorization") == "Bearer sekrit" for (_m, _mode, h) in state.requests)
