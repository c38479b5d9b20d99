"""Item 1 and 2 of the fault suite: a server that ends our session (HTTP 404), or goes away and comes back.

The spec (2025-11-25, basic/transports): a 404 for a request carrying ``Mcp-Session-Id`` means the session is
gone and the client MUST start a new one. A server that restarts refuses connections for a while.
"""

import asyncio

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.jupyter.widgets.state import board_row
from mcp_tasks_jupyter.session import reconnection
from mcp_tasks_jupyter.views.text import summary_line
from mcp_tasks_jupyter.views.view import view_of

from .conftest import stdio_argv
from .server import Error, http_fault_server

pytestmark = pytest.mark.anyio


async def until(predicate, timeout: float = 10.0, step: float = 0.02) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(step)


def initializes(server) -> int:
    return len(server.brain.requests("initialize"))


async def test_a_lost_session_is_started_again_once_and_polling_carries_on():
    async with http_fault_server() as server, mtj.connect(server.url) as client:
        handles = [await client.start_task("job") for _ in range(5)]
        await until(lambda: all(server.brain.requests("tasks/get")))
        first_session = client.transport.session_id
        server.forget_sessions()
        await until(lambda: client.session.generation == 1)
        server.brain.finish(handles[0].task_id)
        for handle in handles[1:]:
            server.brain.finish(handle.task_id, "later")
        results = await asyncio.wait_for(asyncio.gather(*handles), 10)
        assert [r.text for r in results] == ["done"] + ["later"] * 4
        assert initializes(server) == 2  # one new session for the five tasks that noticed the loss
        assert client.transport.session_id not in (None, first_session)
        await until(
            lambda: any(
                m == "GET" and h.get("mcp-session-id") == client.transport.session_id for m, h in server.http
            )
        )  # the standalone stream is open again
        assert client.describe()["sessions_started"] == 2


async def test_a_lost_session_said_with_json_rpc_errors_is_renewed_and_nothing_goes_out_sessionless():
    # Servers built on the SDKs (and the demo) answer an unknown session with 404 and a JSON-RPC error in
    # the body, and a request without a session with 400 and one: the 404 is a lost session to renew (not
    # the poll's own failure), and while the new session starts no poll may go out without its id.
    async with http_fault_server() as server, mtj.connect(server.url) as client:
        server.json_session_errors = True
        initialize = server.brain._answer

        async def slow_initialize(message: dict) -> dict:
            await asyncio.sleep(0.5)  # many polls fall inside the renewal
            return await initialize("initialize", message.get("params") or {})

        handles = [await client.start_task("job") for _ in range(8)]
        await until(lambda: len(server.brain.requests("tasks/get")) >= 8)
        server.brain.script["initialize"] = slow_initialize
        before = sessionless(server)  # the first connection's probe and initialize
        server.forget_sessions()
        await until(lambda: client.session.generation == 1)
        for handle in handles:
            server.brain.finish(handle.task_id)
        results = await asyncio.wait_for(asyncio.gather(*handles), 10)
        assert [r.text for r in results] == ["done"] * 8
        assert sessionless(server) - before == 1 and initializes(server) == 2  # the new initialize alone


def sessionless(server) -> int:
    return sum(1 for method, headers in server.http if method == "POST" and "mcp-session-id" not in headers)


async def test_a_task_the_new_session_does_not_know_ends_lost_saying_why():
    async with http_fault_server() as server, mtj.connect(server.url) as client:
        handle = await client.start_task("job")
        await until(lambda: server.brain.requests("tasks/get"))
        server.forget_sessions()
        server.brain.forget_tasks()
        with pytest.raises(mtj.TaskNotFound, match="no longer knows this task: a new session was started"):
            await asyncio.wait_for(handle, 10)
        assert handle.status == "lost"
        assert initializes(server) == 2


async def test_a_server_that_restarts_is_reconnected_and_polling_resumes():
    async with http_fault_server() as server, mtj.connect(server.url, reconnect_for=30) as client:
        handle = await client.start_task("job")
        await until(lambda: server.brain.requests("tasks/get"))
        changes = []
        handle.on_change(lambda h: changes.append(h.reconnecting))
        await server.stop()
        await until(lambda: handle.reconnecting)
        assert client.describe()["reconnecting"] is True
        assert "working, reconnecting…" in summary_line(
            view_of(handle)
        )  # the widget, board and sidebar say so too
        assert board_row(1, handle)["message"] == "reconnecting to the server…"
        polls_while_down = len(server.brain.requests("tasks/get"))
        await asyncio.sleep(0.5)
        await server.start()  # the same port; it kept its tasks but not its sessions
        await until(lambda: not client.session.reconnecting)
        server.brain.finish(handle.task_id, "after the restart")
        assert (await asyncio.wait_for(handle, 10)).text == "after the restart"
        assert changes[:1] == [True] and False in changes  # the view said "reconnecting", then not
        assert len(server.brain.requests("tasks/get")) > polls_while_down


async def test_a_server_that_does_not_come_back_loses_its_tasks_after_the_window():
    async with http_fault_server() as server, mtj.connect(server.url, reconnect_for=1.0) as client:
        handle = await client.start_task("job")
        await until(lambda: server.brain.requests("tasks/get"))
        await server.stop()
        with pytest.raises(mtj.TaskLost, match=r"did not come back within 1 s \(cannot connect"):
            await asyncio.wait_for(handle, 15)
        assert handle.status == "lost"


async def test_many_tasks_wait_for_one_reconnection_instead_of_each_retrying(monkeypatch):
    monkeypatch.setattr(reconnection, "RECONNECT_MAX_DELAY_S", 0.25)  # probes keep coming while it is down
    async with http_fault_server() as server, mtj.connect(server.url, reconnect_for=30) as client:
        client.max_poll_failures = 1  # a poller counting its own failures would give up at once
        handles = [await client.start_task("job") for _ in range(20)]
        await until(lambda: len(server.brain.requests("tasks/get")) >= 20)
        await server.stop()
        await until(lambda: client.session.reconnecting)
        await asyncio.sleep(1.0)  # several poll intervals (100 ms) and reconnection probes pass while it is down
        await server.start()
        await until(lambda: not client.session.reconnecting)
        assert not any(h.done() for h in handles)
        assert initializes(server) == 2  # one probe found it back, without our session: one renewal
        for handle in handles:
            server.brain.finish(handle.task_id)
        await asyncio.wait_for(asyncio.gather(*handles), 10)


async def test_a_stdio_server_that_exits_ends_its_tasks_lost_at_once():
    async with mtj.connect(stdio_argv("exit_mid_task")) as client:
        handle = await client.start_task("job")
        with pytest.raises(mtj.TaskLost, match=r"(?s)code 3.*fatal: could not use credential") as info:
            await asyncio.wait_for(handle, 10)
        assert handle.status == "lost" and "lost contact" in str(info.value)


async def test_a_finished_task_whose_result_the_server_no_longer_has_ends_lost_not_failed():
    # The soak found it: a task seen completed, then the server restarted before tasks/result, which
    # answers "Task not found". The server lost the task: the handle says so; it did not fail.
    async with http_fault_server() as server, mtj.connect(server.url) as client:
        handle = await client.start_task("job")
        await until(lambda: server.brain.requests("tasks/get"))
        server.brain.script["tasks/result"] = lambda message: Error(-32602, "Task not found: " + handle.task_id)
        server.brain.finish(handle.task_id)
        with pytest.raises(mtj.TaskNotFound):
            await asyncio.wait_for(handle, 10)
        assert handle.status == "lost"
