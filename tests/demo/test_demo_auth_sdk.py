"""An OAuth client we did not write, the ``mcp`` SDK's (``OAuthClientProvider``), signs in to
``demo --http --auth`` by discovery and dynamic registration, and signs in again after its token expires."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from tests.support.auth_demo import REDIRECT_URI, start_auth_demo

pytestmark = pytest.mark.anyio


class MemoryStorage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


async def test_the_mcp_sdk_client_signs_in_and_again_after_an_expiry() -> None:
    redirects: list[dict[str, list[str]]] = []

    async def open_url(url: str) -> None:  # the "browser": one GET, the redirect read, not followed
        async with httpx.AsyncClient() as http:
            answer = await http.get(url, follow_redirects=False, timeout=10)
        assert answer.status_code == 302, answer.text
        redirects.append(parse_qs(urlsplit(answer.headers["location"]).query))

    async def callback() -> tuple[str, str | None]:
        return redirects[-1]["code"][0], redirects[-1]["state"][0]

    storage = MemoryStorage()
    metadata = OAuthClientMetadata(
        redirect_uris=[REDIRECT_URI], token_endpoint_auth_method="none", client_name="mcp sdk"
    )
    with start_auth_demo(token_ttl=1) as demo, anyio.fail_after(60):
        provider = OAuthClientProvider(demo.url, metadata, storage, open_url, callback)
        async with (
            httpx.AsyncClient(auth=provider, timeout=10) as http,
            streamable_http_client(demo.url, http_client=http) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            assert "echo" in [tool.name for tool in (await session.list_tools()).tools]
            while len(redirects) < 2:  # until the token has expired and the SDK signed in again
                result = await session.call_tool("echo", {"text": "hello"})
                assert result.content[0].text == "hello"
                await anyio.sleep(0.2)
    assert all(redirect["iss"] == [demo.issuer] for redirect in redirects)
    assert storage.tokens is not None and storage.tokens.scope == "mcp:tools"  # the challenge's scope
