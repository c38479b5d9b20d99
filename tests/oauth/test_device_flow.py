"""The device authorization grant (RFC 8628) end to end against the OAuth-protected demo server (``demo
--http --auth``, a real subprocess with its own authorization server): a person enters the code (the test
opens the verification link with httpx) while the client polls; a terminal script without a browser
chooses it by itself; ``slow_down`` is honoured; a refusal and an expired code fail at once, naming
the server; a device endpoint over plain http elsewhere is refused; no device code or token is shown.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from pathlib import Path

import httpx
import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.oauth.sign_in import OAuthSignIn
from tests.support.auth_demo import TIMEOUT, start_auth_demo
from tests.support.paths import PYTHON
from tests.support.processes import python_env, spawn, wait_for_stdout

pytestmark = [pytest.mark.timeout(120)]

#: Polls come every second (the shortest interval a client accepts), so that the tests are quick.
FAST = ("--auth-device-interval", "1")
SIGN_IN_LINE = r"To sign in to (\S+), visit (\S+) and enter (\S+)\n"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Person:
    """Opens the verification link the client shows, approving the code (or refusing it, ``deny``);
    ``idle``: never opens it."""

    def __init__(self, *, deny: bool = False, idle: bool = False) -> None:
        self.deny = deny
        self.idle = idle
        self.asked: list[str] = []

    async def __call__(self, url: str) -> None:
        self.asked.append(url)
        if self.idle:
            return
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            answer = await http.get(url + "&deny=1" if self.deny else url)
            assert answer.status_code == 200, answer.text


class Wire:
    """The device codes the authorization server handed out, read off the client's own HTTP client."""

    def __init__(self) -> None:
        self.device_codes: list[str] = []

    async def __call__(self, response: httpx.Response) -> None:
        if response.request.url.path == "/device_authorization":
            await response.aread()
            self.device_codes.append(response.json()["device_code"])

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def http(sign_in: OAuthSignIn) -> httpx.AsyncClient:
            return httpx.AsyncClient(timeout=TIMEOUT, follow_redirects=False, event_hooks={"response": [self]})

        monkeypatch.setattr(OAuthSignIn, "_http", http)


def kept_tokens(store: Path) -> list[str]:
    values = []
    for path in store.glob("*.json"):
        tokens = json.loads(path.read_text())["tokens"] or {}
        values += [v for k, v in tokens.items() if k in ("access_token", "refresh_token") and v]
    return values


@pytest.mark.anyio
async def test_device_code_sign_in_runs_a_task_and_shows_no_code_or_token(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    wire = Wire()
    wire.install(monkeypatch)
    person = Person()
    store = tmp_path / "tokens"
    with start_auth_demo(*FAST, token_ttl=2) as demo:
        auth = mtj.OAuth(grant="device_code", open_url=person, token_store=store)
        async with mtj.connect(demo.url, auth=auth, name="lab") as client:
            first = kept_tokens(store)
            task = await client.start_task("slow_compute", {"seconds": 4})
            result = await task
            assert not result.is_error, result.text
            described = json.dumps(client.describe(), default=str)
        output = demo.output()
    assert len(person.asked) == 1 and person.asked[0].startswith(f"{demo.issuer}/device?user_code=")
    [device_code] = wire.device_codes
    tokens = kept_tokens(store)
    assert len(first) == 2  # an access token and a refresh token
    assert not set(first) & set(tokens)  # refreshed (and rotated) while the task ran, nobody asked again
    tokens += first
    assert "before its interval ended" not in output  # never polled sooner than the server asked
    printed = capfd.readouterr()
    everything = described + output + repr(task) + repr(auth) + caplog.text + printed.out + printed.err
    for secret in (device_code, *tokens):
        assert secret not in everything


def test_a_terminal_script_without_a_browser_signs_in_with_a_code_by_itself(tmp_path: Path) -> None:
    # A script in an SSH session: no DISPLAY, no BROWSER, the default OAuth() (the authorization code
    # flow for a person): the server offers the device grant, so the script prints one line to follow.
    script = tmp_path / "job.py"
    script.write_text(
        "import asyncio, sys\n"
        "import mcp_tasks_jupyter as mtj\n\n"
        "async def main() -> None:\n"
        "    auth = mtj.OAuth(token_store=sys.argv[2])\n"
        "    async with mtj.connect(sys.argv[1], auth=auth, name='lab-server') as client:\n"
        "        result = await (await client.start_task('slow_compute', {'seconds': 0.5}))\n"
        "        print('result:', result.text, flush=True)\n\n"
        "asyncio.run(main())\n"
    )
    env = no_browser_env()
    store = tmp_path / "tokens"
    with start_auth_demo(*FAST) as demo, spawn([PYTHON, str(script), demo.url, str(store)], env=env) as job:
        line = wait_for_stdout(job, SIGN_IN_LINE, 60, stderr=True)
        server, uri, code = line.groups()
        assert (server, uri) == ("lab-server", f"{demo.issuer}/device")
        approved = httpx.get(uri, params={"user_code": code}, timeout=TIMEOUT)  # the person, on their phone
        assert approved.status_code == 200, approved.text
        assert job.popen.wait(timeout=60) == 0, job.output()
        said = job.output(limit=100_000)
    assert "result:" in said
    assert "Open this URL" not in said  # no loopback link nobody could follow
    for token in kept_tokens(store):
        assert token not in said


def no_browser_env(**extra: str) -> dict[str, str]:
    """A terminal in an SSH session: no DISPLAY, no BROWSER."""
    env = python_env()
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER"):
        env.pop(name, None)
    env["SSH_CONNECTION"] = "192.0.2.1 50000 192.0.2.2 22"
    return {**env, **extra}


async def follow_link(url: str) -> None:
    """A browser on the notebook's machine: the authorization code flow's link, approved at once."""
    async with httpx.AsyncClient(timeout=TIMEOUT, follow_redirects=False) as http:
        answer = await http.get(url)
        await http.get(answer.headers["location"])


async def start_in_a_notebook(url: str, index: Path, store: Path) -> str:
    """A task started from a notebook (signed in through its link) and left running: its id."""
    auth = mtj.OAuth(open_url=follow_link, token_store=store)
    async with mtj.connect(url, auth=auth, name="lab", index=str(index)) as client:
        task = await client.start_task("slow_compute", {"seconds": 3, "label": "from the notebook"})
        return task.task_id


def test_mcp_tasks_result_in_a_terminal_signs_in_with_a_code(tmp_path: Path) -> None:
    # The notebook's kernel started the task; `mcp-tasks result ID` in an SSH session (its own token
    # store: nothing kept) signs in with a code, attaches to the task and prints its result.
    index = tmp_path / "tasks.sqlite3"
    with start_auth_demo(*FAST) as demo:
        task_id = asyncio.run(start_in_a_notebook(demo.url, index, tmp_path / "notebook-tokens"))
        store = tmp_path / "terminal-tokens"
        env = no_browser_env(MTJ_INDEX=str(index), MTJ_TOKENS=str(store))
        argv = [PYTHON, "-m", "mcp_tasks_jupyter", "result", task_id, "--timeout", "60"]
        with spawn(argv, env=env) as terminal:
            server, uri, code = wait_for_stdout(terminal, SIGN_IN_LINE, 60, stderr=True).groups()
            assert server == "lab"
            assert httpx.get(uri, params={"user_code": code}, timeout=TIMEOUT).status_code == 200
            assert terminal.popen.wait(timeout=60) == 0, terminal.output()
            said = terminal.output(limit=100_000)
    assert "from the notebook" in said
    tokens = kept_tokens(store)
    assert tokens
    for token in tokens:
        assert token not in said


@pytest.mark.anyio
async def test_slow_down_makes_the_client_poll_less_often(tmp_path: Path) -> None:
    # The demo answers each code's first poll with slow_down (its interval becomes 6 s) and every poll
    # sooner than the interval with slow_down again: a client that did not wait longer would never get
    # its tokens before the sign-in timeout.
    person = Person()
    with start_auth_demo(*FAST, "--auth-device-slow-down") as demo:
        auth = mtj.OAuth(grant="device_code", open_url=person, token_store=tmp_path, sign_in_timeout=40)
        async with mtj.connect(demo.url, auth=auth, name="lab") as client:
            await client.list_tools()
        output = demo.output()
    assert "before its interval ended" not in output
    assert len(kept_tokens(tmp_path)) == 2


@pytest.mark.anyio
async def test_a_refused_code_fails_at_once_naming_the_server(tmp_path: Path) -> None:
    person = Person(deny=True)
    with start_auth_demo(*FAST) as demo:
        auth = mtj.OAuth(grant="device_code", open_url=person, token_store=tmp_path, sign_in_timeout=600)
        with pytest.raises(mtj.SignInFailed) as failure:  # not the 600 s sign-in timeout: the test's is 120 s
            await mtj.connect(demo.url, auth=auth, name="lab", timeout=30)
    said = str(failure.value)
    assert "lab" in said and "refused" in said and "access_denied" in said
    assert len(person.asked) == 1  # one code: the refusal is not met with a second one
    assert kept_tokens(tmp_path) == []


@pytest.mark.anyio
async def test_an_expired_code_fails_naming_the_server(tmp_path: Path) -> None:
    person = Person(idle=True)
    with start_auth_demo(*FAST, "--auth-device-ttl", "2") as demo:
        auth = mtj.OAuth(grant="device_code", open_url=person, token_store=tmp_path, sign_in_timeout=600)
        with pytest.raises(mtj.SignInFailed) as failure:
            await mtj.connect(demo.url, auth=auth, name="lab", timeout=30)
    said = str(failure.value)
    assert "lab" in said and "expired" in said and "sign in again" in said
    assert len(person.asked) == 1


@pytest.mark.anyio
async def test_a_plain_http_device_endpoint_elsewhere_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wire = Wire()
    wire.install(monkeypatch)
    person = Person()
    elsewhere = "http://auth.example.com/device_authorization"
    with start_auth_demo(*FAST, "--advertise-device-endpoint", elsewhere) as demo:
        auth = mtj.OAuth(grant="device_code", open_url=person, token_store=tmp_path)
        with pytest.raises(mtj.SignInFailed) as failure:
            await mtj.connect(demo.url, auth=auth, name="lab", timeout=30)
    said = str(failure.value)
    assert elsewhere in said and "not https" in said and "lab" in said
    assert person.asked == [] and wire.device_codes == []  # nothing was sent there, nobody was asked


@pytest.mark.anyio
async def test_a_notebook_link_keeps_the_browser_flow_where_the_device_grant_is_offered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With a way to show a link (the notebook's "Sign in" link is an open_url), the authorization code
    # flow stays the default even without a browser here.
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER"):
        monkeypatch.delitem(os.environ, name, raising=False)
    asked: list[str] = []

    async def link(url: str) -> None:
        asked.append(url)
        await follow_link(url)

    with start_auth_demo(*FAST) as demo:
        async with mtj.connect(demo.url, auth=mtj.OAuth(open_url=link, token_store=tmp_path)) as client:
            await client.list_tools()
    [url] = asked
    assert url.startswith(f"{demo.issuer}/authorize?")
