"""The device authorization grant (RFC 8628): signing in where no browser can reach the client.

In a terminal, an SSH session or any kernel whose machine has no browser, the loopback redirect of
the authorization code flow cannot work. When the authorization server's metadata names a
``device_authorization_endpoint``, the client asks it for a code, tells the person (one line: "To sign
in to SERVER, visit URL and enter CODE"; or the link ``OAuth(open_url=...)`` shows), and polls the
token endpoint with the device code until the person has approved it, refused it, or the code expired.

It is used when asked for (``OAuth(grant="device_code")``), and instead of the person's authorization
code flow when nothing could open or show its link: no ``open_url`` and no browser here (see
:func:`has_browser`), and the server offers it.

Every number from the server is bounded (the interval to [1, 60] s, the code's life to 30 min, each
``slow_down`` adds 5 s) and so is the whole wait (also by ``OAuth(sign_in_timeout=...)``); the wait is
a sleep that a cancel ends. Tokens are parsed as every other grant's (``mechanics.py``); the device
code is a secret (never shown), the user code is meant for the person's eyes.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from ..errors import SignInFailed, UsageError
from ..redact import register
from ..transport.http_answers import printable
from . import mechanics
from .assertions import private_key
from .discovery import ServerMetadata, https_or_loopback
from .headless import client_registration
from .mechanics import PRIVATE_KEY_JWT, Proofs
from .registration import issuer_key, register_client
from .settings import OAuth
from .store import ClientRegistration, Tokens

#: Bounds on the server's polling interval (RFC 8628 section 3.2: 5 s when it names none).
MIN_INTERVAL_S = 1.0
MAX_INTERVAL_S = 60.0
DEFAULT_INTERVAL_S = 5.0
#: What each ``slow_down`` answer adds to the interval (RFC 8628 section 3.5).
SLOW_DOWN_S = 5.0
#: A device code is waited for at most this long, whatever the server says (and no longer than the
#: sign-in timeout).
MAX_CODE_LIFE_S = 1800.0
MAX_USER_CODE_CHARS = 64
MAX_DEVICE_CODE_CHARS = 4096


@dataclass(frozen=True)
class DeviceAuthorization:
    """The device authorization answer, checked and bounded."""

    device_code: str
    user_code: str
    verification_uri: str
    verification_uri_complete: str | None
    expires_in: float
    interval: float


def has_browser(environ: Mapping[str, str] | None = None, platform: str | None = None) -> bool:
    """Whether a browser could open on the person's screen from here: a desktop session (``DISPLAY``,
    ``WAYLAND_DISPLAY``), a ``BROWSER`` the person chose, or macOS or Windows outside an SSH session."""
    env = os.environ if environ is None else environ
    if env.get("BROWSER") or env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"):
        return True
    remote = bool(env.get("SSH_CONNECTION") or env.get("SSH_TTY"))
    return (platform or sys.platform) in ("darwin", "win32") and not remote


def wanted(settings: OAuth, metadata: ServerMetadata) -> bool:
    """Whether this sign-in uses the device grant: asked for, or a person's sign-in that nothing here
    could open or show a link for, at a server that offers the grant."""
    if settings.grant == "device_code":
        return True
    return (
        settings.grant == "authorization_code"
        and settings.open_url is None
        and metadata.device_authorization_endpoint is not None
        and not has_browser()
    )


async def device_sign_in(
    http: httpx.AsyncClient,
    settings: OAuth,
    metadata: ServerMetadata,
    kept: ClientRegistration | None,
    scopes: list[str],
    resource: str,
    server: str,
    proofs: Proofs,
    waiting: list[Callable[[bool], None]],
) -> tuple[ClientRegistration, Tokens]:
    """Sign in with the device grant: the client registration used and the tokens (SignInFailed when
    the server offers no such grant, the person refused, or the code expired)."""
    if metadata.device_authorization_endpoint is None:
        why = metadata.device_refusal or (
            f"the authorization server {printable(issuer_key(metadata), 200)} offers no device authorization "
            "grant (its metadata names no device_authorization_endpoint)"
        )
        raise SignInFailed(f"{why}; sign in with the browser instead (OAuth(grant=...) unset)", server=server)
    client = await _client(http, settings, metadata, kept, server, proofs)
    answer = await mechanics.device_authorization(http, metadata, client, scopes, resource, server, proofs)
    authorization = parse_authorization(answer, server)
    for told in waiting:
        told(True)
    try:
        await _show(settings, authorization, server)
        tokens = await _poll(http, settings, metadata, client, authorization, resource, server, proofs)
    except SignInFailed as exc:
        _tell(settings, f"sign-in to {server} failed: {exc.detail}")
        raise
    finally:
        for told in waiting:
            told(False)
    _tell(settings, f"signed in to {server}")
    return client, tokens


def parse_authorization(data: Mapping[str, Any], server: str) -> DeviceAuthorization:
    """The device authorization answer (RFC 8628 section 3.2), its fields checked and its numbers bounded."""
    device_code, user_code = data.get("device_code"), data.get("user_code")
    uri, complete = data.get("verification_uri"), data.get("verification_uri_complete")
    if not isinstance(device_code, str) or not device_code or len(device_code) > MAX_DEVICE_CODE_CHARS:
        raise SignInFailed("the device authorization answer carries no usable device_code", server=server)
    register(device_code)
    if (
        not isinstance(user_code, str)
        or not user_code
        or len(user_code) > MAX_USER_CODE_CHARS
        or not user_code.isprintable()
        or user_code.strip() != user_code
    ):
        raise SignInFailed("the device authorization answer carries no usable user_code", server=server)
    if not https_or_loopback(uri):
        shown = printable(uri, 200) if isinstance(uri, str) else "none"
        raise SignInFailed(
            f"the device authorization answer's verification_uri ({shown}) is not an https URL (nor http on "
            "this machine): not sending a person there",
            server=server,
        )
    return DeviceAuthorization(
        device_code=device_code,
        user_code=user_code,
        verification_uri=str(uri),
        verification_uri_complete=str(complete) if https_or_loopback(complete) else None,
        expires_in=_bounded(data.get("expires_in"), 1.0, MAX_CODE_LIFE_S, MAX_CODE_LIFE_S),
        interval=_bounded(data.get("interval"), MIN_INTERVAL_S, MAX_INTERVAL_S, DEFAULT_INTERVAL_S),
    )


def _bounded(value: Any, low: float, high: float, default: float) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value != value:
        return default
    return float(min(max(value, low), high))


async def _client(
    http: httpx.AsyncClient,
    settings: OAuth,
    metadata: ServerMetadata,
    kept: ClientRegistration | None,
    server: str,
    proofs: Proofs,
) -> ClientRegistration:
    """Who the client is for the device grant: as configured, else the kept device registration, else
    a Client ID Metadata Document, else one registered now (without a redirect URI)."""
    issuer = issuer_key(metadata)
    if settings.client_id:
        client = client_registration(settings, metadata)
        if client.auth_method == PRIVATE_KEY_JWT:
            try:
                proofs.signing_key = private_key(
                    settings.private_key, settings.private_key_file, settings.signing_algorithm
                )
            except UsageError as exc:
                raise SignInFailed(f"the device_code grant cannot start: {exc.detail}", server=server) from None
        return client
    if kept is not None and kept.issuer == issuer and kept.client_id and kept.redirect_uri is None:
        return kept
    if metadata.client_id_metadata_documents and settings.client_metadata_url:
        return ClientRegistration(issuer, settings.client_metadata_url, None, "none")
    if metadata.registration_endpoint:
        return await register_client(http, metadata, settings, None, server)
    raise SignInFailed(
        f"the authorization server {printable(issuer, 200)} offers no dynamic client registration: register a "
        'client there for the device grant and pass it, e.g. mtj.OAuth(grant="device_code", client_id=...)',
        server=server,
    )


async def _show(settings: OAuth, authorization: DeviceAuthorization, server: str) -> None:
    """Tell the person where to go: through ``open_url`` when given (the link that carries the code
    where the server gave one), else one line on stderr, as a terminal shows it."""
    complete = authorization.verification_uri_complete
    if settings.open_url is not None:
        opened = settings.open_url(complete or authorization.verification_uri)
        if inspect.isawaitable(opened):
            await opened
        if complete is not None:
            return  # the link carries the code
    line = (
        f"To sign in to {server}, visit {printable(authorization.verification_uri, 2048)} "
        f"and enter {printable(authorization.user_code, MAX_USER_CODE_CHARS)}"
    )
    print(line, file=sys.stderr, flush=True)


async def _poll(
    http: httpx.AsyncClient,
    settings: OAuth,
    metadata: ServerMetadata,
    client: ClientRegistration,
    authorization: DeviceAuthorization,
    resource: str,
    server: str,
    proofs: Proofs,
) -> Tokens:
    """Ask the token endpoint at the server's interval until the person approved (RFC 8628 section 3.4)."""
    loop = asyncio.get_running_loop()
    waited = min(authorization.expires_in, settings.sign_in_timeout)
    deadline = loop.time() + waited
    interval = authorization.interval
    code = printable(authorization.user_code, MAX_USER_CODE_CHARS)
    while True:
        remaining = deadline - loop.time()
        if remaining <= 0:
            expired = authorization.expires_in <= settings.sign_in_timeout
            raise SignInFailed(
                f"nobody entered the code {code} at {printable(authorization.verification_uri, 200)} "
                + (f"before it expired ({waited:g} s)" if expired else f"within {waited:g} s (sign_in_timeout)")
                + "; sign in again",
                server=server,
            )
        await asyncio.sleep(min(interval, remaining))  # (the last poll is at the deadline)
        answer = await mechanics.device_token(
            http, metadata, client, authorization.device_code, resource, server, proofs
        )
        if isinstance(answer, Tokens):
            return answer
        if answer == "slow_down":
            interval = min(interval + SLOW_DOWN_S, MAX_INTERVAL_S)
        elif answer == "access_denied":
            raise SignInFailed(
                f"the sign-in with the code {code} was refused at the authorization server (access_denied)",
                server=server,
            )
        elif answer == "expired_token":
            raise SignInFailed(
                f"the code {code} expired before the sign-in was approved (expired_token); sign in again",
                server=server,
            )


def _tell(settings: OAuth, text: str) -> None:
    """Tell whoever showed the link how it ended (the notebook's link becomes this line)."""
    done = getattr(settings.open_url, "done", None)
    if callable(done):
        done(text)
