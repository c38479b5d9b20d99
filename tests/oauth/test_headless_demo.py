"""Headless sign-in against the OAuth-protected demo server (``demo --http --auth`` with a pre-registered
confidential client, a real subprocess): the client credentials grant runs a task with nobody to ask,
and a wrong secret fails at once, naming the grant, without showing the secret."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mcp_tasks_jupyter as mtj
from tests.support.auth_demo import start_auth_demo

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

CLIENT_ID = "papermill-job"
SECRET = "demo-client-secret-for-headless-tests-0123"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def nobody(url: str) -> None:
    raise AssertionError(f"a headless grant asked a person to open {url}")


async def test_client_credentials_run_a_task_with_nobody_to_ask(tmp_path: Path) -> None:
    secret_file = tmp_path / "secret"
    secret_file.write_text(SECRET + "\n")
    store = tmp_path / "tokens"
    with start_auth_demo(client_id=CLIENT_ID, client_secret=SECRET, scopes="mcp:tools offline_access") as demo:
        auth = mtj.OAuth(
            grant="client_credentials",
            client_id=CLIENT_ID,
            client_secret_file=secret_file,
            token_store=store,
            open_url=nobody,
        )
        async with mtj.connect(demo.url, auth=auth) as client:
            task = await client.start_task("slow_compute", {"seconds": 1})
            result = await task
            assert not result.is_error, result.text
            described = json.dumps(client.describe(), default=str)
        output = demo.output()
    [kept] = [json.loads(path.read_text()) for path in store.glob("*.json")]
    assert kept["tokens"]["refresh_token"] is None  # the grant itself gets new tokens
    assert kept["client"]["client_secret"] is None  # the secret stays in its file
    access = kept["tokens"]["access_token"]
    for secret in (SECRET, access):
        assert secret not in described + output + repr(task) + repr(auth)


async def test_a_wrong_secret_fails_at_once_naming_the_grant(tmp_path: Path) -> None:
    wrong = "a-wrong-client-secret-0123456789"
    with start_auth_demo(client_id=CLIENT_ID, client_secret=SECRET) as demo:
        auth = mtj.OAuth(
            grant="client_credentials",
            client_id=CLIENT_ID,
            client_secret=wrong,
            token_store=tmp_path,
            open_url=nobody,
        )
        with pytest.raises(mtj.SignInFailed) as failure:  # not a timeout: nobody was waited for
            await mtj.connect(demo.url, auth=auth, timeout=30)
    said = str(failure.value)
    assert "the client_credentials grant was refused" in said
    assert "invalid_client" in said and "wrong client secret" in said
    assert wrong not in said and SECRET not in said
