"""The device authorization grant (RFC 8628) against the OAuth-protected demo server (``demo --http
--auth``, a real subprocess serving the device grant): a terminal with no browser shows a code, the
"person" enters it at the verification URL (the demo approves at once), the client polls and a task
runs. ``slow_down`` widens the polling interval by 5 s; a declined sign-in fails saying so; numbers
from the server are bounded.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.errors import SignInFailed
from mcp_tasks_jupyter.oauth import discovery
from mcp_tasks_jupyter.oauth.device import DeviceCode, device_code_of, sign_in_with_device
from mcp_tasks_jupyter.oauth.mechanics import Proofs
from mcp_tasks_jupyter.oauth.registration import register_client
from tests.support.auth_demo import start_auth_demo

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Person:
    """Enters the code at the verification URL (``deny``: declines instead)."""

    def __init__(self, *, deny: bool = False) -> None:
        self.deny = deny
        self.codes: list[DeviceCode] = []

    async def __call__(self, code: DeviceCode) -> None:
        self.codes.append(code)
        params = {"user_code": code.user_code, **({"deny": "1"} if self.deny else {})}
        async with httpx.AsyncClient(timeout=10) as http:
            page = await http.get(code.verification_uri, params=params)
        assert page.status_code == 200, page.text


async def test_a_terminal_signs_in_with_a_code_and_a_task_runs(tmp_path: Path) -> None:
    person = Person()
    with start_auth_demo("--auth-device-interval", "1") as demo:
        auth = mtj.OAuth(grant="device_code", show_code=person, token_store=tmp_path)
        async with mtj.connect(demo.url, auth=auth) as client:
            result = await (await client.start_task("slow_compute", {"seconds": 1}))
            assert not result.is_error, result.text
    (code,) = person.codes
    assert code.verification_uri == f"{demo.issuer}/device" and code.interval == 1
    assert f"enter the code {code.user_code}" in code.instructions
    (kept,) = [json.loads(p.read_text()) for p in tmp_path.glob("*.json")]
    assert kept["tokens"]["access_token"] and kept["client"]["redirect_uri"] == ""


async def device_sign_in(demo_url: str, person: Person, slept: list[float]) -> object:
    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        await asyncio.sleep(seconds)

    async with httpx.AsyncClient(timeout=10) as http:
        resource = await discovery.discover_resource(http, demo_url, None, "demo")
        assert resource is not None
        metadata = await discovery.discover_server(http, resource.authorization_servers[0], "demo")
        client = await register_client(http, metadata, mtj.OAuth(), "", "demo")
        return await sign_in_with_device(
            http, metadata, client, ["mcp:tools"], resource.resource, "demo", Proofs(), person, sleep=sleep
        )


async def test_slow_down_widens_the_interval_by_five_seconds() -> None:
    slept: list[float] = []
    with start_auth_demo("--auth-device-interval", "1", "--auth-device-slow-downs", "1") as demo:
        tokens = await device_sign_in(demo.url, Person(), slept)
    assert tokens is not None
    assert slept == [1, 6]  # the first poll was told to slow down: every later one waits 5 s more


async def test_a_declined_sign_in_fails_saying_so() -> None:
    with (
        start_auth_demo("--auth-device-interval", "1") as demo,
        pytest.raises(SignInFailed, match="the sign-in was declined"),
    ):
        await device_sign_in(demo.url, Person(deny=True), [])


@pytest.mark.parametrize(
    ("answer", "expires_in", "interval"),
    [
        ({}, 600, 5),
        ({"expires_in": 10**9, "interval": 10**9}, 1800, 60),
        ({"expires_in": -5, "interval": 0}, 1, 1),
        ({"expires_in": True, "interval": "3"}, 600, 5),
    ],
)
def test_numbers_from_the_server_are_bounded(answer: dict[str, object], expires_in: int, interval: int) -> None:
    data = {
        "device_code": "d",
        "user_code": "ABCD-EFGH",
        "verification_uri": "https://as.example/device",
        **answer,
    }
    _, code = device_code_of(data, "s")
    assert (code.expires_in, code.interval) == (expires_in, interval)
