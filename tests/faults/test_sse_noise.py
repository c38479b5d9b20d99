"""Noise on an event stream is ignored while the stream goes on (issue 30 item 1, a regression).

An SSE event that is no JSON-RPC message for us and names no request (a comment, a line without a
colon, ``data: this is not json``, an array, an answer to an id never sent, invalid UTF-8, an empty
``data:``) is reported as noise; the answer after it still completes the request. Only when the stream
ends without the answer does the request fail, at once and naming the unreadable event. An unreadable
event that names its request (``1e400``) still fails it at once: ``test_undecodable_answers.py``.

The ``wait_for`` guards are hang guards, well under the 30 s request timeout; nothing is timed.
"""

import asyncio
import json

import pytest

import mcp_tasks_jupyter as mtj

from .server import Raw, http_fault_server
from .test_fault_classes import until

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]
GUARD_S = 8.0

NOISE: dict[str, bytes] = {
    "comment": b": keep-alive, nothing to see\n\n",
    "line without a colon": b"this line has no colon\n\n",
    "not json": b"data: this is not json\n\n",
    "json array": b"data: [1, 2, 3]\n\n",
    "unknown id": b'data: {"jsonrpc": "2.0", "id": 987654, "result": {}}\n\n',
    "invalid utf-8": b"data: \xff\xfe\xfd not text\n\n",
    "empty data": b"data:\n\n",
}
ALL_NOISE = b"".join(NOISE.values())


def event(message: dict) -> bytes:
    return b"data: " + json.dumps(message).encode() + b"\n\n"


def noisy_answers(server, noise: bytes):
    """Answer ``tasks/get`` on an SSE stream that carries ``noise`` before the real answer."""
    brain = server.brain

    def answer(message: dict) -> Raw:
        task = brain._task(message["params"]).wire(brain.poll_interval_ms, brain.ttl_ms)
        real = {"jsonrpc": "2.0", "id": message["id"], "result": task}
        return Raw(200, noise + event(real), "text/event-stream")

    return answer


@pytest.mark.parametrize("noise", list(NOISE), ids=list(NOISE))
async def test_noise_before_the_answer_on_the_posts_stream_is_ignored(noise):
    async with http_fault_server() as server, mtj.connect(server.url) as client:
        server.brain.script["tasks/get"] = noisy_answers(server, NOISE[noise])
        task = await client.start_task("job", {"seconds": 0.5})
        result = await task.wait(GUARD_S)
        assert result.text == "done"
        assert task.status == "completed"
        assert server.brain.requests("tasks/get"), "the task was polled"


async def test_all_the_noise_at_once_before_the_answer_is_ignored():
    async with http_fault_server() as server, mtj.connect(server.url) as client:
        server.brain.script["tasks/get"] = noisy_answers(server, ALL_NOISE)
        task = await client.start_task("job", {"seconds": 0.5})
        assert (await task.wait(GUARD_S)).text == "done"


async def test_a_stream_that_ends_with_only_noise_fails_its_request_at_once_naming_it():
    async with http_fault_server() as server, mtj.connect(server.url) as client:
        server.brain.script["tasks/get"] = lambda m: Raw(200, NOISE["not json"], "text/event-stream")
        with pytest.raises(mtj.InvalidMessage, match=r"ended without the answer.*this is not json"):
            await asyncio.wait_for(client.session.request("tasks/get", {"taskId": "t-1"}), GUARD_S)


async def test_noise_on_the_get_stream_is_ignored_and_what_follows_arrives():
    async with http_fault_server() as server, mtj.connect(server.url) as client:
        await until(lambda: client.session.transport.push_channel_open)
        logs: list = []
        client.lifecycle.logs = logs  # type: ignore[assignment]
        server.brain.push(ALL_NOISE)
        server.brain.push(
            {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "after"}}
        )
        await until(lambda: logs, GUARD_S)
        assert [entry["data"] for entry in logs] == ["after"]
        task = await client.start_task("job", {"seconds": 0.3})
        assert (await task.wait(GUARD_S)).text == "done"
        assert client.session.transport.push_channel_open, "noise did not close the stream"
