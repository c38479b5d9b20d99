"""Finding where to sign in: protected resource metadata (RFC 9728), then the authorization
server's metadata (RFC 8414, OpenID Connect discovery), as the MCP authorization spec orders them.

Checked before anything is used: the resource the metadata names must be this server (same origin,
a prefix of its path), and the authorization server's ``issuer`` must be the one its well-known URL
was built from. A server that publishes no resource metadata is a 2025-03-26 one: its origin is the
authorization server, with ``/authorize``, ``/token`` and ``/register`` when it has no metadata either.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from ..errors import SignInFailed
from ..transport.http_answers import printable

MAX_METADATA_BYTES = 256 * 1024
RESOURCE_WELL_KNOWN = "/.well-known/oauth-protected-resource"
OAUTH_WELL_KNOWN = "/.well-known/oauth-authorization-server"
OPENID_WELL_KNOWN = "/.well-known/openid-configuration"


@dataclass
class ResourceMetadata:
    """What the server says about itself as an OAuth protected resource."""

    resource: str
    authorization_servers: list[str]
    scopes_supported: list[str] | None = None
    url: str | None = None  # where it was read (None: the server publishes none)


@dataclass
class ServerMetadata:
    """An authorization server's endpoints and what it supports."""

    issuer: str | None  # None: a 2025-03-26 server without metadata (nothing to check ``iss`` against)
    authorization_endpoint: str
    token_endpoint: str
    registration_endpoint: str | None = None
    scopes_supported: list[str] | None = None
    token_endpoint_auth_methods: list[str] = field(default_factory=lambda: ["client_secret_basic"])
    code_challenge_methods: list[str] | None = None
    iss_parameter_supported: bool = False
    client_id_metadata_documents: bool = False
    #: ``dpop_signing_alg_values_supported`` (RFC 9449): None when it does not say it supports DPoP.
    dpop_algorithms: list[str] | None = None
    grant_types: list[str] | None = None


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def covers(resource: str, server_url: str) -> bool:
    """Whether ``resource`` names the server at ``server_url``: same scheme, host and port, and its
    path is the server's path or a parent of it (on a ``/`` boundary)."""
    try:
        a, b = urlsplit(resource), urlsplit(server_url)
        if (a.scheme.lower(), a.hostname, a.port) != (b.scheme.lower(), b.hostname, b.port):
            return False
    except ValueError:
        return False
    if a.query or a.fragment:
        return False
    prefix = a.path.rstrip("/")
    path = b.path.rstrip("/")
    return path == prefix or path.startswith(prefix + "/")


def resource_metadata_urls(server_url: str, hinted: str | None) -> list[str]:
    """Where to look, in the spec's order: the challenge's ``resource_metadata``, then the well-known
    URL with the server's path inserted, then the one at the root."""
    urls = [hinted] if hinted else []
    path = urlsplit(server_url).path.rstrip("/")
    origin = origin_of(server_url)
    if path:
        urls.append(f"{origin}{RESOURCE_WELL_KNOWN}{path}")
    urls.append(f"{origin}{RESOURCE_WELL_KNOWN}")
    return list(dict.fromkeys(urls))


def server_metadata_urls(issuer: str) -> list[str]:
    """RFC 8414 then OpenID Connect discovery, path-inserted first for an issuer with a path."""
    path = urlsplit(issuer).path.rstrip("/")
    origin = origin_of(issuer)
    if path:
        return [
            f"{origin}{OAUTH_WELL_KNOWN}{path}",
            f"{origin}{OPENID_WELL_KNOWN}{path}",
            f"{origin}{path}{OPENID_WELL_KNOWN}",
        ]
    return [f"{origin}{OAUTH_WELL_KNOWN}", f"{origin}{OPENID_WELL_KNOWN}"]


async def fetch_json(http: httpx.AsyncClient, url: str, server: str) -> dict[str, Any] | None:
    """The JSON object at ``url``, or None when there is none (4xx, not JSON). Bounded in size."""
    try:
        async with http.stream("GET", url, headers={"Accept": "application/json"}) as response:
            if response.status_code != 200:
                return None
            body = b""
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_METADATA_BYTES:
                    raise SignInFailed(f"the metadata at {printable(url, 200)} is over 256 KiB", server=server)
    except httpx.HTTPError as exc:
        raise SignInFailed(
            f"cannot read OAuth metadata at {printable(url, 200)}: {type(exc).__name__}: {exc}", server=server
        ) from None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _strings(value: Any) -> list[str] | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def _http_url(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(("https://", "http://")) and len(value) <= 2048


async def discover_resource(
    http: httpx.AsyncClient, server_url: str, hinted: str | None, server: str
) -> ResourceMetadata | None:
    """The server's protected resource metadata, checked; None when it publishes none."""
    for url in resource_metadata_urls(server_url, hinted):
        data = await fetch_json(http, url, server)
        if data is None:
            continue
        resource = data.get("resource")
        servers = _strings(data.get("authorization_servers"))
        if not isinstance(resource, str) or not servers or not all(_http_url(s) for s in servers):
            raise SignInFailed(
                f"the protected resource metadata at {printable(url, 200)} has no valid resource or "
                "authorization_servers",
                server=server,
            )
        if not covers(resource, server_url):
            raise SignInFailed(
                f"the protected resource metadata names resource {printable(resource, 200)!r}, which is not "
                f"this server ({printable(server_url, 200)}): not signing in (a token for it could be "
                "used elsewhere)",
                server=server,
            )
        return ResourceMetadata(resource, servers, _strings(data.get("scopes_supported")), url)
    return None


def _issuer_matches(listed: str, issuer: Any) -> bool:
    return isinstance(issuer, str) and (issuer == listed or issuer == listed.rstrip("/"))


async def discover_server(http: httpx.AsyncClient, issuer: str, server: str) -> ServerMetadata:
    """The authorization server's metadata, its ``issuer`` checked against ``issuer``."""
    for url in server_metadata_urls(issuer):
        data = await fetch_json(http, url, server)
        if data is None:
            continue
        if not _issuer_matches(issuer, data.get("issuer")):
            raise SignInFailed(
                f"the authorization server metadata at {printable(url, 200)} names issuer "
                f"{printable(str(data.get('issuer')), 200)!r}, not {printable(issuer, 200)!r}: not using it "
                "(RFC 8414 section 3.3)",
                server=server,
            )
        return _server_metadata(data, str(data["issuer"]), url, server)
    raise SignInFailed(
        f"the authorization server {printable(issuer, 200)} publishes no metadata "
        f"(looked at {', '.join(server_metadata_urls(issuer))})",
        server=server,
    )


async def discover_legacy(
    http: httpx.AsyncClient, server_url: str, server: str, *, defaults: bool = True
) -> ServerMetadata | None:
    """A 2025-03-26 server: its origin is the authorization server; metadata there, else the default
    endpoints (None instead when not ``defaults``)."""
    origin = origin_of(server_url)
    for url in (f"{origin}{OAUTH_WELL_KNOWN}", f"{origin}{OPENID_WELL_KNOWN}"):
        data = await fetch_json(http, url, server)
        if data is not None:
            issuer = data.get("issuer")
            return _server_metadata(data, issuer if isinstance(issuer, str) else None, url, server)
    if not defaults:
        return None
    return ServerMetadata(
        issuer=None,
        authorization_endpoint=f"{origin}/authorize",
        token_endpoint=f"{origin}/token",
        registration_endpoint=f"{origin}/register",
    )


def _server_metadata(data: dict[str, Any], issuer: str | None, url: str, server: str) -> ServerMetadata:
    authorize, token = data.get("authorization_endpoint"), data.get("token_endpoint")
    if not _http_url(authorize) or not _http_url(token):
        raise SignInFailed(
            f"the authorization server metadata at {printable(url, 200)} lacks a valid authorization_endpoint "
            "or token_endpoint",
            server=server,
        )
    registration = data.get("registration_endpoint")
    methods = _strings(data.get("code_challenge_methods_supported"))
    if methods is not None and "S256" not in methods:
        raise SignInFailed(
            f"the authorization server {printable(str(issuer), 200)} does not support PKCE with S256 "
            f"(it offers {', '.join(methods) or 'nothing'}): signing in there would not be safe",
            server=server,
        )
    return ServerMetadata(
        issuer=issuer,
        authorization_endpoint=str(authorize),
        token_endpoint=str(token),
        registration_endpoint=str(registration) if _http_url(registration) else None,
        scopes_supported=_strings(data.get("scopes_supported")),
        token_endpoint_auth_methods=_strings(data.get("token_endpoint_auth_methods_supported"))
        or ["client_secret_basic"],
        code_challenge_methods=methods,
        iss_parameter_supported=data.get("authorization_response_iss_parameter_supported") is True,
        client_id_metadata_documents=data.get("client_id_metadata_document_supported") is True,
        dpop_algorithms=_strings(data.get("dpop_signing_alg_values_supported")),
        grant_types=_strings(data.get("grant_types_supported")),
    )
