"""The Jupyter Server extension's sign-in route, in a real JupyterLab under a JupyterHub-style
``base_url`` (``/user/alice/``) with the extension enabled as the wheel enables it, against the
OAuth-protected demo server: the ``redirect_uri`` is the Jupyter server's
``/user/alice/mcp-tasks/oauth/callback``, and the "browser" (httpx) reaches only the authorization
server and the Jupyter server, never the sign-in's loopback listener.

Without the Jupyter server's own authentication the route forwards nothing; an unknown ``state`` is a
400; the signed-in browser's request reaches the waiting sign-in, which then runs a task. The pending
sign-in's file is 0600 and gone afterwards; the Jupyter server's log never shows the code.
"""

from __future__ import annotations

import stat
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.oauth.sign_in import OAuthSignIn, Relay
from mcp_tasks_jupyter.serverext.relay import FOLDER, JupyterServerRelay
from tests.browser.lab import Lab, running_lab
from tests.support.auth_demo import start_auth_demo

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(240)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def changed(address: str, **params: str) -> str:
    parts = urlsplit(address)
    return urlunsplit(parts._replace(query=urlencode({**dict(parse_qsl(parts.query)), **params})))


class HubBrowser:
    """Signs in at the authorization server and follows its redirect to the Jupyter server only."""

    def __init__(self, lab: Lab, folder: Path) -> None:
        self.lab = lab
        self.folder = folder
        self.seen: dict[str, object] = {}

    async def __call__(self, url: str) -> None:
        async with httpx.AsyncClient(timeout=15, follow_redirects=False) as http:
            redirect = await http.get(url)
            assert redirect.status_code in (302, 303), redirect.text
            location = redirect.headers["location"]
            assert location.startswith(f"{self.lab.url}/mcp-tasks/oauth/callback?")
            (pending,) = self.folder.glob("*.json")
            self.seen["mode"] = stat.S_IMODE(pending.stat().st_mode)
            self.seen["folder_mode"] = stat.S_IMODE(self.folder.stat().st_mode)
            state = dict(parse_qsl(urlsplit(location).query))["state"]
            self.seen["state_in_name"] = state in pending.name
            anonymous = await http.get(location)  # not signed in to the Jupyter server
            self.seen["anonymous"] = (anonymous.status_code, anonymous.headers.get("location", ""))
            signed_in = {"Authorization": f"token {self.lab.token}"}
            unknown = await http.get(changed(location, state="no-such-sign-in"), headers=signed_in)
            self.seen["unknown"] = (unknown.status_code, unknown.text)
            answer = await http.get(location, headers=signed_in)
            self.seen["answer"] = (answer.status_code, answer.text)
            self.seen["code"] = dict(parse_qsl(urlsplit(location).query))["code"]


async def test_the_answer_reaches_the_kernel_through_the_jupyter_server_route(tmp_path: Path) -> None:
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    with start_auth_demo() as demo, running_lab(root, home, base_url="/user/alice/") as lab:
        folder = home / "runtime" / FOLDER
        relay = JupyterServerRelay(f"{lab.url}/mcp-tasks/oauth/callback", folder)

        async def find_relay() -> Relay | None:
            return relay

        browser = HubBrowser(lab, folder)
        settings = mtj.OAuth(open_url=browser, token_store=tmp_path / "tokens")
        hook = OAuthSignIn(settings, demo.url, "secure", relay=find_relay)
        async with mtj.connect(demo.url, auth=hook) as client:
            result = await (await client.start_task("slow_compute", {"seconds": 1}))
            assert not result.is_error, result.text
        assert list(folder.glob("*.json")) == []  # the pending sign-in is gone
        logged = "".join(p.read_text(errors="replace") for p in (lab.process.stdout_path, lab.process.stderr_path))
    assert "mcp-tasks/oauth/callback" in logged  # logged without the code (jupyter_server scrubs it):
    assert str(browser.seen["code"]) not in logged
    status, where = browser.seen["anonymous"]  # type: ignore[misc]
    assert status == 302 and str(where).startswith("/user/alice/login?"), browser.seen  # to the server's login
    assert browser.seen["unknown"][0] == 400 and "No notebook is waiting" in browser.seen["unknown"][1]  # type: ignore[index]
    assert browser.seen["answer"][0] == 200 and "Signed in" in browser.seen["answer"][1]  # type: ignore[index]
    assert (browser.seen["mode"], browser.seen["folder_mode"], browser.seen["state_in_name"]) == (
        0o600,
        0o700,
        False,
    )
