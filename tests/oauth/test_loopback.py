"""The loopback redirect listener on a real socket: only the awaited answer counts."""

from __future__ import annotations

import httpx
import pytest

from mcp_tasks_jupyter.errors import SignInFailed
from mcp_tasks_jupyter.oauth.answers import AwaitedAnswer
from mcp_tasks_jupyter.oauth.loopback import RedirectListener

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_the_answer_with_the_awaited_state_is_handed_over() -> None:
    listener = RedirectListener()
    await listener.start()
    awaited = AwaitedAnswer("s1", "srv")
    listener.expect(awaited)
    try:
        assert listener.redirect_uri.startswith("http://127.0.0.1:")
        async with httpx.AsyncClient() as http:
            wrong = await http.get(listener.redirect_uri, params={"code": "x", "state": "other"})
            elsewhere = await http.get(
                listener.redirect_uri.replace("/callback", "/other"), params={"state": "s1"}
            )
            right = await http.get(listener.redirect_uri, params={"code": "the-code", "state": "s1", "iss": "i"})
        assert (wrong.status_code, elsewhere.status_code, right.status_code) == (400, 404, 200)
        assert "Signed in" in right.text
        assert await awaited.wait(1) == {"code": "the-code", "state": "s1", "iss": "i"}
    finally:
        await listener.close()


async def test_nobody_signing_in_times_out_with_what_to_do() -> None:
    awaited = AwaitedAnswer("s1", "srv")
    with pytest.raises(SignInFailed, match=r"nobody signed in within 0\.2 s; sign in again with %mcp_login"):
        await awaited.wait(0.2)
