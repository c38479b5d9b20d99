"""The secret registry itself (``mcp_tasks_jupyter.redact``): which forms of a value count, labels
without userinfo, log records of every logger in the scrubbed trees (children and late ones too),
and what the notebook layer shows (``%mcp_servers``' table, the runtime's targets)."""

from __future__ import annotations

import base64
import logging
import os
import urllib.parse

import pytest

from mcp_tasks_jupyter import redact
from mcp_tasks_jupyter.errors import HTTPStatusError, ProtocolError, ServerExited, TaskFailed
from mcp_tasks_jupyter.jupyter.magic_args import parse_connect_line
from mcp_tasks_jupyter.jupyter.runtime import Runtime
from mcp_tasks_jupyter.jupyter.tables import servers_table

from .secrets_support import assert_hidden, new_secret, shown
from .server import http_fault_server


def test_a_header_value_and_its_usual_forms():
    token = new_secret("tok") + '/+="\\'
    redact.register(f"Bearer {token}")
    for form in (
        token,
        f"Bearer {token}",
        urllib.parse.quote(token, safe=""),
        urllib.parse.quote_plus(token),
        urllib.parse.quote(f"Bearer {token}", safe=""),
        token.replace("\\", "\\\\").replace('"', '\\"'),
    ):
        assert redact.scrub(f"before {form} after") == "before *** after", form


def test_basic_credentials_are_secret_decoded_too():
    password = new_secret("pw")
    encoded = base64.b64encode(f"bob:{password}".encode()).decode()
    redact.register_all({"Authorization": f"Basic {encoded}"})
    assert redact.scrub(f"{encoded} / bob:{password} / {password}") == "*** / *** / ***"


def test_short_values_are_not_registered():
    redact.register_all({"X-Flag": "1", "X-Mode": "debug", "X-Lang": "en-US"})
    text = "debug 1 en-US true"
    assert redact.scrub(text) == text
    assert len("debug") < redact.MIN_SECRET_LEN


def test_nothing_to_scrub_gives_the_same_objects_back():
    data = {"a": ["b", {"c": "d"}], "e": 1}
    assert redact.scrub_data(data) is data
    assert redact.scrub("plain text") == "plain text"
    assert redact.scrub_optional(None) is None


def test_urls_lose_their_userinfo_in_labels():
    password = new_secret("pw")
    url = f"https://alice:{password}@example.org:8443/mcp?x=1"
    redact.register_url(url)
    assert redact.safe_url(url) == "https://example.org:8443/mcp?x=1"
    assert redact.safe_url("http://example.org/a@b") == "http://example.org/a@b"  # an @ in the path is no userinfo
    assert redact.safe_url("python -m server") == "python -m server"
    token = new_secret("tok")
    redact.register_url(f"https://{token}@git.example.org/mcp")  # a token as the user name
    assert redact.scrub(f"GET https://{token}@git.example.org/mcp") == "GET https://***@git.example.org/mcp"
    assert redact.safe_url(f"https://{token}@git.example.org/mcp") == "https://git.example.org/mcp"


def test_errors_scrub_what_they_keep():
    secret = new_secret()
    redact.register(secret)
    errors = [
        HTTPStatusError(f"HTTP 500: {secret}", server=f"s {secret}", status_code=500, body=secret),
        ServerExited("exited", server="s", returncode=1, stderr=f"line\nkey={secret}"),
        ProtocolError(f"no {secret}", server="s", data={"k": [secret]}),
        TaskFailed(
            f"failed {secret}",
            server="s",
            task_id="t",
            status_message=secret,
            error={"code": 1, "message": secret},
        ),
    ]
    for exc in errors:
        assert_hidden([secret], shown(exc=exc), index=False)


def test_log_records_of_every_logger_in_the_trees(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG)
    secret = new_secret()
    redact.register(secret)
    # A child logger made after the registration (a filter on "httpcore" would never see its records).
    late = logging.getLogger(f"httpcore.late{os.getpid()}")
    late.debug("connecting with %s", secret)
    logging.getLogger("httpx").info("HTTP Request: POST http://u:%s@host/mcp", secret)
    # The HTTP engine's loggers (aiohttp.client, aiohttp.internal, ...), children made late too.
    logging.getLogger("aiohttp.client").warning("Unclosed connection to http://u:%s@host/mcp", secret)
    logging.getLogger(f"aiohttp.late{os.getpid()}").debug("proxy %s", secret)
    logging.getLogger("mcp_tasks_jupyter.somewhere.new").warning(f"inline {secret}")
    try:
        raise RuntimeError(f"boom {secret}")
    except RuntimeError:
        logging.getLogger("mcp_tasks_jupyter.tasks.handle").exception("failed")
    logging.getLogger("mcp_tasks_jupyter.tasks.handle").info("no secret here: %s", 42)
    assert_hidden([secret], {}, caplog, index=False)
    assert "boom ***" in caplog.text and "connecting with ***" in caplog.text
    assert caplog.records[-1].args == (42,)  # a record without secrets keeps its arguments


def test_a_secret_filter_for_other_handlers():
    secret = new_secret()
    redact.register(secret)
    record = logging.LogRecord("app", logging.INFO, __file__, 1, "key %s", (secret,), None)
    assert redact.SecretFilter().filter(record) and record.getMessage() == "key ***"


@pytest.mark.loopback
@pytest.mark.anyio
@pytest.mark.timeout(30)
async def test_the_runtime_and_servers_table_show_no_userinfo_or_header_value():
    token, password = new_secret("tok"), new_secret("pw")
    runtime = Runtime()
    async with http_fault_server() as server:
        url = server.url.replace("http://", f"http://alice:{password}@")
        args = parse_connect_line(f"--header 'Authorization: Bearer {token}' api {url}")
        assert password not in repr(args) and token not in repr(args)
        try:
            client = await runtime.connect("api", args.target, headers=args.headers, display_target=url)
            table = servers_table(runtime.connections.values(), runtime.redact)
            assert server.url in table.text() and "headers: Authorization" in table.text()
            assert runtime.connections["api"].target == server.url
            assert_hidden(
                [token, password],
                {"text": table.text(), "html": table.html(), **shown(client=client)},
                index=False,
            )
        finally:
            await runtime.aclose()
