"""The OAuth 2.1 mechanics, from authlib: the authorization request with PKCE (S256), checking its
answer (``state``, the RFC 9207 ``iss``), and the token requests (authorization code, refresh, client
credentials, the JWT bearer grant, the token exchange at an identity provider) with the client
authentication the registration says (``none``, ``client_secret_basic``, ``client_secret_post``,
``private_key_jwt``) and, for DPoP-bound tokens, a proof on each (a ``use_dpop_nonce`` answer is
answered once, with the server's nonce).

authlib prepares and parses; the requests go out on our httpx client (authlib's own httpx client
integration now wants a second HTTP library). ``resource`` (RFC 8707) rides on every request.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx
from authlib.common.security import generate_token
from authlib.oauth2.auth import ClientAuth
from authlib.oauth2.rfc6749 import OAuth2Token
from authlib.oauth2.rfc6749.parameters import prepare_grant_uri
from authlib.oauth2.rfc7636 import create_s256_code_challenge

from ..errors import SignInFailed
from ..redact import register
from ..transport.http_answers import printable
from .assertions import JWT_BEARER_ASSERTION, SigningKey, client_assertion
from .discovery import ServerMetadata
from .dpop import SCHEME as DPOP_SCHEME, USE_NONCE, DPoPKey
from .store import ClientRegistration, Tokens

MAX_TOKEN_ANSWER_BYTES = 64 * 1024
#: A token said to live longer than this is treated as living this long (numbers from a server are bounded).
MAX_TOKEN_LIFETIME_S = 366 * 86400
#: Grant types and token types of the headless grants (RFC 7523, RFC 8693, the ID-JAG draft).
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
#: Client authentication with a signed assertion (RFC 7523 section 2.2).
PRIVATE_KEY_JWT = "private_key_jwt"
#: What to check when a headless grant is refused.
HEADLESS_HINTS = {
    "client_credentials": "check the client's id and its secret or key",
    "jwt_bearer": "check the identity token (its audience, expiry and issuer) and that this server trusts it",
    "enterprise": "check that the identity provider's grant is for this server and client",
}


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


@dataclass
class Proofs:
    """What a token request carries beyond the client's id and secret: a signed client assertion
    (``private_key_jwt``, RFC 7523) and a DPoP proof (RFC 9449)."""

    signing_key: SigningKey | None = None
    dpop: DPoPKey | None = None


async def exchange_code(
    http: httpx.AsyncClient,
    metadata: ServerMetadata,
    client: ClientRegistration,
    request: AuthorizationRequest,
    code: str,
    resource: str,
    server: str,
    proofs: Proofs | None = None,
) -> Tokens:
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": request.redirect_uri,
        "code_verifier": request.verifier,
        "resource": resource,
    }
    return await _token_request(http, metadata, client, form, None, server, proofs=proofs)


async def refresh(
    http: httpx.AsyncClient,
    metadata: ServerMetadata,
    client: ClientRegistration,
    tokens: Tokens,
    resource: str,
    server: str,
    proofs: Proofs | None = None,
) -> Tokens:
    """New tokens for the refresh token (kept when the server does not rotate it)."""
    assert tokens.refresh_token is not None
    form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token, "resource": resource}
    return await _token_request(http, metadata, client, form, tokens.refresh_token, server, proofs=proofs)


async def client_credentials(
    http: httpx.AsyncClient,
    metadata: ServerMetadata,
    client: ClientRegistration,
    scopes: list[str],
    resource: str,
    server: str,
    proofs: Proofs | None = None,
) -> Tokens:
    """Tokens for the client itself (RFC 6749 section 4.4): no person, no redirect."""
    form = {"grant_type": "client_credentials", "scope": " ".join(scopes), "resource": resource}
    return await _token_request(
        http, metadata, client, form, None, server, grant="client_credentials", proofs=proofs
    )


async def jwt_bearer(
    http: httpx.AsyncClient,
    metadata: ServerMetadata,
    client: ClientRegistration,
    assertion: str,
    scopes: list[str],
    resource: str,
    server: str,
    proofs: Proofs | None = None,
    *,
    grant: str = "jwt_bearer",
) -> Tokens:
    """Tokens for a signed assertion (RFC 7523 section 2.1): a workload's identity token, or the
    authorization grant an identity provider issued (enterprise-managed authorization)."""
    form = {"grant_type": JWT_BEARER, "assertion": assertion, "scope": " ".join(scopes), "resource": resource}
    return await _token_request(http, metadata, client, form, None, server, grant=grant, proofs=proofs)


async def token_exchange(
    http: httpx.AsyncClient,
    token_endpoint: str,
    client: ClientRegistration,
    subject_token: str,
    audience: str,
    resource: str,
    scopes: list[str],
    server: str,
) -> str:
    """The identity provider's authorization grant for this server (an ID-JAG) in exchange for its
    ID token (RFC 8693 token exchange; the enterprise-managed authorization extension)."""
    form = {
        "grant_type": TOKEN_EXCHANGE,
        "requested_token_type": ID_JAG,
        "subject_token": subject_token,
        "subject_token_type": ID_TOKEN,
        "audience": audience,
        "resource": resource,
        "scope": " ".join(scopes),
    }
    idp = ServerMetadata(issuer=None, authorization_endpoint=token_endpoint, token_endpoint=token_endpoint)
    what = f"the token exchange at the identity provider {printable(token_endpoint, 200)}"
    response, data = await _post_token(http, idp, client, form, server, None, what)
    grant = data.get("access_token") if data else None
    if response.status_code != 200 or not isinstance(grant, str) or not grant:
        raise SignInFailed(
            f"{what} was refused: HTTP {response.status_code}{_said(data)}; check the identity token and "
            "idp_client_id",
            server=server,
        )
    if data is not None and data.get("issued_token_type") not in (None, ID_JAG):
        raise SignInFailed(
            f"{what} gave a {printable(str(data.get('issued_token_type')), 80)!r}, not an authorization "
            "grant (ID-JAG)",
            server=server,
        )
    register(grant)
    return grant


async def _post_token(
    http: httpx.AsyncClient,
    metadata: ServerMetadata,
    client: ClientRegistration,
    form: dict[str, str],
    server: str,
    proofs: Proofs | None,
    what: str,
) -> tuple[httpx.Response, dict[str, Any] | None]:
    """POST ``form`` to the token endpoint with the client's authentication (and a DPoP proof,
    answering a ``use_dpop_nonce`` challenge once); the answer and its JSON object."""
    dpop = proofs.dpop if proofs else None
    for attempt in range(2):
        params = {name: value for name, value in form.items() if value}
        if client.auth_method == PRIVATE_KEY_JWT:
            if proofs is None or proofs.signing_key is None:
                raise SignInFailed("private_key_jwt needs the client's private key", server=server)
            params["client_assertion_type"] = JWT_BEARER_ASSERTION
            params["client_assertion"] = client_assertion(
                proofs.signing_key, client.client_id, metadata.issuer or metadata.token_endpoint
            )
        headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
        url, body = metadata.token_endpoint, urlencode(params)
        if client.client_id:  # (a workload's identity token may be all the authentication there is)
            method = "none" if client.auth_method == PRIVATE_KEY_JWT else client.auth_method
            auth = ClientAuth(client.client_id, client.client_secret, method)
            url, headers, body = auth.prepare("POST", url, headers, body)
            register(headers.get("Authorization"))
        if dpop is not None:
            headers["DPoP"] = dpop.proof("POST", metadata.token_endpoint)
        try:
            response = await http.post(url, content=body, headers=headers)
        except httpx.HTTPError as exc:
            raise SignInFailed(f"{what} failed: {type(exc).__name__}: {exc}", server=server) from None
        data = _json_object(response)
        if dpop is not None:
            fresh = dpop.note_nonce(metadata.token_endpoint, response.headers.get("DPoP-Nonce"))
            challenged = response.status_code in (400, 401) and data and data.get("error") == USE_NONCE
            if challenged and fresh and attempt == 0:
                continue  # RFC 9449 section 8: again, with the nonce the server gave
        return response, data
    raise AssertionError("unreachable")


def _said(data: dict[str, Any] | None) -> str:
    """`` (error: description)`` from an OAuth error answer, printable and bounded ("" without one)."""
    error = data.get("error") if data else None
    if not error:
        return ""
    said = f" ({printable(str(error), 100)}"
    if data and data.get("error_description"):
        said += f": {printable(str(data['error_description']), 300)}"
    return said + ")"


async def _token_request(
    http: httpx.AsyncClient,
    metadata: ServerMetadata,
    client: ClientRegistration,
    form: dict[str, str],
    old_refresh: str | None,
    server: str,
    *,
    grant: str | None = None,
    proofs: Proofs | None = None,
) -> Tokens:
    what = f"the token request to {printable(metadata.token_endpoint, 200)}"
    response, data = await _post_token(http, metadata, client, form, server, proofs, what)
    if response.status_code != 200 or data is None or not isinstance(data.get("access_token"), str):
        said = _said(data)
        if grant is not None:
            raise SignInFailed(
                f"the {grant} grant was refused: the token endpoint {printable(metadata.token_endpoint, 200)} "
                f"answered HTTP {response.status_code}{said}; {HEADLESS_HINTS.get(grant, 'check the client')}",
                server=server,
            )
        raise SignInFailed(
            f"the token endpoint {printable(metadata.token_endpoint, 200)} answered HTTP "
            f"{response.status_code}{said}; sign in again (%mcp_login NAME, or reconnect)",
            server=server,
        )
    return _tokens(data, old_refresh, server, dpop=proofs is not None and proofs.dpop is not None)


def _json_object(response: httpx.Response) -> dict[str, Any] | None:
    if len(response.content) > MAX_TOKEN_ANSWER_BYTES:
        return None
    try:
        data = json.loads(response.content)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _tokens(data: dict[str, Any], old_refresh: str | None, server: str, *, dpop: bool = False) -> Tokens:
    token_type = data.get("token_type")
    kind = token_type.lower() if isinstance(token_type, str) else None
    if kind != "bearer" and not (dpop and kind == "dpop"):
        raise SignInFailed(
            f"the token endpoint gave a {printable(str(token_type), 40)!r} token, not "
            + ("Bearer or DPoP" if dpop else "Bearer"),
            server=server,
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
        token_type=DPOP_SCHEME if kind == "dpop" else "Bearer",
        refresh_token=refresh_token,
        expires_at=float(expires_at) if isinstance(expires_at, (int, float)) else None,
        scope=scope if isinstance(scope, str) else None,
    )
