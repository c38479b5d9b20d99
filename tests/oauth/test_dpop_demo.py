"""DPoP (RFC 9449) end to end against the demo's own authorization server (``demo --http --auth
--auth-dpop [--auth-dpop-nonce]``, a real subprocess): the headless client credentials grant and a
person's sign-in each get a DPoP-bound token and run a task (the client's nonce retry included), the
key is kept 0600 and never shown; and the demo refuses what a thief could try (plain httpx): the token
as Bearer, a proof from another key, a proof for another URL, a replayed proof, a token request
without a proof, a refresh with another key."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import httpx
import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.oauth.dpop import DPoPKey, new_key
from tests.oauth.test_device_flow import follow_link
from tests.support.auth_demo import (
    TIMEOUT,
    AuthDemo,
    code_form,
    register,
    start_auth_demo,
)

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

CLIENT_ID = "papermill-job"
SECRET = "demo-client-secret-for-dpop-tests-0123456"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def nobody(url: str) -> None:
    raise AssertionError(f"a headless grant asked a person to open {url}")


def kept_record(store: Path) -> tuple[Path, dict[str, Any]]:
    [path] = list(store.glob("*.json"))
    return path, json.loads(path.read_text())


async def run_a_task(demo: AuthDemo, auth: mtj.OAuth) -> str:
    """Connect with ``auth``, run a task; what the client and the task show of themselves."""
    async with mtj.connect(demo.url, auth=auth) as client:
        task = await client.start_task("slow_compute", {"seconds": 1})
        result = await task
        assert not result.is_error, result.text
        return json.dumps(client.describe(), default=str) + repr(task) + repr(auth) + repr(client)


def check_kept_dpop(store: Path, shown: str) -> None:
    path, kept = kept_record(store)
    assert kept["tokens"]["token_type"] == "DPoP"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    private = kept["dpop_key"]["d"]
    assert private not in shown and kept["tokens"]["access_token"] not in shown


@pytest.mark.parametrize("nonce", [False, True], ids=["no-nonce", "nonce"])
async def test_client_credentials_get_a_dpop_token_and_run_a_task(tmp_path: Path, nonce: bool) -> None:
    store = tmp_path / "tokens"
    with start_auth_demo(client_id=CLIENT_ID, client_secret=SECRET, dpop=True, dpop_nonce=nonce) as demo:
        headless = {"client_id": CLIENT_ID, "client_secret": SECRET, "open_url": nobody}
        shown = await run_a_task(demo, mtj.OAuth(grant="client_credentials", token_store=store, **headless))
        shown += demo.output()
    check_kept_dpop(store, shown)


@pytest.mark.parametrize("nonce", [False, True], ids=["no-nonce", "nonce"])
async def test_a_persons_sign_in_gets_a_dpop_token_and_runs_a_task(tmp_path: Path, nonce: bool) -> None:
    store = tmp_path / "tokens"
    with start_auth_demo(dpop=True, dpop_nonce=nonce) as demo:
        shown = await run_a_task(demo, mtj.OAuth(open_url=follow_link, token_store=store))
        shown += demo.output()
    check_kept_dpop(store, shown)


def dpop_tokens(demo: AuthDemo, key: DPoPKey, *, nonce: str | None = None) -> dict[str, Any]:
    """A person's sign-in by hand (a public client), its code redeemed with a proof from ``key``."""
    client = register(demo)
    form = {**code_form(demo, client), "client_id": client.client_id}
    proof = {"DPoP": key.proof("POST", demo.token_endpoint, nonce=nonce)}
    answer = httpx.post(demo.token_endpoint, data=form, headers=proof, timeout=TIMEOUT)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    body["client_id"] = client.client_id
    return body


def mcp_post(demo: AuthDemo, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(demo.url, json=INITIALIZE, headers={**ACCEPT, **headers}, timeout=TIMEOUT)


def refused_with(answer: httpx.Response, error: str) -> None:
    assert answer.status_code == 401, (answer.status_code, answer.text)
    challenge = answer.headers["www-authenticate"]
    assert challenge.startswith("DPoP ") and f'error="{error}"' in challenge, challenge


def test_the_demo_refuses_a_stolen_or_misused_dpop_token() -> None:
    key, thief = DPoPKey(new_key("ES256")), DPoPKey(new_key("ES256"))
    with start_auth_demo(dpop=True) as demo:
        metadata = httpx.get(demo.authorization_server_metadata_url, timeout=TIMEOUT).json()
        assert "ES256" in metadata["dpop_signing_alg_values_supported"]
        tokens = dpop_tokens(demo, key)
        assert tokens["token_type"] == "DPoP"
        access = tokens["access_token"]

        def as_dpop(proof: str) -> dict[str, str]:
            return {"Authorization": f"DPoP {access}", "DPoP": proof}

        good = key.proof("POST", demo.url, access)
        assert mcp_post(demo, as_dpop(good)).status_code == 200
        refused_with(mcp_post(demo, as_dpop(good)), "invalid_dpop_proof")  # replayed (same jti)
        refused_with(mcp_post(demo, {"Authorization": f"Bearer {access}"}), "invalid_token")
        refused_with(mcp_post(demo, as_dpop(thief.proof("POST", demo.url, access))), "invalid_dpop_proof")
        refused_with(
            mcp_post(demo, as_dpop(key.proof("POST", demo.issuer + "/other", access))), "invalid_dpop_proof"
        )
        refused_with(mcp_post(demo, as_dpop(key.proof("GET", demo.url, access))), "invalid_dpop_proof")
        refused_with(mcp_post(demo, as_dpop(key.proof("POST", demo.url, "another-token"))), "invalid_dpop_proof")
        refused_with(mcp_post(demo, {"Authorization": f"DPoP {access}"}), "invalid_dpop_proof")  # no proof

        # The token endpoint: no proof, a replayed proof, a refresh with another key.
        refresh = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "resource": demo.url}
        refresh["client_id"] = tokens["client_id"]
        bare = httpx.post(demo.token_endpoint, data=refresh, timeout=TIMEOUT)
        assert bare.status_code == 400 and bare.json()["error"] == "invalid_dpop_proof", bare.text
        stolen = {"DPoP": thief.proof("POST", demo.token_endpoint)}
        other_key = httpx.post(demo.token_endpoint, data=refresh, headers=stolen, timeout=TIMEOUT)
        assert other_key.status_code == 400 and other_key.json()["error"] == "invalid_dpop_proof", other_key.text
        replay = httpx.post(demo.token_endpoint, data=refresh, headers=stolen, timeout=TIMEOUT)
        assert replay.status_code == 400 and "used before" in replay.json()["error_description"]
        mine = {"DPoP": key.proof("POST", demo.token_endpoint)}
        renewed = httpx.post(demo.token_endpoint, data=refresh, headers=mine, timeout=TIMEOUT)
        assert renewed.status_code == 200 and renewed.json()["token_type"] == "DPoP", renewed.text
        output = demo.output()
    assert access not in output and tokens["refresh_token"] not in output


def test_with_a_nonce_the_first_proof_is_answered_use_dpop_nonce() -> None:
    key = DPoPKey(new_key("ES256"))
    with start_auth_demo(dpop=True, dpop_nonce=True) as demo:
        form = {"grant_type": "client_credentials"}
        first = httpx.post(
            demo.token_endpoint,
            data=form,
            headers={"DPoP": key.proof("POST", demo.token_endpoint)},
            timeout=TIMEOUT,
        )
        assert first.status_code == 400 and first.json()["error"] == "use_dpop_nonce", first.text
        nonce = first.headers["dpop-nonce"]
        tokens = dpop_tokens(demo, key, nonce=nonce)
        access = tokens["access_token"]
        without = mcp_post(demo, {"Authorization": f"DPoP {access}", "DPoP": key.proof("POST", demo.url, access)})
        refused_with(without, "use_dpop_nonce")
        assert without.headers["dpop-nonce"] == nonce
        proof = key.proof("POST", demo.url, access, nonce)
        assert mcp_post(demo, {"Authorization": f"DPoP {access}", "DPoP": proof}).status_code == 200
