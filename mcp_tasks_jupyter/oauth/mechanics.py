"""The OAuth 2.1 mechanics, from authlib: the authorization request with PKCE (S256), checking its
answer (``state``, the RFC 9207 ``iss``), and the token requests (authorization code, refresh) with
the client authentication the registration says (``none``, ``client_secret_basic``, ``client_secret_post``).

authlib prepares and parses; the requests go out on our httpx client (authlib's own httpx client
integration now wants a second HTTP library). ``resource`` (RFC 8707) rides on every request.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx
from authlib.common.security import generate_token
from authlib.oauth2.auth import ClientAuth
from authlib.oauth2.rfc6749 import OAuth2Token
from authlib.oauth2.rfc6749.parameters import prepare_grant_uri, prepare_token_request
from authlib.oauth2.rfc7636 import create_s256_code_challenge

from ..errors import SignInFailed
from ..redact import register
from ..transport.http_answers import printable
from .discovery import ServerMetadata
from .store import ClientRegistration, Tokens

MAX_TOKEN_ANSWER_BYTES = 64 * 1024
#: A token said to live longer than this is treated as living this long (numbers from a server are bounded).
MAX_TOKEN_LIFETIME_S = 366 * 86400


@dataclass
class AuthorizationRequest:
    url: str
    state: str
    verifier: str
    redirect_uri: str


def authorization_request(
    metadata: ServerMetadata,
    client: ClientRegistration,
    redirect_uri: str,
    scopes: list[str],
    resource: str,
) -> AuthorizationRequest:
    """The URL a person opens to sign in, with a fresh ``state`` and PKCE verifier."""
    verifier = generate_token(64)
    state = generate_token(32)
    url = prepare_grant_uri(
        metadata.authorization_endpoint,
        client.client_id,
        "code",
        redirect_uri=redirect_uri,
        scope=" ".join(scopes) if scopes else None,
        state=state,
        code_challenge=create_s256_code_challenge(verifier),
        code_challenge_method="S256",
        resource=resource,
    )
    return AuthorizationRequest(url, state, verifier, redirect_uri)


def code_from(answer: dict[str, str], request: AuthorizationRequest, metadata: ServerMetadata, server: str) -> str:
    """The authorization code from the redirect's parameters, once ``state`` and ``iss`` check out."""
    if answer.get("state") != request.state:
        raise SignInFailed("the sign-in answer does not belong to this sign-in (state differs)", server=server)
    iss = answer.get("iss")
    if iss is not None or metadata.iss_parameter_supported:
        # RFC 9207: compared as strings, no normalisation; required when the server advertises it.
        if iss is None:
            raise SignInFailed(
                "the authorization server promises an iss parameter in its answer but sent none: not "
                "using the code (it could come from another server)",
                server=server,
            )
        if metadata.issuer is None or iss != metadata.issuer:
            raise SignInFailed(
                f"the sign-in answer comes from issuer {printable(iss, 200)!r}, not "
                f"{printable(str(metadata.issuer), 200)!r}: not using the code (RFC 9207)",
                server=server,
            )
    if "error" in answer:
        reason = answer["error"]
        if answer.get("error_description"):
            reason += f": {answer['error_description']}"
        raise SignInFailed(f"sign-in was not granted ({printable(reason, 300)})", server=server)
    code = answer.get("code")
    if not code:
        raise SignInFailed("the sign-in answer carries no authorization code", server=server)
    return code


async def exchange_code(
    http: httpx.AsyncClient,
    metadata: ServerMetadata,
    client: ClientRegistration,
    request: AuthorizationRequest,
    code: str,
    resource: str,
    server: str,
) -> Tokens:
    body = prepare_token_request(
        "authorization_code",
        code=code,
        redirect_uri=request.redirect_uri,
        code_verifier=request.verifier,
        resource=resource,
    )
    return await _token_request(http, metadata, client, body, None, server)


async def refresh(
    http: httpx.AsyncClient,
    metadata: ServerMetadata,
    client: ClientRegistration,
    tokens: Tokens,
    resource: str,
    server: str,
) -> Tokens:
    """New tokens for the refresh token (kept when the server does not rotate it)."""
    assert tokens.refresh_token is not None
    body = prepare_token_request("refresh_token", refresh_token=tokens.refresh_token, resource=resource)
    return await _token_request(http, metadata, client, body, tokens.refresh_token, server)


async def client_credentials(
    http: httpx.AsyncClient,
    metadata: ServerMetadata,
    client: ClientRegistration,
    scopes: list[str],
    resource: str,
    server: str,
) -> Tokens:
    """Tokens for the client itself (RFC 6749 section 4.4): no person, no redirect."""
    body = prepare_token_request(
        "client_credentials", scope=" ".join(scopes) if scopes else None, resource=resource
    )
    return await _token_request(http, metadata, client, body, None, server, grant="client_credentials")


async def _token_request(
    http: httpx.AsyncClient,
    metadata: ServerMetadata,
    client: ClientRegistration,
    body: str,
    old_refresh: str | None,
    server: str,
    *,
    grant: str | None = None,
) -> Tokens:
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
    auth = ClientAuth(client.client_id, client.client_secret, client.auth_method)
    url, headers, body = auth.prepare("POST", metadata.token_endpoint, headers, body)
    register(headers.get("Authorization"))
    try:
        response = await http.post(url, content=body, headers=headers)
    except httpx.HTTPError as exc:
        raise SignInFailed(
            f"the token request to {printable(metadata.token_endpoint, 200)} failed: {type(exc).__name__}: {exc}",
            server=server,
        ) from None
    data = _json_object(response)
    if response.status_code != 200 or data is None or not isinstance(data.get("access_token"), str):
        error = data.get("error") if data else None
        said = f" ({printable(str(error), 100)}" if error else ""
        if data and data.get("error_description"):
            said += f": {printable(str(data['error_description']), 300)}"
        said += ")" if error else ""
        if grant is not None:
            raise SignInFailed(
                f"the {grant} grant was refused: the token endpoint {printable(metadata.token_endpoint, 200)} "
                f"answered HTTP {response.status_code}{said}; check the client's credentials",
                server=server,
            )
        raise SignInFailed(
            f"the token endpoint {printable(metadata.token_endpoint, 200)} answered HTTP "
            f"{response.status_code}{said}; sign in again (%mcp_login NAME, or reconnect)",
            server=server,
        )
    return _tokens(data, old_refresh, server)


def _json_object(response: httpx.Response) -> dict[str, Any] | None:
    if len(response.content) > MAX_TOKEN_ANSWER_BYTES:
        return None
    try:
        data = json.loads(response.content)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _tokens(data: dict[str, Any], old_refresh: str | None, server: str) -> Tokens:
    token_type = data.get("token_type")
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        raise SignInFailed(
            f"the token endpoint gave a {printable(str(token_type), 40)!r} token, not Bearer", server=server
        )
    expires_in = data.get("expires_in")
    if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool) and expires_in == expires_in:
        data["expires_in"] = max(0, min(int(expires_in), MAX_TOKEN_LIFETIME_S))
    else:
        data.pop("expires_in", None)
        data.pop("expires_at", None)
    token = OAuth2Token.from_dict(dict(data, expires_at=None) if "expires_in" in data else data)
    refresh_token = data.get("refresh_token") if isinstance(data.get("refresh_token"), str) else old_refresh
    expires_at = token.get("expires_at")
    access_token = str(data["access_token"])
    register(access_token)
    register(refresh_token)
    scope = data.get("scope")
    return Tokens(
        access_token=access_token,
        token_type="Bearer",
        refresh_token=refresh_token,
        expires_at=float(expires_at) if isinstance(expires_at, (int, float)) else None,
        scope=scope if isinstance(scope, str) else None,
    )
