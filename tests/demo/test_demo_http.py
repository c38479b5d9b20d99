"""The demo server over Streamable HTTP on a real loopback socket (httpx, SSE parsed by hand)."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from demo_harness import RELATED, HttpPeer, http_server

pytestmark = pytest.mark.anyio


def is_status(task_id: str, status: str):
    return lambda m: (
        m.get("method") == "notifications/tasks/status"
        and m["params"]["taskId"] == task_id
        and m["params"]["status"] == status
    )


async def test_transport_errors_and_session_lifecycle() -> None:
    async with http_server() as server, httpx.AsyncClient() as client:
        peer = HttpPeer(client, server.url)
        ping = peer.message("ping")

        # before initialize: no session
        response = await peer.post(ping)
        assert response.status_code == 400 and response.json()["error"]["code"] == -32600
        response = await peer.post(ping, headers=peer.headers(**{"Mcp-Session-Id": "made-up"}))
        assert response.status_code == 404

        init = await peer.initialize()
        assert init["protocolVersion"] == "2025-11-25" and "tasks" in init["capabilities"]
        assert len(peer.session_id) >= 20 and peer.session_id.isascii()
        assert (await peer.result("ping")) == {}

        response = await peer.post(ping, headers=peer.headers(Accept="application/json"))
        assert response.status_code == 406
        response = await peer.post(ping, headers=peer.headers(**{"Content-Type": "text/plain"}))
        assert response.status_code == 415
        response = await client.post(server.url, content=b"{not json", headers=peer.headers())
        assert response.status_code == 400 and response.json()["error"]["code"] == -32700
        response = await peer.post(ping, headers=peer.headers(**{"MCP-Protocol-Version": "1999-01-01"}))
        assert response.status_code == 400
        response = await peer.post(ping, headers=peer.headers(Origin="http://evil.example"))
        assert response.status_code == 403
        response = await peer.post(ping, headers=peer.headers(Origin="http://localhost:8888"))
        assert response.status_code == 200
        response = await peer.post({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}})
        assert response.status_code == 202 and response.content == b""
        response = await peer.post({"jsonrpc": "2.0", "id": 12345, "result": {}})  # a response nobody asked for
        assert response.status_code == 202 and response.content == b""
        response = await client.get(
            server.url, headers={"Accept": "application/json", "Mcp-Session-Id": peer.session_id}
        )
        assert response.status_code == 406

        # one standalone stream per session; DELETE closes it and ends the session
        async with peer.stream_get() as stream:
            first = await stream.next()
            assert first is not None and first.retry == 1000
            async with peer.stream_get(expect=409):
                pass
            response = await client.delete(server.url, headers={"Mcp-Session-Id": peer.session_id})
            assert response.status_code == 200
            assert await stream.rest(timeout=5) == []
        assert (await peer.post(ping)).status_code == 404
        response = await client.delete(server.url, headers={"Mcp-Session-Id": peer.session_id})
        assert response.status_code == 404
    assert server.proc.returncode == 0  # SIGTERM: graceful exit


async def test_task_on_the_get_stream_and_last_event_id_replay() -> None:
    async with http_server() as server, httpx.AsyncClient() as client:
        peer = HttpPeer(client, server.url)
        await peer.initialize()
        async with peer.stream_get() as stream:
            await stream.next()  # retry
            task = await peer.call_task("slow_compute", {"seconds": 0.3, "steps": 3}, ttl=30_000)
            seen = await stream.until(is_status(task["taskId"], "completed"))
        ids = [event.id for event, _ in seen]
        assert all(event_id.startswith("get-") for event_id in ids)
        numbers = [int(event_id.split("-")[1]) for event_id in ids]
        assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
        statuses = [m["params"]["statusMessage"] for _, m in seen if m["method"] == "notifications/tasks/status"]
        assert statuses[-1] == "job: done in 3 steps, value=14"
        assert any(m["method"] == "notifications/message" for _, m in seen)

        # events made while no stream is connected are kept too
        second = await peer.call_task("slow_compute", {"seconds": 0.1, "steps": 1})
        await wait_for_status(peer, second["taskId"])

        async with peer.stream_get(last_event_id=ids[1]) as resumed:
            replay = await resumed.until(is_status(second["taskId"], "completed"))
        assert [event.id for event, _ in replay][: len(ids) - 2] == ids[2:]
        assert [m for _, m in replay][: len(ids) - 2] == [m for _, m in seen][2:]

        async with peer.stream_get(last_event_id="nonsense-3", expect=400):
            pass


async def wait_for_status(peer: HttpPeer, task_id: str, status: str = "completed", timeout: float = 10) -> None:
    """Poll tasks/get until the task has ``status``."""

    async def poll() -> None:
        while (await peer.result("tasks/get", {"taskId": task_id}))["status"] != status:
            await asyncio.sleep(0.05)

    await asyncio.wait_for(poll(), timeout)


async def test_tasks_result_stream_carries_the_elicitation_then_the_result() -> None:
    async with http_server() as server, httpx.AsyncClient() as client:
        peer = HttpPeer(client, server.url)
        await peer.initialize(capabilities={"elicitation": {}})
        task = await peer.call_task("research", {"topic": "Lisp", "ambiguous": True, "stage_seconds": 0.05})
        task_id = task["taskId"]
        async with peer.stream_post(peer.message("tasks/result", {"taskId": task_id})) as stream:
            priming = await stream.next()
            assert priming is not None and priming.id and priming.data == "" and priming.retry == 1000
            # the task's notifications come on this stream too; the question among them
            ask = (await stream.until(lambda m: m.get("method") == "elicitation/create"))[-1][1]
            assert ask["id"] == 0
            assert ask["params"]["_meta"][RELATED] == {"taskId": task_id}
            assert (await peer.result("tasks/get", {"taskId": task_id}))["status"] == "input_required"
            answer = await peer.respond(
                ask["id"], {"action": "accept", "content": {"interpretation": "Lisp (economics)", "depth": 1}}
            )
            assert answer.status_code == 202 and answer.content == b""
            seen = await stream.until(lambda m: "result" in m or "error" in m)
            final = seen[-1][1]
            assert await stream.rest() == []  # the stream ends after the response
        assert "Lisp (economics)" in final["result"]["content"][0]["text"]
        assert final["result"]["structuredContent"]["depth"] == 1
        assert final["result"]["_meta"][RELATED] == {"taskId": task_id}
        assert all(e.id.split("-")[0] == priming.id.split("-")[0] for e, _ in seen)


async def test_elicitation_goes_to_the_result_stream_even_with_a_get_stream_open_and_decline_fails() -> None:
    async with http_server() as server, httpx.AsyncClient() as client:
        peer = HttpPeer(client, server.url)
        await peer.initialize(capabilities={"elicitation": {}})
        async with peer.stream_get() as standalone:
            task = await peer.call_task("research", {"topic": "Cobol", "ambiguous": True, "stage_seconds": 0.2})
            async with peer.stream_post(peer.message("tasks/result", {"taskId": task["taskId"]})) as stream:
                ask = (await stream.until(lambda m: m.get("method") == "elicitation/create"))[-1][1]
                assert (await peer.respond(ask["id"], {"action": "decline"})).status_code == 202
                final = (await stream.until(lambda m: "result" in m))[-1][1]
            assert final["result"]["isError"] is True
            assert final["result"]["content"][0]["text"].startswith("The user declined")
            # with the result stream closed, the task's messages go to the standalone stream again
            marker = await peer.call_task("slow_compute", {"seconds": 0, "steps": 1})
            got_there = await standalone.until(is_status(marker["taskId"], "completed"))
            assert any(m["params"].get("taskId") == task["taskId"] for _, m in got_there)  # "searching" came here
            assert not any(m.get("method") == "elicitation/create" for _, m in got_there)


async def test_queued_elicitation_is_delivered_once_when_a_stream_opens() -> None:
    async with http_server() as server, httpx.AsyncClient() as client:
        peer = HttpPeer(client, server.url)
        await peer.initialize(capabilities={"elicitation": {}})
        task = await peer.call_task("research", {"topic": "Perl", "ambiguous": True, "stage_seconds": 0.05})
        task_id = task["taskId"]
        await wait_for_status(peer, task_id, "input_required")
        async with peer.stream_get() as standalone:
            seen = await standalone.until(lambda m: m.get("method") == "elicitation/create")
            ask = seen[-1][1]
            assert ask["params"]["_meta"][RELATED] == {"taskId": task_id}
            async with peer.stream_post(peer.message("tasks/result", {"taskId": task_id})) as stream:
                assert (
                    await peer.respond(
                        ask["id"], {"action": "accept", "content": {"interpretation": "Perl (history)"}}
                    )
                ).status_code == 202
                on_result_stream = await stream.until(lambda m: "result" in m)
            assert not any(m.get("method") == "elicitation/create" for _, m in on_result_stream)
            assert "Perl (history)" in on_result_stream[-1][1]["result"]["content"][0]["text"]


async def test_a_cut_tasks_result_stream_resumes_with_last_event_id() -> None:
    async with http_server() as server, httpx.AsyncClient() as client:
        peer = HttpPeer(client, server.url)
        await peer.initialize()
        task = await peer.call_task("slow_compute", {"seconds": 0.4, "steps": 2})
        async with peer.stream_post(peer.message("tasks/result", {"taskId": task["taskId"]})) as stream:
            priming = await stream.next()
        assert priming is not None and priming.id
        await wait_for_status(peer, task["taskId"])
        async with peer.stream_get(last_event_id=priming.id) as resumed:
            events = await resumed.rest()
        messages = [event.message for event in events if event.data]
        assert messages[-1]["result"]["structuredContent"]["value"] == 5


async def test_tasks_outlive_their_session() -> None:
    async with http_server() as server, httpx.AsyncClient() as client:
        first = HttpPeer(client, server.url)
        await first.initialize()
        task = await first.call_task("slow_compute", {"seconds": 0.3, "steps": 2, "label": "kept"})
        assert (await client.delete(server.url, headers={"Mcp-Session-Id": first.session_id})).status_code == 200

        second = HttpPeer(client, server.url)
        await second.initialize()
        assert second.session_id != first.session_id
        assert (await second.result("tasks/get", {"taskId": task["taskId"]}))["taskId"] == task["taskId"]
        async with second.stream_post(second.message("tasks/result", {"taskId": task["taskId"]})) as stream:
            final = (await stream.until(lambda m: "result" in m))[-1][1]
        assert final["result"]["content"][0]["text"] == "kept: done in 2 steps, value=5"
        listed = await second.result("tasks/list")
        assert [t["taskId"] for t in listed["tasks"]] == [task["taskId"]]


async def test_inline_and_error_calls_over_http() -> None:
    async with http_server() as server, httpx.AsyncClient() as client:
        peer = HttpPeer(client, server.url)
        await peer.initialize()
        result = await peer.result("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
        assert result["content"] == [{"type": "text", "text": "hi"}]
        response = await peer.request("tools/call", {"name": "research", "arguments": {"topic": "x"}})
        assert response["error"]["code"] == -32601
        task = await peer.call_task("failing_job", {"seconds": 0, "mode": "protocol_error"})
        async with peer.stream_post(peer.message("tasks/result", {"taskId": task["taskId"]})) as stream:
            final = (await stream.until(lambda m: "error" in m))[-1][1]
        assert final["error"] == {
            "code": -32603,
            "message": "The job failed on purpose",
            "data": {"reason": "demo"},
        }


async def test_a_reconnected_client_gets_the_question_asked_again() -> None:
    async with http_server() as server, httpx.AsyncClient() as client:
        lost = HttpPeer(client, server.url)
        await lost.initialize(capabilities={"elicitation": {}})
        task = await lost.call_task("research", {"topic": "Forth", "ambiguous": True, "stage_seconds": 0.05})
        async with lost.stream_get() as stream:  # the first client sees the question, then "dies"
            first_ask = (await stream.until(lambda m: m.get("method") == "elicitation/create"))[-1][1]

        fresh = HttpPeer(client, server.url)  # e.g. after a kernel restart: a new session
        await fresh.initialize(capabilities={"elicitation": {}})
        assert (await fresh.result("tasks/get", {"taskId": task["taskId"]}))["status"] == "input_required"
        async with fresh.stream_post(fresh.message("tasks/result", {"taskId": task["taskId"]})) as stream:
            ask = (await stream.until(lambda m: m.get("method") == "elicitation/create"))[-1][1]
            assert ask["id"] == 0 and ask["params"] == first_ask["params"]
            late = await lost.respond(
                first_ask["id"], {"action": "accept", "content": {"interpretation": "Forth (history)"}}
            )
            assert late.status_code == 202  # accepted, but that ask was withdrawn: ignored
            await asyncio.sleep(0.1)
            assert (await fresh.result("tasks/get", {"taskId": task["taskId"]}))["status"] == "input_required"
            await fresh.respond(
                ask["id"], {"action": "accept", "content": {"interpretation": "Forth (economics)"}}
            )
            final = (await stream.until(lambda m: "result" in m))[-1][1]
        assert final["result"]["structuredContent"]["interpretation"] == "Forth (economics)"


async def test_tasks_result_for_an_unknown_task_answers_on_its_stream() -> None:
    async with http_server() as server, httpx.AsyncClient() as client:
        peer = HttpPeer(client, server.url)
        await peer.initialize()
        async with peer.stream_post(peer.message("tasks/result", {"taskId": "missing"})) as stream:
            final = (await stream.until(lambda m: "error" in m))[-1][1]
            assert await stream.rest() == []
        assert final["error"] == {"code": -32602, "message": "Task not found: missing"}
        assert (await peer.request("tasks/get", {"taskId": "missing"}))["error"]["code"] == -32602
