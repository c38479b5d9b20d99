"""OAuth for one connection: the transport's auth hook (``transport/auth.py``).

It starts from what the token store keeps for the server; when the server refuses a request it
decides, one refusal at a time (others wait and reuse the outcome):

- 401 ``use_dpop_nonce`` (DPoP, RFC 9449 section 9): send again with the server's nonce, once per nonce;
- 401 with a token that has a refresh token: refresh, once per token;
- 401 otherwise: sign in afresh (discovery from the challenge, registration, a person at the
  authorization URL, the code exchanged): at most :data:`MAX_SIGN_INS` in :data:`SIGN_IN_WINDOW_S`;
- 403 ``insufficient_scope``: sign in again asking for the scopes asked so far plus the challenged
  ones (step-up), at most :data:`MAX_STEP_UPS` times per connection;
- anything else: the refusal stands.

A token is refreshed shortly before it expires (one timer per token). With a headless grant
(``OAuth(grant=...)``, ``headless.py``) signing in is a token request and never waits for a person. Where
the authorization server supports DPoP (or ``OAuth(dpop=True)``), tokens are bound to a key kept with the
sign-in and every request carries a fresh proof (:meth:`OAuthSignIn.request_headers`). When the server's
authorization server changed, the registration and tokens of the old one are dropped: they are
never shown to the new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import sys
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from typing import Protocol
from urllib.parse import urlsplit

import httpx

from ..errors import AuthenticationFailed, SignInFailed
from ..protocol.www_authenticate import Challenge
from ..redact import safe_url
from ..transport.base import Jobs
from . import device, discovery, dpop, mechanics
from .answers import AwaitedAnswer
from .discovery import ServerMetadata
from .dpop import DPoPKey
from .headless import headless_tokens
from .loopback import HOST, PATH, RedirectListener
from .mechanics import Proofs
from .registration import client_for, issuer_key
from .settings import OAuth, nobody_to_sign_in
from .store import ClientRegistration, SignIn, Tokens, TokenStore

log = logging.getLogger(__name__)

MAX_SIGN_INS = 3
SIGN_IN_WINDOW_S = 300.0
MAX_STEP_UPS = 2
#: A refused headless grant is not asked again for this long: requests in that time fail with its error
#: (no retry storm at the token endpoint; a rotated identity token is used after it).
HEADLESS_REFUSAL_HOLD_S = 60.0
HTTP_TIMEOUT_S = 10.0
#: Refresh this long before expiry (at most; a fifth of a short token's life).
REFRESH_MARGIN_S = 60.0
OFFLINE_ACCESS = "offline_access"


class Relay(Protocol):
    """A route to this process's loopback listener through a server the person's browser reaches
    (the Jupyter server's sign-in route, ``serverext/relay.py``): ``redirect_uri`` is its address."""

    redirect_uri: str

    def register(self, state: str, port: int) -> Callable[[], None]:
        """Route the answer carrying ``state`` to the listener on ``port``; returns the undo."""
        ...


#: Finds the relay to use for a sign-in now (None: the loopback redirect).
FindRelay = Callable[[], Awaitable[Relay | None]]


def resource_key(url: str) -> str:
    """The server URL as the store keys it: no userinfo, no fragment."""
    return safe_url(url).split("#", 1)[0]


class OAuthSignIn:
    """The auth hook of one HTTP connection that signs in with OAuth."""

    def __init__(
        self,
        settings: OAuth,
        server_url: str,
        server: str,
        *,
        store: TokenStore | None = None,
        implicit: bool = False,
        relay: FindRelay | None = None,
    ) -> None:
        self.settings = settings
        #: Where the person's browser brings the answer when it cannot reach this process's loopback
        #: (asked at each sign-in; a notebook's: the Jupyter server's route, when JupyterLab says so).
        self.relay = relay
        #: Not asked for by the user (a notebook's default): sign in only where the server publishes
        #: OAuth metadata; otherwise its refusal stands as it is.
        self.implicit = implicit
        self.server_url = server_url
        self.server = server
        self.store = store or TokenStore(settings.token_store)
        self.key = resource_key(server_url)
        self.version = 0
        self._headers: dict[str, str] = {}
        self._callbacks: list[Callable[[], None]] = []
        self._lock = asyncio.Lock()
        self._record = self.store.load(self.key) or SignIn(self.key)
        self._metadata: ServerMetadata | None = None
        self._resource_scopes: list[str] | None = None
        self._sign_ins: deque[float] = deque(maxlen=MAX_SIGN_INS)
        self._step_ups = 0
        self._refreshed_version = -1
        self._timer: asyncio.TimerHandle | None = None
        self._refreshing: asyncio.Task[None] | None = None
        #: Where a refresh ahead of expiry runs: the transport's group (``attach``); without one (a
        #: sign-in used on its own) the token is refreshed when a server refuses it instead.
        self._jobs: Jobs | None = None
        #: Told True while a person is being waited for (a caller's timeout should not run then).
        self.waiting: list[Callable[[bool], None]] = []
        #: The DPoP key of this server's sign-in (loaded once), and while the token in use is bound to
        #: it, the same key (None: bearer tokens, no proofs) and the resource server's nonce.
        self._dpop: DPoPKey | None = None
        self._proving: DPoPKey | None = None
        self._access_token = ""
        self._rs_nonce: str | None = None
        #: When the headless grant was last refused, and how (it is not asked again for a while).
        self._refused: tuple[float, SignInFailed] | None = None
        if self._record.tokens is not None:
            self._use(self._record.tokens, save=False)

    # -- the hook ------------------------------------------------------------------------------

    def headers(self) -> Mapping[str, str]:
        return self._headers

    def request_headers(self, method: str, url: str) -> Mapping[str, str] | None:
        """A fresh DPoP proof for each request while the token is DPoP-bound; else None."""
        proving = self._proving
        if proving is None:
            return None
        return {"DPoP": proving.proof(method, url, self._access_token, self._rs_nonce)}

    def on_change(self, callback: Callable[[], None]) -> None:
        self._callbacks.append(callback)

    async def challenged(self, failure: AuthenticationFailed, version: int) -> bool:
        try:
            return await self._challenged(failure, version)
        except _NoOAuth:
            return False  # the server asks for credentials but not through OAuth

    async def _challenged(self, failure: AuthenticationFailed, version: int) -> bool:
        async with self._lock:
            if version != self.version:
                return True  # another request already renewed the credentials
            if self._proving is not None and failure.status_code == 401 and _wants_nonce(failure):
                return self._take_nonce(failure.dpop_nonce)
            challenge = failure.challenge
            if failure.status_code == 403:
                if challenge is None or challenge.error != "insufficient_scope":
                    return False
                if self._step_ups >= MAX_STEP_UPS:
                    raise SignInFailed(
                        f"the server still refuses access after {MAX_STEP_UPS} sign-ins asking for more scope "
                        f"(it wants {challenge.scope or 'an unnamed scope'}): ask its administrator for access",
                        server=self.server,
                    ) from None
                self._step_ups += 1
                wanted = list(dict.fromkeys([*self._record.scopes, *(challenge.scope or "").split()]))
                await self._sign_in(challenge, wanted)
                return True
            tokens = self._record.tokens
            if tokens and tokens.refresh_token and self._refreshed_version != self.version:
                self._refreshed_version = self.version
                if await self._try_refresh(challenge):
                    return True
            await self._sign_in(challenge, None)
            return True

    # -- what users call through the magics / the client ----------------------------------------

    def _take_nonce(self, nonce: str | None) -> bool:
        """The server wants a DPoP nonce in the proof: True (send again) when it gave a new one."""
        if not nonce or nonce == self._rs_nonce or len(nonce) > dpop.MAX_NONCE_CHARS or not nonce.isprintable():
            return False  # none, or the one the refused request already carried: the refusal stands
        self._rs_nonce = nonce
        self._set_headers(self._headers)  # a new version: requests refused before this one go again
        return True

    async def sign_in(self) -> None:
        """Sign in now (even with a token in hand), e.g. ``%mcp_login``."""
        async with self._lock:
            self._refused = None
            try:
                await self._sign_in(None, self._record.scopes or None)
            except _NoOAuth:
                raise SignInFailed(
                    "the server publishes no OAuth metadata: there is nowhere to sign in", server=self.server
                ) from None

    def sign_out(self) -> bool:
        """Forget the tokens and registration (here and in the store); True when there were any."""
        had = self.store.delete(self.key) or self._record.tokens is not None
        self._record = SignIn(self.key)
        self._cancel_timer()
        self._set_headers({})
        return had

    def attach(self, jobs: Jobs) -> None:
        """Run a refresh ahead of expiry in ``jobs`` (the connection's transport's group)."""
        self._jobs = jobs

    async def aclose(self) -> None:
        self._cancel_timer()
        if self._refreshing is not None:
            self._refreshing.cancel()
            with contextlib.suppress(BaseException):
                await self._refreshing

    # -- refreshing ----------------------------------------------------------------------------

    async def _try_refresh(self, challenge: Challenge | None) -> bool:
        tokens, client = self._record.tokens, self._record.client
        if tokens is None or client is None or not tokens.refresh_token:
            return False
        try:
            async with self._http() as http:
                metadata = await self._server_metadata(http, challenge)
                if issuer_key(metadata) != client.issuer:
                    return False  # a new authorization server: its own sign-in
                proofs = Proofs(dpop=self._dpop if tokens.token_type == dpop.SCHEME else None)
                fresh = await mechanics.refresh(
                    http, metadata, client, tokens, self._record.indicator or self.key, self.server, proofs
                )
        except SignInFailed as exc:
            log.info("%s: refreshing the token failed: %s", self.server, exc.detail)
            return False
        self._use(fresh)
        return True

    def _arm_timer(self, tokens: Tokens) -> None:
        self._cancel_timer()
        if tokens.expires_at is None or not tokens.refresh_token:
            return
        lifetime = tokens.expires_at - time.time()
        margin = min(REFRESH_MARGIN_S, max(lifetime, 0) / 5)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._timer = loop.call_later(max(0.0, lifetime - margin), self._refresh_soon)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _refresh_soon(self) -> None:
        self._timer = None
        if self._jobs is not None and (self._refreshing is None or self._refreshing.done()):
            self._refreshing = self._jobs.spawn(self._refresh_ahead(), name=f"mcp-refresh {self.server}")

    async def _refresh_ahead(self) -> None:
        async with self._lock:
            version = self.version
            if not await self._try_refresh(None) and version == self.version:
                log.info(
                    "%s: the token expires and could not be refreshed ahead; next refusal signs in", self.server
                )

    # -- signing in ----------------------------------------------------------------------------

    def _http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=HTTP_TIMEOUT_S, follow_redirects=False)

    async def _server_metadata(self, http: httpx.AsyncClient, challenge: Challenge | None) -> ServerMetadata:
        hinted = challenge.resource_metadata if challenge is not None else None
        resource = await discovery.discover_resource(http, self.server_url, hinted, self.server)
        if resource is None:
            self._record.indicator = self.key
            self._resource_scopes = None
            found = await discovery.discover_legacy(http, self.server_url, self.server, defaults=not self.implicit)
            if found is None:
                raise _NoOAuth
            metadata = found
        else:
            self._record.indicator = resource.resource
            self._resource_scopes = resource.scopes_supported
            metadata = await discovery.discover_server(http, resource.authorization_servers[0], self.server)
        self._metadata = metadata
        return metadata

    def _scopes(
        self, challenge: Challenge | None, metadata: ServerMetadata, wanted: list[str] | None
    ) -> list[str]:
        scopes = wanted or self.settings.scope_list
        if not scopes and challenge is not None and challenge.scope:
            scopes = challenge.scope.split()
        if not scopes:
            scopes = list(self._resource_scopes or [])
        headless = self.settings.headless  # no refresh token: the grant itself gets new ones
        offered = OFFLINE_ACCESS in (metadata.scopes_supported or [])
        if scopes and not headless and OFFLINE_ACCESS not in scopes and offered:
            scopes = [*scopes, OFFLINE_ACCESS]  # ask for a refresh token where the server offers them
        return scopes

    async def _sign_in(self, challenge: Challenge | None, wanted: list[str] | None) -> None:
        now = time.monotonic()
        if self._refused is not None and now - self._refused[0] < HEADLESS_REFUSAL_HOLD_S:
            raise self._refused[1]
        if len(self._sign_ins) == MAX_SIGN_INS and now - self._sign_ins[0] < SIGN_IN_WINDOW_S:
            raise SignInFailed(
                f"the server refused the tokens of {MAX_SIGN_INS} sign-ins in a row; check that this account "
                "may use it (then %mcp_login NAME)",
                server=self.server,
            )
        self._sign_ins.append(now)
        async with self._http() as http:
            metadata = await self._server_metadata(http, challenge)
            issuer = issuer_key(metadata)
            kept = self._record.client
            if kept is not None and kept.issuer != issuer:
                log.info("%s: the server moved to another authorization server; registering there", self.server)
                self._record = SignIn(self.key, indicator=self._record.indicator)
                kept = None
            proofs = Proofs(dpop=self._dpop_key(metadata))
            if self.settings.headless:
                scopes = self._scopes(challenge, metadata, wanted)
                indicator = self._record.indicator or self.key
                try:
                    client, tokens = await headless_tokens(
                        http, self.settings, metadata, scopes, indicator, self.server, proofs
                    )
                except SignInFailed as exc:
                    self._refused = (time.monotonic(), exc)
                    raise
                self._record.client = client
                self._record.scopes = scopes
                self._use(tokens)
                return
            nobody = nobody_to_sign_in()
            if nobody is not None:  # a person's sign-in would wait for its timeout: fail now, saying what to do
                raise SignInFailed(
                    f'{nobody}: give it a headless grant, e.g. mtj.OAuth(grant="client_credentials", '
                    'client_id=..., client_secret_file=...) or mcp.json\'s "oauth": {"grant": ...} '
                    '(docs/sign-in.md: "Which way to sign in where"), or sign in once elsewhere and keep the '
                    "token store",
                    server=self.server,
                )
            if device.wanted(self.settings, metadata):  # no browser can reach us: a code to enter elsewhere
                scopes = self._scopes(challenge, metadata, wanted)
                indicator = self._record.indicator or self.key
                self._record.client, tokens = await device.device_sign_in(
                    http, self.settings, metadata, kept, scopes, indicator, self.server, proofs, self.waiting
                )
                self._record.scopes = scopes
                self._use(tokens)
                return
            scopes, tokens, awaited = await self._with_person(http, metadata, kept, challenge, wanted, proofs)
        try:
            self._record.scopes = scopes
            self._use(tokens)
        finally:
            awaited.settle(None)
        self._tell_person(f"signed in to {self.server}")

    async def _with_person(
        self,
        http: httpx.AsyncClient,
        metadata: ServerMetadata,
        kept: ClientRegistration | None,
        challenge: Challenge | None,
        wanted: list[str] | None,
        proofs: Proofs,
    ) -> tuple[list[str], Tokens, AwaitedAnswer]:
        """A person signs in at the authorization URL; the answer (from the loopback listener or pasted
        by hand, ``answers.py``) is checked and its code exchanged."""
        relay = await self.relay() if self.relay is not None else None
        listener = await self._listen(kept if relay is None else None)
        awaited: AwaitedAnswer | None = None
        try:
            redirect_uri = relay.redirect_uri if relay is not None else listener.redirect_uri
            client = await client_for(http, metadata, self.settings, redirect_uri, kept, self.server)
            self._record.client = client
            scopes = self._scopes(challenge, metadata, wanted)
            indicator = self._record.indicator or self.key
            request = mechanics.authorization_request(metadata, client, redirect_uri, scopes, indicator)
            awaited = AwaitedAnswer(request.state, self.server)
            listener.expect(awaited)
            unregister = relay.register(request.state, listener.port) if relay is not None else None
            try:
                with awaited:  # an address pasted by hand finds this sign-in while it waits
                    answer = await self._ask_person(request.url, awaited)
            finally:
                if unregister is not None:
                    unregister()
            await listener.close()
            code = mechanics.code_from(answer, request, metadata, self.server)
            tokens = await mechanics.exchange_code(
                http, metadata, client, request, code, indicator, self.server, proofs
            )
        except SignInFailed as exc:
            if awaited is not None:
                awaited.settle(exc)
                self._tell_person(f"sign-in to {self.server} failed: {exc.detail}")
            raise
        except BaseException:
            if awaited is not None:
                awaited.settle(SignInFailed("the sign-in was stopped", server=self.server))
            raise
        finally:
            await listener.close()
        return scopes, tokens, awaited

    def _dpop_key(self, metadata: ServerMetadata) -> DPoPKey | None:
        """The key to bind this sign-in's tokens to: the one kept, or a new one (None: no DPoP)."""
        if self.settings.dpop is False:
            return None
        algorithm = dpop.choose_algorithm(metadata.dpop_algorithms, self.settings.dpop is True, self.server)
        if algorithm is None:
            return None
        kept = self._record.dpop_key
        if kept is None or kept.get("alg") != algorithm:
            kept = self._record.dpop_key = dpop.new_key(algorithm)
            self._dpop = None
        if self._dpop is None:
            self._dpop = DPoPKey(kept)
        return self._dpop

    async def _listen(self, kept: ClientRegistration | None) -> RedirectListener:
        port = self.settings.redirect_port
        kept_uri = kept.redirect_uri if kept is not None else None
        if port is None and kept_uri and kept_uri.startswith(f"http://{HOST}:") and kept_uri.endswith(PATH):
            port = _port_of(kept_uri)  # the kept registration's loopback port
        listener = RedirectListener(port or 0)
        try:
            await listener.start()
        except OSError as exc:
            if self.settings.redirect_port is not None:
                raise SignInFailed(
                    f"cannot listen for the sign-in on 127.0.0.1:{port} ({exc.strerror or exc}): choose another "
                    "OAuth(redirect_port=...)",
                    server=self.server,
                ) from None
            listener = RedirectListener(0)  # the kept registration's port is taken: register anew
            await listener.start()
        return listener

    async def _ask_person(self, url: str, awaited: AwaitedAnswer) -> dict[str, str]:
        for waiting in self.waiting:
            waiting(True)
        try:
            opened = (self.settings.open_url or open_in_browser)(url)
            if inspect.isawaitable(opened):
                await opened
            return await awaited.wait(self.settings.sign_in_timeout)
        finally:
            for waiting in self.waiting:
                waiting(False)

    def _tell_person(self, text: str) -> None:
        """Tell whoever showed the sign-in link how it ended (the notebook's link becomes this line)."""
        done = getattr(self.settings.open_url, "done", None)
        if callable(done):
            done(text)

    def _use(self, tokens: Tokens, *, save: bool = True) -> None:
        self._record.tokens = tokens
        if save:
            self.store.save(self._record)
        self._arm_timer(tokens)
        bound = tokens.token_type == dpop.SCHEME
        if bound and self._dpop is None and self._record.dpop_key is not None:
            self._dpop = DPoPKey(self._record.dpop_key)  # a kept sign-in: its key, loaded once
        self._proving = self._dpop if bound else None
        self._access_token = tokens.access_token
        scheme = dpop.SCHEME if self._proving is not None else "Bearer"
        self._set_headers({"Authorization": f"{scheme} {tokens.access_token}"})

    def _set_headers(self, headers: dict[str, str]) -> None:
        self._headers = headers
        self.version += 1
        for callback in self._callbacks:
            callback()


def _wants_nonce(failure: AuthenticationFailed) -> bool:
    """Whether the refusal is a DPoP challenge asking for a nonce (``use_dpop_nonce``)."""
    return any(c.scheme.lower() == "dpop" and c.error == dpop.USE_NONCE for c in failure.challenges)


class _NoOAuth(Exception):
    """The server publishes no OAuth metadata and the sign-in was not asked for."""


def _port_of(url: str) -> int | None:
    try:
        return urlsplit(url).port
    except ValueError:
        return None


def open_in_browser(url: str) -> None:
    """Open ``url`` in a browser tab when there is a desktop; else print it for a person to open."""
    has_desktop = sys.platform in ("darwin", "win32") or bool(
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )
    if has_desktop:
        import webbrowser

        if webbrowser.open_new_tab(url):
            return
    print(f"Open this URL to sign in:\n  {url}", file=sys.stderr, flush=True)
