"""Refused credentials (HTTP 401/403) are not transient: AuthenticationFailed at once, never retried.

The error names the headers sent (never their values), says what to do, and keeps the server's
``WWW-Authenticate`` challenge (for the OAuth sign-in to come).
"""

import asyncio
import logging

import pytest

import mcp_tasks_jupyter as mtj

from .server import FaultHTTPServer, Raw, http_fault_server

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]

TOKEN = "s3cr3t-t0ken-value"
METADATA = "http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp"
EXPIRED = (
    f'Bearer realm="x", error="invalid_token", error_description="The access token expired", '
    f'resource_metadata="{METADATA}"'
)


class GatedServer(FaultHTTPServer):
    """The fault server behind a bearer-token gate, as an OAuth resource server puts one in front:
    a request without ``Authorization: Bearer <token>`` (or one ``refuse(method)`` picks) gets a 401."""

    def __init__(self, token: str, challenge: str = EXPIRED) -> None:
        super().__init__()
        self.token = token
        self.challenge = challenge
        self.refuse = lambda method: False
        #: (HTTP method, JSON-RPC method or None) of every request the gate refused.
        self.refused: list[tuple[str, str | None]] = []

    def _app(self):
        import json

        from starlette.requests import Request
        from starlette.responses import JSONResponse

        app = super()._app()

        async def gate(scope, receive, send):
            if scope["type"] != "http":
                return await app(scope, receive, send)
            request = Request(scope, receive)
            body = await request.body()
            method = json.loads(body).get("method") if body else None
            if request.headers.get("authorization") != f"Bearer {self.token}" or self.refuse(request.method):
                self.refused.append((request.method, method))
                response = JSONResponse(
                    {"error": "invalid_token"}, status_code=401, headers={"WWW-Authenticate": self.challenge}
                )
                return await response(scope, receive, send)

            replayed = False

            async def replay():  # the body once more for the app, then whatever comes
                nonlocal replayed
                if replayed:
                    return await receive()
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}

            return await app(scope, replay, send)

        return gate


async def gated(token="right"):
    server = GatedServer(token)
    await server.start()
    return server


def check_names_header_not_value(error: mtj.AuthenticationFailed):
    text = str(error)
    assert "sent header Authorization" in text and TOKEN not in text and "Bearer " + TOKEN not in text
    assert error.header_names == ("Authorization",)
    assert '%mcp_connect NAME --header "Authorization=Bearer ..." URL' in text


async def test_401_mid_task_fails_the_task_at_once():
    async with (
        http_fault_server() as server,
        mtj.connect(server.url, headers={"Authorization": f"Bearer {TOKEN}"}) as client,
    ):
        handle = await client.start_task("job")  # runs until told otherwise
        refused = []

        def expired(message):
            refused.append(message)  # the body echoes the token: the message must not
            return Raw(
                401, f'{{"error": "invalid_token", "token": "{TOKEN}"}}', headers={"WWW-Authenticate": EXPIRED}
            )

        server.brain.script["tasks/get"] = expired
        with pytest.raises(mtj.AuthenticationFailed) as info:
            await asyncio.wait_for(handle, 20)
        assert len(refused) == 1  # failed on the first refusal: no retries
    error = info.value
    assert isinstance(error, mtj.HTTPStatusError) and error.status_code == 401
    check_names_header_not_value(error)
    text = str(error)
    assert "HTTP 401" in text and "for tasks/get" in text and "fault-server" in text
    assert "the server refused the credentials (invalid_token: The access token expired)" in text
    assert "check or renew the token" in text and METADATA in text and "auth=mtj.OAuth()" in text
    assert error.www_authenticate == EXPIRED
    challenge = error.challenge
    assert (challenge.scheme, challenge.realm, challenge.error, challenge.resource_metadata) == (
        "Bearer",
        "x",
        "invalid_token",
        METADATA,
    )


async def test_403_insufficient_scope():
    challenge = (
        f'Bearer error="insufficient_scope", scope="tasks:read tasks:write", resource_metadata="{METADATA}"'
    )
    async with (
        http_fault_server() as server,
        mtj.connect(server.url, headers={"Authorization": f"Bearer {TOKEN}"}) as client,
    ):
        handle = await client.start_task("job")
        refused = []
        server.brain.script["tasks/get"] = lambda m: (
            refused.append(m) or Raw(403, b"", headers={"WWW-Authenticate": challenge})
        )
        with pytest.raises(mtj.AuthenticationFailed) as info:
            await asyncio.wait_for(handle, 20)
        assert len(refused) == 1
    error = info.value
    assert error.status_code == 403 and error.challenge.error == "insufficient_scope"
    assert error.challenge.scope == "tasks:read tasks:write"
    text = str(error)
    assert (
        "the server refused access with these credentials (insufficient_scope: it needs scope "
        "'tasks:read tasks:write')"
    ) in text
    assert "get a token with the scope it needs" in text
    check_names_header_not_value(error)


@pytest.mark.parametrize("protocol_version", [None, "2025-11-25"])
async def test_401_on_connect_fails_the_connect_at_once(protocol_version):
    server = await gated("right")
    try:
        with pytest.raises(mtj.AuthenticationFailed) as info:
            await mtj.connect(
                server.url,
                headers={"Authorization": f"Bearer {TOKEN}"},
                timeout=20,
                protocol_version=protocol_version,
            )
    finally:
        await server.stop()
    # One request, refused: no falling back from the server/discover probe to initialize.
    assert server.refused == [("POST", "server/discover" if protocol_version is None else "initialize")]
    check_names_header_not_value(info.value)
    assert info.value.challenge.error == "invalid_token"


async def test_401_without_credentials_says_none_were_sent():
    server = await gated("right")
    try:
        with pytest.raises(mtj.AuthenticationFailed) as info:
            await mtj.connect(server.url, timeout=20)
    finally:
        await server.stop()
    text = str(info.value)
    assert "the server wants credentials" in text and "no credentials were sent" in text
    assert "connect with credentials" in text and info.value.header_names == ()


async def test_401_on_the_get_stream_stops_reconnecting_and_is_logged_once(caplog):
    server = await gated(TOKEN)
    server.refuse = lambda http_method: http_method == "GET"
    try:
        with caplog.at_level(logging.WARNING, logger="mcp_tasks_jupyter.transport.http"):
            async with mtj.connect(server.url, headers={"Authorization": f"Bearer {TOKEN}"}) as client:
                listener = client.session.transport._listener  # the GET stream's keeper
                await asyncio.wait_for(asyncio.shield(listener), 20)  # it gives up instead of retrying
                assert await client.call_tool("echo", {"a": 1})  # the rest goes on
    finally:
        await server.stop()
    assert [m for m, _ in server.refused] == ["GET"]
    warnings = [r for r in caplog.records if "event stream" in r.getMessage()]
    assert len(warnings) == 1 and "HTTP 401" in warnings[0].getMessage()
    assert TOKEN not in warnings[0].getMessage()
