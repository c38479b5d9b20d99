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
* the device authorization grant (RFC 8628): ``POST /device_authorization`` gives a device code
  and a user code (``--auth-device-interval``, ``--auth-device-ttl``); ``GET /device?user_code=CODE``
  (the ``verification_uri_complete``) approves it at once, ``&deny=1`` refuses it. Polls of the token
  endpoint sooner than the interval are answered ``slow_down`` (and the interval grows by 5 s), as is
  the first poll of each code with ``--auth-device-slow-down``; registration without a redirect URI
  for ``grant_types`` [device code, ``refresh_token``];
* the token endpoint: ``authorization_code`` (single-use codes, 60 s; ``code_verifier``,
  ``redirect_uri``, ``resource`` checked; client authentication by the registered method only) and
  ``refresh_token`` (rotated on every use; presenting a rotated one again revokes everything issued
  from that grant, OAuth 2.1 §4.3.1). A refresh token is issued only when ``offline_access`` was
  granted and the client registered the ``refresh_token`` grant type;
* with ``--auth-dpop`` (RFC 9449): the metadata lists ``dpop_signing_alg_values_supported``, every
  token request needs a ``DPoP`` proof (:mod:`.dpop_check`) and its tokens are ``token_type`` ``DPoP``,
  bound to the proof key's thumbprint (refresh tokens too: a refresh with another key is refused);
  with ``--auth-dpop-nonce`` a proof without the server's nonce is answered ``use_dpop_nonce``.

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

from . import dpop_check
from .dpop_check import ProofChecker, ProofError

logger = logging.getLogger("mcp_tasks_jupyter.demo")

OFFLINE_ACCESS = "offline_access"
AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post")
GRANT_TYPES = ("authorization_code", "refresh_token")
#: The grant only the pre-registered confidential client has (not offered to dynamic registration).
CLIENT_CREDENTIALS = "client_credentials"
#: The device authorization grant (RFC 8628), for dynamic and pre-registered clients.
DEVICE_CODE = "urn:ietf:params:oauth:grant-type:device_code"
#: What a client may register: the person's grants (the device grant needs no redirect URI).
REGISTERED_GRANTS = (*GRANT_TYPES, DEVICE_CODE)
#: User codes: 8 letters without vowels (no words) and without look-alikes, shown as XXXX-XXXX (RFC 8628 §6.1).
USER_CODE_LETTERS = "BCDFGHJKLMNPQRSTVWXZ"
#: A poll this much sooner than the interval still counts as on time (timers are not exact).
POLL_SLACK = 0.05
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
    #: The device grant: the polling interval it asks for, how long a code lives, and whether the
    #: first poll of each code is answered ``slow_down`` (to try a client's back-off).
    device_interval: int = 5
    device_ttl: int = 600
    device_slow_down: bool = False
    #: DPoP (RFC 9449): tokens bound to the client's key (``--auth-dpop``), and whether proofs must
    #: carry the server's nonce (``--auth-dpop-nonce``).
    dpop: bool = False
    dpop_nonce: bool = False

    def __post_init__(self) -> None:
        if self.token_ttl < 1:
            raise ValueError("--token-ttl must be at least 1 second")
        if not 1 <= self.device_interval <= 60:
            raise ValueError("--auth-device-interval must be 1 to 60 seconds")
        if not 1 <= self.device_ttl <= 3600:
            raise ValueError("--auth-device-ttl must be 1 to 3600 seconds")
        if self.client_secret is not None and not self.client_id:
            raise ValueError("--auth-client-secret needs --auth-client-id")
        if self.dpop_nonce and not self.dpop:
            raise ValueError("--auth-dpop-nonce needs --auth-dpop")
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


@dataclass
class PendingDevice:
    """A device code waiting for its person (RFC 8628): ``approved`` None until they decide."""

    client_id: str
    user_code: str
    scope: tuple[str, ...]
    resource: str
    expires_at: float
    interval: float
    next_poll: float  # a poll before this is too soon (slow_down)
    approved: bool | None = None
    slowed: bool = False


@dataclass(frozen=True)
class AccessToken:
    """What the resource server learns from a valid access token."""

    client_id: str
    scope: frozenset[str]
    resource: str
    expires_at: float
    grant: str  # the grant it came from (revoked together on refresh token reuse)
    jkt: str | None = None  # DPoP: the thumbprint of the key it is bound to


@dataclass
class RefreshToken:
    client_id: str
    scope: tuple[str, ...]
    resource: str
    grant: str
    jkt: str | None = None


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


def _user_code() -> str:
    letters = "".join(secrets.choice(USER_CODE_LETTERS) for _ in range(8))
    return f"{letters[:4]}-{letters[4:]}"


def _normal_user_code(value: str) -> str:
    """What a person typed, as the code is kept: upper case, without dashes and spaces (RFC 8628 §6.1)."""
    return "".join(c for c in value.upper() if c not in "- ")


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
        self.devices: dict[str, PendingDevice] = {}  # device code -> its state
        self.user_codes: dict[str, str] = {}  # user code (normalised) -> device code
        #: DPoP proofs, checked for the token endpoint and the resource alike (one replay memory).
        self.proofs = ProofChecker(use_nonce=settings.dpop_nonce)
        self._jkt: str | None = None  # the key of the token request being answered
        if settings.client_id is not None:
            secret = settings.client_secret
            methods = frozenset({"none"} if secret is None else {"client_secret_basic", "client_secret_post"})
            grants = REGISTERED_GRANTS if secret is None else (*REGISTERED_GRANTS, CLIENT_CREDENTIALS)
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

    @property
    def device_authorization_endpoint(self) -> str:
        return f"{self.issuer}/device_authorization"

    @property
    def verification_uri(self) -> str:
        return f"{self.issuer}/device"

    def metadata(self) -> dict[str, Any]:
        """The authorization server metadata (RFC 8414)."""
        return {
            "issuer": self.issuer,
            "authorization_endpoint": self.authorization_endpoint,
            "token_endpoint": self.token_endpoint,
            "registration_endpoint": self.registration_endpoint,
            "device_authorization_endpoint": self.device_authorization_endpoint,
            "scopes_supported": list(self.settings.supported),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": list(REGISTERED_GRANTS)
            + ([CLIENT_CREDENTIALS] if self.settings.client_secret is not None else []),
            "token_endpoint_auth_methods_supported": list(AUTH_METHODS),
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": True,
            "client_id_metadata_document_supported": False,
        } | ({"dpop_signing_alg_values_supported": list(dpop_check.ALGORITHMS)} if self.settings.dpop else {})

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
        grant_types = meta.get("grant_types", ["authorization_code"])
        if (
            not isinstance(grant_types, list)
            or not grant_types
            or not all(isinstance(g, str) and g in REGISTERED_GRANTS for g in grant_types)
        ):
            return oauth_error(
                400, "invalid_client_metadata", f"grant_types must be among {', '.join(REGISTERED_GRANTS)}"
            )
        redirected = "authorization_code" in grant_types  # the device grant alone needs no redirect URI
        uris = meta.get("redirect_uris", [] if not redirected else None)
        if not isinstance(uris, list) or (redirected and not uris) or len(uris) > MAX_REDIRECT_URIS:
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
        response_types = meta.get("response_types", ["code"] if redirected else [])
        if response_types != (["code"] if redirected else []) and response_types != ["code"]:
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
            "response_types": response_types,
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

    # -- the device authorization grant (RFC 8628) --------------------------------------------

    def device_authorization(self, form: Sequence[tuple[str, str]], authorization: str | None) -> Reply:
        """``POST /device_authorization`` (form-encoded, the client authenticated as at the token
        endpoint): a device code for the client, and a user code for its person."""
        params = _single(form)
        if isinstance(params, str):
            return oauth_error(400, "invalid_request", f"the parameter {params} is given more than once")
        client = self._authenticate(params, authorization)
        if isinstance(client, Reply):
            return client
        if DEVICE_CODE not in client.grant_types:
            return oauth_error(400, "unauthorized_client", "the client did not register the device code grant")
        resource = params.get("resource")
        if resource is None:
            return oauth_error(
                400, "invalid_request", f"the resource parameter is required (RFC 8707): {self.resource}"
            )
        if resource != self.resource:
            return oauth_error(400, "invalid_target", f"this server issues tokens for {self.resource} only")
        scope = _scope_list(params.get("scope", "")) or self.settings.required
        unknown = [s for s in scope if s not in self.settings.supported]
        if unknown:
            return oauth_error(400, "invalid_scope", f"unknown scope: {' '.join(unknown)}")
        self._purge()
        device_code, user_code = _token(), _user_code()
        now, interval = self.clock(), float(self.settings.device_interval)
        pending = PendingDevice(
            client.client_id, user_code, scope, resource, now + self.settings.device_ttl, interval, now + interval
        )
        _bounded_put(self.devices, device_code, pending)
        _bounded_put(self.user_codes, _normal_user_code(user_code), device_code)
        answer = {
            "device_code": device_code,
            "user_code": user_code,
            "verification_uri": self.verification_uri,
            "verification_uri_complete": _add_query(self.verification_uri, {"user_code": user_code}),
            "expires_in": self.settings.device_ttl,
            "interval": self.settings.device_interval,
        }
        return Reply(200, answer, NO_STORE)

    def verify(self, query: Sequence[tuple[str, str]]) -> Reply:
        """``GET /device?user_code=CODE``: the person approves the code at once (``&deny=1``: refuses it)."""
        params = _single(query)
        if isinstance(params, str):
            return oauth_error(400, "invalid_request", f"the parameter {params} is given more than once")
        self._purge()
        typed = params.get("user_code")
        if not typed:
            return oauth_error(400, "invalid_request", "enter the code you were shown: /device?user_code=CODE")
        pending = self.devices.get(self.user_codes.get(_normal_user_code(typed), ""))
        if pending is None or pending.approved is not None:
            return oauth_error(400, "invalid_grant", "this code is unknown, expired or already used")
        pending.approved = params.get("deny") != "1"
        said = "approved: go back to your device" if pending.approved else "refused"
        return Reply(200, {"user_code": pending.user_code, "result": said}, NO_STORE)

    def _redeem_device(self, client: Client, params: Mapping[str, str]) -> Reply:
        """One poll with a device code: pending, slow down, denied, expired, or the tokens."""
        device_code = params.get("device_code", "")
        pending = self.devices.get(device_code)
        if pending is None:
            return oauth_error(400, "invalid_grant", "the device code is unknown or used")
        if pending.client_id != client.client_id:
            return oauth_error(400, "invalid_grant", "the device code was issued to another client")
        now = self.clock()
        if pending.expires_at <= now:
            self._forget_device(device_code)
            return oauth_error(400, "expired_token", "the device code expired before the person approved it")
        too_soon = now + POLL_SLACK < pending.next_poll
        if too_soon or (self.settings.device_slow_down and not pending.slowed):
            if too_soon:
                logger.warning("a device code poll came %.1f s before its interval ended", pending.next_poll - now)
            pending.slowed = True
            pending.interval += 5  # RFC 8628 §3.5: for this and every later poll
            pending.next_poll = now + pending.interval
            return oauth_error(400, "slow_down", f"poll at most every {pending.interval:g} s")
        pending.next_poll = now + pending.interval
        if pending.approved is None:
            return oauth_error(400, "authorization_pending", "the person has not entered the code yet")
        self._forget_device(device_code)
        if not pending.approved:
            return oauth_error(400, "access_denied", "the person refused the sign-in")
        return self._issue(client, pending.scope, pending.resource, grant=secrets.token_urlsafe(12))

    def _forget_device(self, device_code: str) -> None:
        pending = self.devices.pop(device_code, None)
        if pending is not None:
            self.user_codes.pop(_normal_user_code(pending.user_code), None)

    # -- token endpoint --------------------------------------------------------------------------

    def token(self, form: Sequence[tuple[str, str]], authorization: str | None, proof: str | None = None) -> Reply:
        """``POST /token`` (form-encoded): the ``authorization_code`` and ``refresh_token`` grants;
        ``proof``: the ``DPoP`` header (required with ``--auth-dpop``)."""
        self._jkt = None
        if self.settings.dpop:
            checked = self.proofs.check(proof, "POST", self.token_endpoint)
            if isinstance(checked, ProofError):
                return oauth_error(400, checked.error, checked.description, self.nonce_header)
            self._jkt = checked
        params = _single(form)
        if isinstance(params, str):
            return oauth_error(400, "invalid_request", f"the parameter {params} is given more than once")
        client = self._authenticate(params, authorization)
        if isinstance(client, Reply):
            return client
        grant_type = params.get("grant_type")
        if grant_type not in (*REGISTERED_GRANTS, CLIENT_CREDENTIALS):
            return oauth_error(
                400,
                "unsupported_grant_type",
                f"grant_type must be one of {', '.join((*REGISTERED_GRANTS, CLIENT_CREDENTIALS))}",
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
        if grant_type == DEVICE_CODE:
            return self._redeem_device(client, params)
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
        if record.jkt is not None and record.jkt != self._jkt:
            self.refresh_tokens[presented] = record
            return oauth_error(400, "invalid_dpop_proof", "the refresh token is bound to another DPoP key")
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
            AccessToken(client.client_id, frozenset(scope), resource, self.clock() + ttl, grant, self._jkt),
        )
        answer: dict[str, Any] = {
            "access_token": access,
            "token_type": "Bearer" if self._jkt is None else "DPoP",
            "expires_in": ttl,
            "scope": " ".join(scope),
        }
        kept = refresh_scope or scope  # a narrower refresh keeps the grant's scope for the next one
        if OFFLINE_ACCESS in kept and "refresh_token" in client.grant_types:
            refresh = _token()
            _bounded_put(
                self.refresh_tokens, refresh, RefreshToken(client.client_id, kept, resource, grant, self._jkt)
            )
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
        # (a device code is kept a while after it expired, to answer expired_token, not invalid_grant)
        for code in [code for code, record in self.devices.items() if record.expires_at + EXPIRED_KEPT <= now]:
            self._forget_device(code)

    @property
    def nonce_header(self) -> dict[str, str]:
        """The ``DPoP-Nonce`` header to send with a refusal (with ``--auth-dpop-nonce``)."""
        return {"DPoP-Nonce": self.proofs.nonce} if self.settings.dpop_nonce else {}

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
