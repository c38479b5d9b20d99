"""A server never reached fails the connect at once, with nothing said of reconnecting (issue 30 item 5):
``%mcp_connect dead http://127.0.0.1:1/mcp`` printed "reconnecting for up to 300 s" and, at once, that it
could not connect, while nothing reconnected."""

import asyncio
import logging

import pytest

import mcp_tasks_jupyter as mtj

from .server import closed_port, http_fault_server

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]
GUARD_S = 20.0  # a hang guard, not a speed claim


async def test_a_server_never_reached_says_one_thing(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_tasks_jupyter")
    before = {t for t in asyncio.all_tasks()}
    with pytest.raises(mtj.ConnectionFailed) as failure:
        await asyncio.wait_for(mtj.connect(f"http://127.0.0.1:{closed_port()}/mcp").__aenter__(), GUARD_S)
    assert "reconnect" not in str(failure.value)
    assert not [r for r in caplog.records if "reconnect" in r.getMessage()], caplog.text
    left = {t for t in asyncio.all_tasks() if t not in before and not t.done()}
    assert not [t for t in left if "reconnect" in t.get_name()], left


async def test_a_server_reached_once_is_reconnected_to_when_it_goes(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_tasks_jupyter")
    async with http_fault_server() as server, mtj.connect(server.url) as client:
        await server.stop()
        with pytest.raises(mtj.ConnectionFailed):
            await asyncio.wait_for(client.session.request("ping", {}), GUARD_S)
        assert client.session.reconnecting_since is not None  # it reconnects, and says so
        assert any("reconnecting for up to" in r.getMessage() for r in caplog.records), caplog.text
