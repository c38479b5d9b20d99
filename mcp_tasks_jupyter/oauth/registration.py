"""Who this client is to an authorization server, in the MCP spec's order of preference:
credentials registered beforehand, then a Client ID Metadata Document (the client id is the URL
where its metadata is published), then dynamic client registration (RFC 7591).

A registration belongs to the issuer that made it: one kept for another authorization server (the
server moved to a new one) is never shown to this one.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from ..errors import SignInFailed
from ..redact import register
from ..transport.http_answers import printable
from .discovery import ServerMetadata
from .mechanics import DEVICE_CODE
from .settings import OAuth
from .store import ClientRegistration

SECRET_METHODS = ("client_secret_basic", "client_secret_post")
MAX_REGISTRATION_BYTES = 64 * 1024


def secret_method(metadata: ServerMetadata) -> str:
    """How a client with a secret authenticates at the token endpoint: Basic unless only POST is offered."""
    offered = metadata.token_endpoint_auth_methods
    for method in SECRET_METHODS:
        if method in offered:
            return method
    return "client_secret_basic"


def issuer_key(metadata: ServerMetadata) -> str:
    return metadata.issuer or metadata.token_endpoint


async def client_for(
    http: httpx.AsyncClient,
    metadata: ServerMetadata,
    settings: OAuth,
    redirect_uri: str,
    kept: ClientRegistration | None,
    server: str,
) -> ClientRegistration:
    """The registration to use with this authorization server (registering when needed)."""
    issuer = issuer_key(metadata)
    if settings.client_id:
        method = secret_method(metadata) if settings.client_secret else "none"
        return ClientRegistration(issuer, settings.client_id, settings.client_secret, method, redirect_uri)
    if kept is not None and kept.issuer == issuer and kept.redirect_uri == redirect_uri:
        return kept
    if metadata.client_id_metadata_documents and settings.client_metadata_url:
        return ClientRegistration(issuer, settings.client_metadata_url, None, "none", redirect_uri)
    if metadata.registration_endpoint:
        return await register_client(http, metadata, settings, redirect_uri, server)
    raise SignInFailed(
        "the authorization server "
        f"{printable(str(metadata.issuer), 200)} offers no dynamic client registration: register a client "
        "there and pass its credentials, e.g. mtj.OAuth(client_id=..., client_secret=...)",
        server=server,
    )


async def register_client(
    http: httpx.AsyncClient, metadata: ServerMetadata, settings: OAuth, redirect_uri: str | None, server: str
) -> ClientRegistration:
    """Dynamic client registration: a public client when the server allows it, else one with a secret.
    Without a ``redirect_uri``, a client of the device authorization grant (RFC 8628)."""
    assert metadata.registration_endpoint is not None
    offered = metadata.token_endpoint_auth_methods
    method = "none" if "none" in offered else secret_method(metadata)
    request: dict[str, Any] = {
        "client_name": settings.client_name,
        # A client on the person's machine, answered on a loopback redirect (SEP-837, OIDC registration), or
        # by a code entered elsewhere; answered through a Jupyter server's https route, it is a web client.
        "application_type": "web"
        if redirect_uri is not None and not redirect_uri.startswith(("http://127.0.0.1:", "http://localhost:"))
        else "native",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
    }
    if redirect_uri is None:  # the device grant: the person enters a code elsewhere, nothing comes back
        del request["redirect_uris"]
        request.update(grant_types=[DEVICE_CODE, "refresh_token"], response_types=[])
    try:
        response = await http.post(metadata.registration_endpoint, json=request)
    except httpx.HTTPError as exc:
        raise SignInFailed(
            f"client registration at {printable(metadata.registration_endpoint, 200)} failed: "
            f"{type(exc).__name__}: {exc}",
            server=server,
        ) from None
    if response.status_code not in (200, 201) or len(response.content) > MAX_REGISTRATION_BYTES:
        raise SignInFailed(
            f"client registration at {printable(metadata.registration_endpoint, 200)} answered "
            f"HTTP {response.status_code}: {printable(response.text, 300)}; register a client there by hand "
            "and pass mtj.OAuth(client_id=..., client_secret=...)",
            server=server,
        )
    try:
        data = json.loads(response.content)
    except ValueError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("client_id"), str) or not data["client_id"]:
        raise SignInFailed(
            f"client registration at {printable(metadata.registration_endpoint, 200)} gave no client_id",
            server=server,
        )
    secret = data.get("client_secret") if isinstance(data.get("client_secret"), str) else None
    register(secret)
    answered = data.get("token_endpoint_auth_method")
    if answered not in ("none", *SECRET_METHODS):
        answered = method if (secret or method == "none") else "none"
    if answered != "none" and not secret:
        answered = "none"
    return ClientRegistration(issuer_key(metadata), data["client_id"], secret, str(answered), redirect_uri)
