"""The demo's OAuth 2.1 authorization server: in memory, approving every request at once (no person).

It exists so that a client's whole MCP authorization flow can run against ``python -m
mcp_tasks_jupyter.demo --http --auth`` on loopback. It is framework-free: each endpoint takes what the
HTTP layer read (query pairs, form pairs, a JSON body, the ``Authorization`` header) and returns a
:class:`Reply`; :mod:`.auth_http` serves them. What it implements:

* metadata (RFC 8414) with ``authorization_response_iss_parameter_supported`` (RFC 9207);
* dynamic client registration (RFC 7591): ``redirect_uris`` must be https or loopback http,
  ``token_endpoint_auth_method`` is ``none``, ``client_secret_basic`` (the RFC's default) or
  ``client_secret_post``, ``grant_types`` ⊆ {``authorization_code``, ``refresh_token``}
  (default ``["authorization_code"]``: a client that wants refresh tokens lists ``refresh_token``);
* optionally one pre-registered client (:attr:`AuthSettings.client_id`), for clients that are given
  their credentials: any loopback http redirect URI, both grant types, and with a secret also the
  ``client_credentials`` grant (headless: the client's own tokens, never a refresh token);
* the authorization endpoint: answers at once with a 302 to the redirect URI carrying ``code``,
  ``state`` and ``iss`` (errors too carry ``state`` and ``iss``). The redirect URI must be one the
  client registered (exactly, or on another port for a loopback IP literal, RFC 8252 §7.3); PKCE
  with S256 only; ``resource`` (RFC 8707) must be the MCP URL; ``scope`` must be supported (absent:
  the resource's required scopes);
* the token endpoint: ``authorization_code`` (single-use codes, 60 s; ``code_verifier``,
  ``redirect_uri``, ``resource`` checked; client authentication by the registered method only) and
  ``refresh_token`` (rotated on every use; presenting a rotated one again revokes everything issued
  from that grant, OAuth 2.1 §4.3.1). A refresh token is issued only when ``offline_access`` was
  granted and the client registered the ``refresh_token`` grant type.

Tokens, codes and client secrets are opaque random strings (256 bits) kept in memory; nothing here
logs one. Every table is bounded (the oldest entries go first).
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import re
import secrets
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote_plus, urlencode, urlsplit, urlunsplit

logger = logging.getLogger("mcp_tasks_jupyter.demo")

OFFLINE_ACCESS = "offline_access"
AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post")
GRANT_TYPES = ("authorization_code", "refresh_token")
#: The grant only the pre-registered confidential client has (not offered to dynamic registration).
CLIENT_CREDENTIALS = "client_credentials"
CODE_TTL = 60.0  # seconds an authorization code stays redeemable
EXPIRED_KEPT = 600.0  # seconds an expired access token is still recognised as expired
MAX_CLIENTS = 1000
MAX_PENDING = 1000  # codes, access tokens and refresh tokens, each
MAX_REDIRECT_URIS = 20
MAX_URI_LENGTH = 2000
MAX_REGISTRATION_BYTES = 64 * 1024
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
LOOPBACK_IPS = frozenset({"127.0.0.1", "::1"})
#: RFC 7636 §4.1: 43 to 128 unreserved characters.
PKCE_VALUE = re.compile(r"[A-Za-z0-9\-._~]{43,128}")
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


@dataclass(frozen=True)
class Reply:
    """What an endpoint answers: a status, a JSON body (None: no body) and headers."""

    status: int
    body: dict[str, Any] | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


def oauth_error(status: int, error: str, description: str, headers: Mapping[str, str] | None = None) -> Reply:
    """An OAuth error answer (RFC 6749 §5.2): ``{"error", "error_description"}``, never cached."""
    return Reply(status, {"error": error, "error_description": description}, {**NO_STORE, **(headers or {})})


@dataclass(frozen=True)
class AuthSettings:
    """What ``--auth`` configures: the token lifetime, the scopes and which tools need more.

    ``scopes`` are the authorization server's ``scopes_supported``. The resource requires all of them
    but ``offline_access`` and the tool scopes (its ``scopes_supported`` and the scope of its 401
    challenge); ``tool_scopes`` maps a tool name to a further scope a ``tools/call`` of it needs
    (403 ``insufficient_scope`` without it: the step-up flow).
    """

    token_ttl: int = 3600
    scopes: tuple[str, ...] = ("mcp:tools", OFFLINE_ACCESS)
    tool_scopes: Mapping[str, str] = field(default_factory=dict)
    #: A pre-registered client (``--auth-client-id``, ``--auth-client-secret``): any loopback http
    #: redirect URI, both grant types; with a secret it authenticates by Basic or post, else by none.
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.token_ttl < 1:
            raise ValueError("--token-ttl must be at least 1 second")
        if self.client_secret is not None and not self.client_id:
            raise ValueError("--auth-client-secret needs --auth-client-id")
        for scope in (*self.scopes, *self.tool_scopes.values()):
            if not scope or not re.fullmatch(r"[\x21\x23-\x5b\x5d-\x7e]+", scope):
                raise ValueError(f"not a valid OAuth scope: {scope!r}")

    @property
    def supported(self) -> tuple[str, ...]:
        """Every scope the authorization server grants (the tool scopes included), in order."""
        return tuple(dict.fromkeys((*self.scopes, *self.tool_scopes.values())))

    @property
    def required(self) -> tuple[str, ...]:
        """The scopes every MCP request needs."""
        extra = set(self.tool_scopes.values()) | {OFFLINE_ACCESS}
        return tuple(scope for scope in self.scopes if scope not in extra)


@dataclass
class Client:
    client_id: str
    secret: str | None
    auth_methods: frozenset[str]  # how it may authenticate at the token endpoint
    redirect_uris: tuple[str, ...]
    grant_types: tuple[str, ...]
    any_loopback: bool = False  # the pre-registered client: any loopback http redirect URI


@dataclass
class PendingCode:
    client_id: str
    redirect_uri: str | None  # as the authorization request gave it (None: it named none)
    challenge: str
    scope: tuple[str, ...]
    resource: str
    expires_at: float


@dataclass(frozen=True)
class AccessToken:
    """What the resource server learns from a valid access token."""

    client_id: str
    scope: frozenset[str]
    resource: str
    expires_at: float
    grant: str  # the grant it came from (revoked together on refresh token reuse)


@dataclass
class RefreshToken:
    client_id: str
    scope: tuple[str, ...]
    resource: str
    grant: str


def _token() -> str:
    return secrets.token_urlsafe(32)


def _pkce_s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _single(pairs: Sequence[tuple[str, str]]) -> dict[str, str] | str:
    """The parameters as a dict, or the name of one given more than once (RFC 6749 §3.1)."""
    params: dict[str, str] = {}
    for name, value in pairs:
        if name in params:
            return name
        params[name] = value
    return params


def _add_query(uri: str, params: Mapping[str, str]) -> str:
    parts = urlsplit(uri)
    query = f"{parts.query}&{urlencode(params)}" if parts.query else urlencode(params)
    return urlunsplit(parts._replace(query=query))


def _redirect_uri_problem(uri: Any) -> str | None:
    """Why ``uri`` cannot be registered as a redirect URI, or None."""
    if not isinstance(uri, str) or not uri or len(uri) > MAX_URI_LENGTH:
        return "each redirect URI must be a non-empty string of at most 2000 characters"
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 (raises on a bad port)
    except ValueError:
        return f"not a URL: {uri}"
    if parts.fragment or "#" in uri:
        return f"a redirect URI has no fragment: {uri}"
    if parts.scheme == "https" and parts.hostname:
        return None
    if parts.scheme == "http" and (parts.hostname or "") in LOOPBACK_HOSTS:
        return None
    return f"redirect URIs must be https or loopback http (127.0.0.1, [::1], localhost): {uri}"


def _is_loopback_http(uri: str) -> bool:
    return _redirect_uri_problem(uri) is None and urlsplit(uri).scheme == "http"


def _same_redirect(registered: str, given: str) -> bool:
    """Exact match, or (RFC 8252 §7.3) the same loopback IP URI on any port."""
    if registered == given:
        return True
    a, b = urlsplit(registered), urlsplit(given)
    return (
        a.scheme == b.scheme == "http"
        and (a.hostname or "") in LOOPBACK_IPS
        and a.hostname == b.hostname
        and (a.path, a.query) == (b.path, b.query)
    )


def _scope_list(value: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(value.split()))


class DemoAuthorizationServer:
    """The authorization server of one protected MCP resource (see the module docstring).

    ``issuer`` is its base URL (the endpoints hang below it), ``resource`` the MCP URL its tokens are
    for. ``clock`` gives seconds (monotonic); tests of expiry may pass their own.
    """

    def __init__(
        self, issuer: str, resource: str, settings: AuthSettings, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.issuer = issuer.rstrip("/")
        self.resource = resource
        self.settings = settings
        self.clock = clock
        self.clients: dict[str, Client] = {}
        self.codes: dict[str, PendingCode] = {}
        self.access_tokens: dict[str, AccessToken] = {}
        self.refresh_tokens: dict[str, RefreshToken] = {}
        self._rotated: dict[str, str] = {}  # refresh token already used -> its grant
        if settings.client_id is not None:
            secret = settings.client_secret
            methods = frozenset({"none"} if secret is None else {"client_secret_basic", "client_secret_post"})
            grants = GRANT_TYPES if secret is None else (*GRANT_TYPES, CLIENT_CREDENTIALS)
            self.clients[settings.client_id] = Client(
                settings.client_id, secret, methods, (), grants, any_loopback=True
            )

    # -- endpoints and metadata ------------------------------------------------------------------

    @property
    def authorization_endpoint(self) -> str:
        return f"{self.issuer}/authorize"

    @property
    def token_endpoint(self) -> str:
        return f"{self.issuer}/token"

    @property
    def registration_endpoint(self) -> str:
        return f"{self.issuer}/register"

    def metadata(self) -> dict[str, Any]:
        """The authorization server metadata (RFC 8414)."""
        return {
            "issuer": self.issuer,
            "authorization_endpoint": self.authorization_endpoint,
            "token_endpoint": self.token_endpoint,
            "registration_endpoint": self.registration_endpoint,
            "scopes_supported": list(self.settings.supported),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": list(GRANT_TYPES)
            + ([CLIENT_CREDENTIALS] if self.settings.client_secret is not None else []),
            "token_endpoint_auth_methods_supported": list(AUTH_METHODS),
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": True,
            "client_id_metadata_document_supported": False,
        }

    # -- registration (RFC 7591) -----------------------------------------------------------------

    def register(self, body: bytes) -> Reply:
        """``POST /register``: a JSON client metadata document -> 201 with the client's credentials."""
        if len(body) > MAX_REGISTRATION_BYTES:
            return oauth_error(400, "invalid_client_metadata", "the registration request is too large")
        try:
            meta = json.loads(body)
        except ValueError:
            return oauth_error(400, "invalid_client_metadata", "the registration request is not JSON")
        if not isinstance(meta, dict):
            return oauth_error(400, "invalid_client_metadata", "the registration request is not a JSON object")
        uris = meta.get("redirect_uris")
        if not isinstance(uris, list) or not uris or len(uris) > MAX_REDIRECT_URIS:
            return oauth_error(400, "invalid_redirect_uri", "redirect_uris must list 1 to 20 redirect URIs")
        for uri in uris:
            problem = _redirect_uri_problem(uri)
            if problem is not None:
                return oauth_error(400, "invalid_redirect_uri", problem)
        method = meta.get("token_endpoint_auth_method", "client_secret_basic")
        if method not in AUTH_METHODS:
            return oauth_error(
                400,
                "invalid_client_metadata",
                f"token_endpoint_auth_method must be one of {', '.join(AUTH_METHODS)}",
            )
        grant_types = meta.get("grant_types", ["authorization_code"])
        if (
            not isinstance(grant_types, list)
            or not grant_types
            or not all(isinstance(g, str) and g in GRANT_TYPES for g in grant_types)
        ):
            return oauth_error(
                400, "invalid_client_metadata", f"grant_types must be among {', '.join(GRANT_TYPES)}"
            )
        response_types = meta.get("response_types", ["code"])
        if response_types != ["code"]:
            return oauth_error(400, "invalid_client_metadata", 'response_types must be ["code"]')
        scope = meta.get("scope")
        if scope is not None and (
            not isinstance(scope, str) or not set(scope.split()) <= set(self.settings.supported)
        ):
            return oauth_error(400, "invalid_client_metadata", "scope lists a scope this server does not grant")

        client_id = secrets.token_urlsafe(16)
        secret = None if method == "none" else _token()
        while len(self.clients) >= MAX_CLIENTS:
            del self.clients[next(iter(self.clients))]
        grants = tuple(dict.fromkeys(grant_types))
        self.clients[client_id] = Client(client_id, secret, frozenset({method}), tuple(uris), grants)
        logger.info("OAuth client %s registered (%s)", client_id, method)
        answer = {
            **meta,
            "client_id": client_id,
            "client_id_issued_at": int(time.time()),
            "redirect_uris": uris,
            "token_endpoint_auth_method": method,
            "grant_types": list(dict.fromkeys(grant_types)),
            "response_types": ["code"],
        }
        if secret is not None:
            answer["client_secret"] = secret
            answer["client_secret_expires_at"] = 0
        return Reply(201, answer, NO_STORE)

    # -- authorization endpoint ------------------------------------------------------------------

    def authorize(self, query: Sequence[tuple[str, str]]) -> Reply:
        """``GET /authorize``: approve at once; a 302 to the redirect URI, or 400 when there is no
        redirect URI to trust (unknown client, unregistered or missing redirect URI)."""
        params = _single(query)
        if isinstance(params, str):
            return oauth_error(400, "invalid_request", f"the parameter {params} is given more than once")
        client = self.clients.get(params.get("client_id", ""))
        if client is None:
            return oauth_error(400, "invalid_request", "unknown client_id (register first)")
        given_uri = params.get("redirect_uri")
        if given_uri is None:
            if len(client.redirect_uris) != 1:
                return oauth_error(400, "invalid_request", "redirect_uri is required (several are registered)")
            redirect_uri = client.redirect_uris[0]
        elif any(_same_redirect(uri, given_uri) for uri in client.redirect_uris) or (
            client.any_loopback and _is_loopback_http(given_uri)
        ):
            redirect_uri = given_uri
        else:
            return oauth_error(400, "invalid_request", "redirect_uri is not one the client registered")

        def refuse(error: str, description: str) -> Reply:
            answer = {"error": error, "error_description": description, "iss": self.issuer}
            if "state" in params:
                answer["state"] = params["state"]
            return Reply(302, None, {**NO_STORE, "Location": _add_query(redirect_uri, answer)})

        if params.get("response_type") != "code":
            return refuse("unsupported_response_type", 'response_type must be "code"')
        if "authorization_code" not in client.grant_types:
            return refuse("unauthorized_client", "the client did not register the authorization_code grant")
        challenge = params.get("code_challenge", "")
        if not challenge:
            return refuse("invalid_request", "PKCE is required: code_challenge is missing")
        if params.get("code_challenge_method") != "S256":
            return refuse("invalid_request", 'code_challenge_method must be "S256"')
        if not PKCE_VALUE.fullmatch(challenge):
            return refuse("invalid_request", "code_challenge is not a S256 challenge")
        resource = params.get("resource")
        if resource is None:
            return refuse("invalid_request", f"the resource parameter is required (RFC 8707): {self.resource}")
        if resource != self.resource:
            return refuse("invalid_target", f"this server issues tokens for {self.resource} only")
        scope = _scope_list(params.get("scope", "")) or self.settings.required
        unknown = [s for s in scope if s not in self.settings.supported]
        if unknown:
            return refuse("invalid_scope", f"unknown scope: {' '.join(unknown)}")

        code = _token()
        self._purge()
        _bounded_put(
            self.codes,
            code,
            PendingCode(client.client_id, given_uri, challenge, scope, resource, self.clock() + CODE_TTL),
        )
        answer = {"code": code, "iss": self.issuer}
        if "state" in params:
            answer["state"] = params["state"]
        return Reply(302, None, {**NO_STORE, "Location": _add_query(redirect_uri, answer)})

    # -- token endpoint --------------------------------------------------------------------------

    def token(self, form: Sequence[tuple[str, str]], authorization: str | None) -> Reply:
        """``POST /token`` (form-encoded): the ``authorization_code`` and ``refresh_token`` grants."""
        params = _single(form)
        if isinstance(params, str):
            return oauth_error(400, "invalid_request", f"the parameter {params} is given more than once")
        client = self._authenticate(params, authorization)
        if isinstance(client, Reply):
            return client
        grant_type = params.get("grant_type")
        if grant_type not in (*GRANT_TYPES, CLIENT_CREDENTIALS):
            return oauth_error(
                400,
                "unsupported_grant_type",
                "grant_type must be authorization_code, refresh_token or client_credentials",
            )
        if grant_type not in client.grant_types:
            return oauth_error(400, "unauthorized_client", f"the client did not register the {grant_type} grant")
        resource = params.get("resource")
        if resource is not None and resource != self.resource:
            return oauth_error(400, "invalid_target", f"this server issues tokens for {self.resource} only")
        self._purge()
        if grant_type == "authorization_code":
            return self._redeem_code(client, params)
        if grant_type == CLIENT_CREDENTIALS:
            return self._client_credentials(client, params)
        return self._refresh(client, params)

    def _client_credentials(self, client: Client, params: Mapping[str, str]) -> Reply:
        """Tokens for the (authenticated, confidential) client itself: no person, no refresh token."""
        if client.secret is None:
            return oauth_error(400, "unauthorized_client", "a public client has no credentials of its own")
        scope = _scope_list(params.get("scope", "")) or self.settings.required
        unknown = [s for s in scope if s not in self.settings.supported or s == OFFLINE_ACCESS]
        if unknown:
            return oauth_error(400, "invalid_scope", f"not granted to a client on its own: {' '.join(unknown)}")
        return self._issue(client, scope, self.resource, grant=secrets.token_urlsafe(12))

    def _authenticate(self, params: Mapping[str, str], authorization: str | None) -> Client | Reply:
        """The client, authenticated by the method it registered (RFC 6749 §2.3, §5.2)."""
        basic: tuple[str, str] | None = None
        if authorization is not None:
            scheme, _, credentials = authorization.partition(" ")
            if scheme.lower() != "basic":
                return oauth_error(
                    401, "invalid_client", "the token endpoint takes Basic client authentication only"
                )
            try:
                decoded = base64.b64decode(credentials.strip(), validate=True).decode("utf-8")
            except (ValueError, UnicodeDecodeError):
                decoded = ""
            user, colon, password = decoded.partition(":")
            if not colon:
                return self._bad_client("malformed Basic credentials", basic=True)
            basic = (unquote_plus(user), unquote_plus(password))
        client_id = basic[0] if basic else params.get("client_id", "")
        if basic and "client_id" in params and params["client_id"] != basic[0]:
            return self._bad_client("client_id differs from the Basic credentials", basic=True)
        client = self.clients.get(client_id)
        if client is None:
            return self._bad_client("unknown client", basic=basic is not None)
        posted = params.get("client_secret")
        methods = client.auth_methods
        if basic is None and posted is None and "none" in methods:
            return client
        if basic is not None and posted is None and "client_secret_basic" in methods:
            offered = basic[1]
        elif basic is None and posted is not None and "client_secret_post" in methods:
            offered = posted
        else:
            named = " or ".join(sorted(methods))
            return self._bad_client(f"this client authenticates by {named} only", basic=basic is not None)
        if client.secret is None or not secrets.compare_digest(offered.encode(), client.secret.encode()):
            return self._bad_client("wrong client secret", basic=basic is not None)
        return client

    @staticmethod
    def _bad_client(description: str, *, basic: bool = False) -> Reply:
        headers = {"WWW-Authenticate": 'Basic realm="demo"'} if basic else {}
        return oauth_error(401, "invalid_client", f"client authentication failed: {description}", headers)

    def _redeem_code(self, client: Client, params: Mapping[str, str]) -> Reply:
        pending = self.codes.pop(params.get("code", ""), None)
        if pending is None or pending.expires_at <= self.clock():
            return oauth_error(400, "invalid_grant", "the authorization code is unknown, used or expired")
        if pending.client_id != client.client_id:
            return oauth_error(400, "invalid_grant", "the authorization code was issued to another client")
        if pending.redirect_uri is not None and params.get("redirect_uri") != pending.redirect_uri:
            return oauth_error(400, "invalid_grant", "redirect_uri differs from the authorization request's")
        verifier = params.get("code_verifier", "")
        if not PKCE_VALUE.fullmatch(verifier):
            return oauth_error(400, "invalid_grant", "code_verifier is missing or malformed")
        if not secrets.compare_digest(_pkce_s256(verifier), pending.challenge):
            return oauth_error(400, "invalid_grant", "code_verifier does not match the code_challenge")
        if "resource" not in params:
            return oauth_error(
                400, "invalid_request", f"the resource parameter is required (RFC 8707): {self.resource}"
            )
        return self._issue(client, pending.scope, pending.resource, grant=secrets.token_urlsafe(12))

    def _refresh(self, client: Client, params: Mapping[str, str]) -> Reply:
        presented = params.get("refresh_token", "")
        record = self.refresh_tokens.pop(presented, None)
        if record is None:
            grant = self._rotated.pop(presented, None)
            if grant is not None:  # a rotated token came back: someone has a copy; end the grant
                self._revoke_grant(grant)
                logger.warning("a rotated refresh token was presented again: its grant is revoked")
            return oauth_error(400, "invalid_grant", "the refresh token is unknown, rotated or revoked")
        if record.client_id != client.client_id:
            self.refresh_tokens[presented] = record
            return oauth_error(400, "invalid_grant", "the refresh token was issued to another client")
        scope = record.scope
        if "scope" in params:
            asked = _scope_list(params["scope"])
            if not set(asked) <= set(record.scope):
                self.refresh_tokens[presented] = record
                return oauth_error(400, "invalid_scope", "a refresh cannot widen the scope of the grant")
            scope = asked
        _bounded_put(self._rotated, presented, record.grant)
        return self._issue(client, scope, record.resource, grant=record.grant, refresh_scope=record.scope)

    def _issue(
        self,
        client: Client,
        scope: tuple[str, ...],
        resource: str,
        *,
        grant: str,
        refresh_scope: tuple[str, ...] | None = None,
    ) -> Reply:
        ttl = self.settings.token_ttl
        access = _token()
        _bounded_put(
            self.access_tokens,
            access,
            AccessToken(client.client_id, frozenset(scope), resource, self.clock() + ttl, grant),
        )
        answer: dict[str, Any] = {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": ttl,
            "scope": " ".join(scope),
        }
        kept = refresh_scope or scope  # a narrower refresh keeps the grant's scope for the next one
        if OFFLINE_ACCESS in kept and "refresh_token" in client.grant_types:
            refresh = _token()
            _bounded_put(self.refresh_tokens, refresh, RefreshToken(client.client_id, kept, resource, grant))
            answer["refresh_token"] = refresh
        return Reply(200, answer, NO_STORE)

    def _revoke_grant(self, grant: str) -> None:
        for table in (self.access_tokens, self.refresh_tokens):
            for key in [key for key, record in table.items() if record.grant == grant]:
                del table[key]

    def _purge(self) -> None:
        """Drop expired codes, and access tokens expired for a while (until then a request with one
        is told it expired, not that it is unknown)."""
        now = self.clock()
        for table, grace in ((self.codes, 0.0), (self.access_tokens, EXPIRED_KEPT)):
            for key in [key for key, record in table.items() if record.expires_at + grace <= now]:
                del table[key]

    # -- for the resource server -----------------------------------------------------------------

    def lookup(self, token: str) -> AccessToken | None:
        """The access token's record (expired ones too: the caller says which), or None."""
        return self.access_tokens.get(token)

    def expired(self, record: AccessToken) -> bool:
        return record.expires_at <= self.clock()


def _bounded_put(table: dict[str, Any], key: str, value: Any, limit: int = MAX_PENDING) -> None:
    while len(table) >= limit:
        del table[next(iter(table))]
    table[key] = value


def parse_scopes(value: str) -> tuple[str, ...]:
    """``--auth-scopes "a b"`` -> ("a", "b")."""
    return _scope_list(value)


def parse_tool_scopes(values: Iterable[str]) -> dict[str, str]:
    """``--auth-tool-scope TOOL=SCOPE`` (repeated) -> {tool: scope}; ValueError on a malformed one."""
    found: dict[str, str] = {}
    for value in values:
        tool, equals, scope = value.partition("=")
        if not equals or not tool or not scope:
            raise ValueError(f"--auth-tool-scope wants TOOL=SCOPE, got {value!r}")
        found[tool] = scope
    return found
