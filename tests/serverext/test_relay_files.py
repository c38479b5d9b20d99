"""The hand-off files between the Jupyter server's sign-in route and a kernel, and what the kernel takes
from the front end as the route's address: only files a kernel of this user wrote (0600, small, a
port) are followed, and the state itself is never written down."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcp_tasks_jupyter.jupyter.sign_in_route import SignInRoute
from mcp_tasks_jupyter.serverext.relay import JupyterServerRelay, listener_port, state_file

ROUTE = "https://hub.example.org/user/alice/mcp-tasks/oauth/callback"


def test_a_registered_sign_in_is_found_by_its_state_and_gone_after(tmp_path: Path) -> None:
    relay = JupyterServerRelay(ROUTE, tmp_path / "pending")
    undo = relay.register("the-state", 41234)
    assert listener_port(relay.folder, "the-state") == 41234
    assert listener_port(relay.folder, "another-state") is None
    assert "the-state" not in os.listdir(relay.folder)[0]
    undo()
    assert listener_port(relay.folder, "the-state") is None


@pytest.mark.parametrize("content", ['{"port": 0}', '{"port": true}', '{"port": "1"}', "[]", "not json"])
def test_files_that_are_not_a_kernels_are_ignored(tmp_path: Path, content: str) -> None:
    path = state_file(tmp_path, "s")
    path.write_text(content)
    path.chmod(0o600)
    assert listener_port(tmp_path, "s") is None


def test_a_file_others_could_write_is_ignored(tmp_path: Path) -> None:
    path = state_file(tmp_path, "s")
    path.write_text('{"port": 41234}')
    path.chmod(0o644)
    assert listener_port(tmp_path, "s") is None
    path.chmod(0o600)
    assert listener_port(tmp_path, "s") == 41234


@pytest.mark.parametrize(
    "said",
    [None, 42, "javascript:alert(1)", "https://hub.example.org/other", ROUTE + "?x=1", "https://hub/\nmcp-tasks"],
)
def test_only_an_address_of_the_route_is_taken_from_the_front_end(said: object) -> None:
    route = SignInRoute()
    route.reported(said)
    assert route.callback is None


@pytest.mark.anyio
async def test_a_runtime_directory_that_cannot_be_written_means_no_route(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    route = SignInRoute()
    route.reported(ROUTE)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(blocker / "runtime"))
    assert await route.relay(0) is None  # the loopback listener and the paste field, then
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    relay = await route.relay(0)
    assert relay is not None and relay.redirect_uri == ROUTE


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
