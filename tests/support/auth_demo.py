"""The OAuth-protected demo server (``python -m mcp_tasks_jupyter.demo --http --auth``) for tests, and a
plain-httpx walk through its sign-in (no client library), to get tokens or to check each step.

::

    with start_auth_demo(token_ttl=2) as demo:       # a free port on 127.0.0.1
        demo.url                                     # http://127.0.0.1:P/mcp, the resource
        demo.issuer                                  # http://127.0.0.1:P, the authorization server
        tokens = sign_in(demo)                       # register (none), authorize, token
        httpx.post(demo.url, headers={"Authorization": f"Bearer {tokens.access_token}", ...})
        tokens = refresh(demo, tokens)               # rotated refresh token
        demo.output()                                # the server's stdout and stderr so far

Every request of this module has a timeout; the server process is always stopped at the end.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from .demo_server import demo_argv
from .paths import PYTHON
from .processes import PeerProcess, python_env, spawn, wait_for_stdout

START_TIMEOUT = 30.0
TIMEOUT = 10.0
LISTENING_LINE = r"listening on (http://127\.0\.0\.1:\d+/mcp)"
#: What a test client registers unless told otherwise (nothing listens there: the redirect is not followed).
REDIRECT_URI = "http://127.0.0.1:53682/callback"


@dataclass(frozen=True)
class AuthDemo:
    """A running ``demo --http --auth``: its URLs, and its output."""

    url: str
    process: PeerProcess

    @property
    def issuer(self) -> str:
        return self.url.removesuffix("/mcp")

    @property
    def resource_metadata_url(self) -> str:
        """The path-inserted RFC 9728 URL (the one the 401 challenge names)."""
        return f"{self.issuer}/.well-known/oauth-protected-resource/mcp"

    @property
    def authorization_server_metadata_url(self) -> str:
        return f"{self.issuer}/.well-known/oauth-authorization-server"

    @property
    def registration_endpoint(self) -> str:
        return f"{self.issuer}/register"

    @property
    def authorization_endpoint(self) -> str:
        return f"{self.issuer}/authorize"

    @property
    def token_endpoint(self) -> str:
        return f"{self.issuer}/token"

    def output(self) -> str:
        """Everything the server wrote to stdout and stderr so far."""
        return "\n".join(
            path.read_text(errors="replace") if path.exists() else ""
            for path in (self.process.stdout_path, self.process.stderr_path)
        )


@contextmanager
def start_auth_demo(
    *extra_args: str,
    token_ttl: int = 3600,
    scopes: str = "mcp:tools offline_access",
    tool_scopes: Mapping[str, str] | None = None,
    client_id: str | None = None,
    client_secret: str | None = None,
    dpop: bool = False,
    dpop_nonce: bool = False,
) -> Iterator[AuthDemo]:
    """Run ``demo --http --port 0 --auth --token-ttl N --auth-scopes S [--auth-tool-scope T=S]...
    [--auth-client-id ID [--auth-client-secret SECRET]] [--auth-dpop [--auth-dpop-nonce]] ARGS`` for
    the block and yield it once it listens. ``extra_args`` go to the demo (``--faults`` and
    ``--conformance`` too: then it is tests/support/demo_server.py)."""
    argv = ["--http", "--port", "0", "--auth", "--token-ttl", str(token_ttl), "--auth-scopes", scopes]
    for tool, scope in (tool_scopes or {}).items():
        argv += ["--auth-tool-scope", f"{tool}={scope}"]
    if client_id is not None:
        argv += ["--auth-client-id", client_id]
    if client_secret is not None:
        argv += ["--auth-client-secret", client_secret]
    argv += ["--auth-dpop"] * dpop + ["--auth-dpop-nonce"] * dpop_nonce
    with spawn(demo_argv(*argv, *extra_args, python=PYTHON), env=python_env()) as process:
        url = wait_for_stdout(process, LISTENING_LINE, START_TIMEOUT).group(1)
        yield AuthDemo(url, process)


# -- a sign-in by hand ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Pkce:
    verifier: str
    challenge: str

    @classmethod
    def new(cls) -> Pkce:
        verifier = secrets.token_urlsafe(48)
        digest = hashlib.sha256(verifier.encode()).digest()
        return cls(verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode())


@dataclass(frozen=True)
class RegisteredClient:
    """What ``/register`` answered (``client_secret`` is None for ``none``), or a pre-registered client
    (``RegisteredClient(ID, SECRET, "client_secret_basic", REDIRECT_URI)``)."""

    client_id: str
    client_secret: str | None
    auth_method: str
    redirect_uri: str
    metadata: dict[str, Any] = field(default_factory=dict, repr=False)

    def token_auth(self, form: dict[str, str]) -> dict[str, Any]:
        """httpx keyword arguments for a token request with this client's authentication."""
        if self.auth_method == "client_secret_basic":
            assert self.client_secret is not None
            return {"data": form, "auth": (self.client_id, self.client_secret)}
        extra = {"client_id": self.client_id}
        if self.auth_method == "client_secret_post":
            assert self.client_secret is not None
            extra["client_secret"] = self.client_secret
        return {"data": {**form, **extra}}


@dataclass(frozen=True)
class Tokens:
    """A token response, and the client it was issued to (``refresh_token`` may be None)."""

    client: RegisteredClient
    access_token: str
    refresh_token: str | None
    scope: str
    expires_in: int

    @property
    def bearer(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.access_token}"}


def register(
    demo: AuthDemo,
    *,
    auth_method: str = "none",
    redirect_uri: str = REDIRECT_URI,
    grant_types: tuple[str, ...] = ("authorization_code", "refresh_token"),
) -> RegisteredClient:
    answer = httpx.post(
        demo.registration_endpoint,
        json={
            "client_name": "auth-demo tests",
            "redirect_uris": [redirect_uri],
            "token_endpoint_auth_method": auth_method,
            "grant_types": list(grant_types),
            "response_types": ["code"],
        },
        timeout=TIMEOUT,
    )
    assert answer.status_code == 201, answer.text
    body = answer.json()
    return RegisteredClient(body["client_id"], body.get("client_secret"), auth_method, redirect_uri, body)


def authorize(demo: AuthDemo, client: RegisteredClient, pkce: Pkce, **params: str) -> httpx.Response:
    """``GET /authorize`` (redirects not followed) with the usual parameters; ``params`` override or
    add some (an empty string removes one)."""
    query = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": client.redirect_uri,
        "code_challenge": pkce.challenge,
        "code_challenge_method": "S256",
        "state": secrets.token_urlsafe(8),
        "resource": demo.url,
        "scope": "mcp:tools offline_access",
        **params,
    }
    query = {name: value for name, value in query.items() if value != ""}
    return httpx.get(demo.authorization_endpoint, params=query, timeout=TIMEOUT, follow_redirects=False)


def redirect_params(response: httpx.Response) -> dict[str, str]:
    """The query of a 302's ``Location`` (one value per name)."""
    assert response.status_code == 302, (response.status_code, response.text)
    query = parse_qs(urlsplit(response.headers["location"]).query, keep_blank_values=True)
    assert all(len(values) == 1 for values in query.values()), query
    return {name: values[0] for name, values in query.items()}


def token_request(demo: AuthDemo, client: RegisteredClient, form: dict[str, str]) -> httpx.Response:
    """``POST /token`` with ``form`` and the client's registered authentication."""
    return httpx.post(demo.token_endpoint, timeout=TIMEOUT, **client.token_auth(form))


def _tokens(client: RegisteredClient, answer: httpx.Response) -> Tokens:
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["token_type"] == "Bearer"
    return Tokens(client, body["access_token"], body.get("refresh_token"), body["scope"], body["expires_in"])


def sign_in(
    demo: AuthDemo,
    *,
    scope: str = "mcp:tools offline_access",
    auth_method: str = "none",
    client: RegisteredClient | None = None,
) -> Tokens:
    """Register (unless ``client`` is given), authorize and redeem the code: the tokens."""
    client = client or register(demo, auth_method=auth_method)
    return _tokens(client, token_request(demo, client, code_form(demo, client, scope=scope)))


def code_form(
    demo: AuthDemo, client: RegisteredClient, *, scope: str = "mcp:tools offline_access"
) -> dict[str, str]:
    """Authorize ``client``: the token request's form that redeems its code (without client authentication)."""
    pkce = Pkce.new()
    params = redirect_params(authorize(demo, client, pkce, scope=scope))
    return {
        "grant_type": "authorization_code",
        "code": params["code"],
        "redirect_uri": client.redirect_uri,
        "code_verifier": pkce.verifier,
        "resource": demo.url,
    }


def refresh(demo: AuthDemo, tokens: Tokens) -> Tokens:
    """The refresh grant with ``tokens.refresh_token``: new tokens (the old refresh token is spent)."""
    assert tokens.refresh_token is not None, "these tokens came without a refresh token"
    form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token, "resource": demo.url}
    return _tokens(tokens.client, token_request(demo, tokens.client, form))
