"""The paste-back fallback against the OAuth-protected demo server (``demo --http --auth``, a real
subprocess): the browser cannot reach the kernel's loopback listener (a hub, a remote server), so the
person pastes the address it ended on. The "browser" here follows the authorization URL with httpx and
stops at the redirect: the loopback listener is never reached.

An address of another sign-in (``state``) is refused and the sign-in goes on waiting; one naming
another issuer (``iss``, RFC 9207) ends the sign-in without using its code; the right one signs in and
a task runs with the token.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.errors import SignInFailed, UsageError
from mcp_tasks_jupyter.oauth import answers
from mcp_tasks_jupyter.oauth.sign_in import OAuthSignIn
from tests.support.auth_demo import start_auth_demo

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]
WAIT_S = 30.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class RemoteBrowser:
    """Signs in at the authorization server but cannot reach the redirect: keeps where it ended."""

    def __init__(self) -> None:
        self.ended_on: asyncio.Queue[str] = asyncio.Queue()

    async def __call__(self, url: str) -> None:
        async with httpx.AsyncClient(timeout=10, follow_redirects=False) as http:
            answer = await http.get(url)
        assert answer.status_code in (302, 303), answer.text
        await self.ended_on.put(answer.headers["location"])

    async def address(self) -> str:
        return await asyncio.wait_for(self.ended_on.get(), WAIT_S)


def changed(address: str, **params: str) -> str:
    parts = urlsplit(address)
    query = dict(parse_qsl(parts.query))
    query.update(params)
    return urlunsplit(parts._replace(query=urlencode(query)))


async def test_the_pasted_address_signs_in_and_a_task_runs(tmp_path: Path) -> None:
    browser = RemoteBrowser()
    with start_auth_demo() as demo:
        auth = mtj.OAuth(open_url=browser, token_store=tmp_path)
        connecting = asyncio.ensure_future(mtj.connect(demo.url, auth=auth))
        try:
            address = await browser.address()
            with pytest.raises(
                SignInFailed, match=r"does not belong to the sign-in that is waiting \(state differs\)"
            ):
                await answers.finish_sign_in(changed(address, state="another-sign-in"))
            with pytest.raises(UsageError, match="carries no sign-in answer"):
                await answers.finish_sign_in("https://example.org/authorize?client_id=x")
            assert not connecting.done()  # still waiting for the right answer
            assert await mtj.finish_sign_in(address) == f"signed in to {demo.url}"
            client = await asyncio.wait_for(connecting, WAIT_S)
        finally:
            if not connecting.done():
                connecting.cancel()
        async with client:
            result = await (await client.start_task("slow_compute", {"seconds": 1}))
            assert not result.is_error, result.text
        with pytest.raises(UsageError, match="no sign-in is waiting"):
            await mtj.finish_sign_in(address)


async def test_an_answer_from_another_issuer_is_refused_and_its_code_never_used(tmp_path: Path) -> None:
    browser = RemoteBrowser()
    with start_auth_demo() as demo:
        hook = OAuthSignIn(mtj.OAuth(open_url=browser, token_store=tmp_path), demo.url, "secure")
        signing = asyncio.ensure_future(hook.sign_in())  # what %mcp_login secure does
        try:
            address = await browser.address()
            forged = changed(address, iss="https://evil.example.com")
            with pytest.raises(
                SignInFailed, match=r"\[secure\] .*from issuer 'https://evil\.example\.com'.*RFC 9207"
            ):
                await mtj.finish_sign_in(forged, server="secure")
            with pytest.raises(SignInFailed, match="RFC 9207"):
                await asyncio.wait_for(signing, WAIT_S)
        finally:
            if not signing.done():
                signing.cancel()
            await hook.aclose()
    kept = [json.loads(p.read_text()).get("tokens") for p in tmp_path.glob("*.json")]
    assert not any(kept)  # the code was never exchanged: no tokens
