"""Answers that are not what was asked for: each is an InvalidMessage naming the server, the method and
what came (content type, first bytes, escaped), and no body is read past its bound."""

import asyncio
import json

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.protocol import jsonrpc
from mcp_tasks_jupyter.transport.http_answers import MAX_JSON_BYTES

from .http_bytes_server import bytes_server, http_transport
from .server import Raw, http_fault_server

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]

MiB = 1024 * 1024


async def refusal(answer):
    """The InvalidMessage a ``tasks/get`` answered by ``answer(message)`` gives."""
    async with http_fault_server() as server, mtj.connect(server.url) as client:
        server.brain.script["tasks/get"] = answer
        with pytest.raises(mtj.InvalidMessage) as info:
            await asyncio.wait_for(client.session.request("tasks/get", {"taskId": "t"}), 20)
    error = info.value
    assert "[fault-server at " in str(error) and error.method == "tasks/get"
    return error


async def test_a_login_page_instead_of_json():
    page = "<html><head><title>Sign in</title></head>\n<body>\x1b[31mPlease sign in</body></html>" + "x" * 500
    error = await refusal(lambda m: Raw(200, page, "text/html"))
    text = str(error)
    assert "answer to tasks/get (HTTP 200) has content type 'text/html'" in text
    assert "it begins '<html><head><title>Sign in</title></head>\\n<body>\\x1b[31mPlease sign in" in text
    assert "\x1b" not in text and "\n" not in text and text.endswith("…") and len(text) < 600


async def test_a_body_that_is_not_json():
    error = await refusal(lambda m: Raw(200, b"Service \xffunavailable\r\n", "application/json"))
    assert "unreadable answer to tasks/get (HTTP 200, 22 bytes of application/json): not valid JSON" in str(error)
    assert "it begins 'Service \ufffdunavailable\\r\\n'" in str(error)


async def test_an_empty_body():
    error = await refusal(lambda m: Raw(200, b"", "application/json"))
    assert "the answer to tasks/get (HTTP 200, application/json) is empty" in str(error)


async def test_json_that_is_no_json_rpc():
    error = await refusal(lambda m: Raw(200, b'{"status": "ok"}', "application/json"))
    assert "unreadable answer to tasks/get" in str(error) and "'jsonrpc'" in str(error)
    assert """it begins '{"status": "ok"}'""" in str(error)


async def test_json_nested_too_deeply():
    error = await refusal(lambda m: Raw(200, b"[" * 200_000, "application/json"))
    assert "unreadable answer to tasks/get" in str(error) and len(str(error)) < 2000


async def test_no_content_type():
    error = await refusal(lambda m: Raw(202, b"", None))
    assert "answer to tasks/get (HTTP 202) has content type 'none'" in str(error) and "it is empty" in str(error)


async def test_a_redirect_to_a_sign_in_page():
    error = await refusal(
        lambda m: Raw(
            302, b"<html>Moved</html>", "text/html", headers={"Location": "https://sso.example/login?next=/mcp"}
        )
    )
    assert (
        "the answer to tasks/get is a redirect (HTTP 302) to 'https://sso.example/login?next=/mcp', which "
        "this client does not follow"
    ) in str(error)


def big_answer(msg_id, size):
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": {"pad": "x" * size}}).encode()


@pytest.mark.timeout(60)
async def test_a_json_answer_declared_too_big_is_not_read():
    error = await refusal(lambda m: Raw(200, big_answer(m["id"], MAX_JSON_BYTES), "application/json"))
    assert "more than the 64 MiB this client reads" in str(error)


@pytest.mark.timeout(60)
async def test_a_chunked_json_answer_is_read_only_up_to_the_bound():
    total = 2 * MAX_JSON_BYTES

    def answer(request):
        body = big_answer(request.message["id"], total)
        return 200, {"Content-Type": "application/json"}, (body[i : i + MiB] for i in range(0, len(body), MiB))

    async with (
        bytes_server(lambda r: _async(answer(r)), pause=0) as server,
        http_transport(server.url) as (transport, _),
    ):
        with pytest.raises(mtj.InvalidMessage, match="larger than the 64 MiB this client reads"):
            await transport.send(jsonrpc.request(1, "tasks/get", {"taskId": "t"}))
        assert server.sent < total  # it hung up, instead of reading it all


@pytest.mark.timeout(60)
async def test_an_error_body_is_read_only_a_few_kilobytes():
    cap = 64 * MiB

    async def endless():
        piece = b"<p>Internal error</p>" * 3000
        for _ in range(cap // len(piece)):
            yield piece

    async with (
        bytes_server(lambda r: (500, {"Content-Type": "text/html"}, endless()), pause=0) as server,
        http_transport(server.url) as (transport, _),
    ):
        with pytest.raises(mtj.HTTPStatusError) as info:
            await transport.send(jsonrpc.request(1, "tasks/get", {"taskId": "t"}))
        assert "HTTP 500 Whatever for tasks/get: <p>Internal error" in str(info.value)
        assert len(info.value.body) <= 301 and info.value.body.endswith("…")
        assert server.sent < cap // 2, f"read {server.sent} bytes of an error answer"


def _async(answer):
    status, headers, pieces = answer

    async def agen():
        for piece in pieces:
            yield piece

    return status, headers, agen()
