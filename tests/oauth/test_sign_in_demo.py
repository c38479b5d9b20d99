"""The OAuth client end to end against the OAuth-protected demo server (``demo --http --auth``, a real
subprocess with its own authorization server): sign in, run tasks across token expiries, refresh on a
401 in the middle of a task, reuse kept tokens, step up scope, sign out; no token outside the store.

The "person" follows the authorization URL as a browser would (the demo approves at once) and its
redirect reaches our loopback listener.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.dialects.core_2025 import Core2025Dialect
from mcp_tasks_jupyter.dialects.dialect import TaskDialect
from mcp_tasks_jupyter.dialects.ext import ExtDialect
from mcp_tasks_jupyter.oauth.sign_in import OAuthSignIn
from tests.faults.server import Raw, http_fault_server
from tests.support.auth_demo import start_auth_demo

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Person:
    """Opens the sign-in URL like a browser would, and counts how often it was asked to."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, url: str) -> None:
        self.asked.append(url)
        async with httpx.AsyncClient(timeout=10, follow_redirects=False) as http:
            answer = await http.get(url)
            assert answer.status_code in (302, 303), answer.text
            await http.get(answer.headers["location"])


def kept_tokens(store: Path) -> list[str]:
    values = []
    for path in store.glob("*.json"):
        tokens = json.loads(path.read_text())["tokens"] or {}
        values += [v for k, v in tokens.items() if k in ("access_token", "refresh_token") and v]
    return values


async def test_sign_in_and_a_task_across_expiries_with_tokens_only_in_the_store(tmp_path: Path) -> None:
    person = Person()
    store = tmp_path / "tokens"
    index = tmp_path / "tasks.sqlite3"
    with start_auth_demo(token_ttl=2) as demo:
        auth = mtj.OAuth(open_url=person, token_store=store)
        async with mtj.connect(demo.url, auth=auth, index=str(index)) as client:
            assert len(person.asked) == 1
            first = kept_tokens(store)
            assert len(first) == 2  # an access token and a refresh token (offline_access is offered)
            task = await client.start_task("slow_compute", {"seconds": 5})
            result = await task
            assert not result.is_error, result.text
            last = kept_tokens(store)
            assert not set(first) & set(last)  # refreshed (and rotated) while the task ran
            described = json.dumps(client.describe(), default=str)
        output = demo.output()
    assert len(person.asked) == 1  # refreshing never needs the person
    everything = described + output + repr(task) + str(task.status_message)
    everything += index.read_bytes().decode("latin-1") if index.exists() else ""
    for extra in tmp_path.glob("tasks.sqlite3*"):
        everything += extra.read_bytes().decode("latin-1")
    for token in first + last:
        assert token not in everything


async def test_a_401_in_the_middle_of_a_task_refreshes_and_the_task_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No refresh ahead of expiry: the expired token meets the server's 401 mid-task. Pushes are not
    # trusted here, so that the task is polled at its interval (with pushes delivering every change,
    # nothing would be sent during the task for the 401 to meet).
    monkeypatch.setattr(OAuthSignIn, "_arm_timer", lambda self, tokens: None)
    for dialect in (TaskDialect, Core2025Dialect, ExtDialect):
        monkeypatch.setattr(dialect, "push_live", lambda self, handle: False)
    person = Person()
    with start_auth_demo(token_ttl=1) as demo:
        auth = mtj.OAuth(open_url=person, token_store=tmp_path)
        async with mtj.connect(demo.url, auth=auth) as client:
            first = kept_tokens(tmp_path)
            result = await (await client.start_task("slow_compute", {"seconds": 4}))
            assert not result.is_error
            assert not set(first) & set(kept_tokens(tmp_path))
    assert len(person.asked) == 1


async def test_kept_tokens_are_used_next_time_and_sign_out_forgets_them(tmp_path: Path) -> None:
    person = Person()
    with start_auth_demo() as demo:
        auth = mtj.OAuth(open_url=person, token_store=tmp_path)
        async with mtj.connect(demo.url, auth=auth) as client:
            await client.list_tools()
        async with mtj.connect(demo.url, auth=auth) as client:
            await client.list_tools()
            assert len(person.asked) == 1
            hook = client.session.transport.auth
            assert isinstance(hook, OAuthSignIn)
            assert hook.sign_out() is True
            assert kept_tokens(tmp_path) == []
            await client.call_tool("echo", {"text": "again"})  # refused without a token: a new sign-in
            assert len(person.asked) == 2


async def test_step_up_asks_for_the_scopes_so_far_plus_the_challenged_one(tmp_path: Path) -> None:
    person = Person()
    with start_auth_demo(scopes="mcp:tools mcp:admin offline_access", tool_scopes={"echo": "mcp:admin"}) as demo:
        auth = mtj.OAuth(open_url=person, token_store=tmp_path, scopes=["mcp:tools"])
        async with mtj.connect(demo.url, auth=auth) as client:
            result = await client.call_tool("echo", {"text": "hi"})
            assert "hi" in result.text
    assert len(person.asked) == 2
    assert "mcp%3Aadmin" in person.asked[1] and "mcp%3Atools" in person.asked[1]


async def test_a_server_without_oauth_keeps_its_plain_refusal_in_a_notebook_default(tmp_path: Path) -> None:
    # A sign-in nobody asked for (the notebook's default) is only tried where OAuth metadata exists.
    person = Person()
    refusal = Raw(401, b"no", headers={"WWW-Authenticate": 'Bearer realm="x"'})
    async with http_fault_server() as server:
        server.brain.script["initialize"] = lambda params: refusal
        server.brain.script["server/discover"] = lambda params: refusal
        hook = OAuthSignIn(mtj.OAuth(open_url=person, token_store=tmp_path), server.url, "f", implicit=True)
        with pytest.raises(mtj.AuthenticationFailed, match="401"):
            await mtj.connect(server.url, auth=hook, timeout=10)
    assert person.asked == []
