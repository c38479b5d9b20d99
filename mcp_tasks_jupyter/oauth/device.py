"""The device authorization grant (RFC 8628): signing in from a terminal with no browser of its own.

The authorization server gives a user code and a URL; the person opens the URL anywhere (a phone,
another computer) and enters the code, while this client polls the token endpoint at the server's
``interval`` (5 s when it names none), waiting 5 s longer after each ``slow_down`` (section 3.5), and
gives up when the code expires (``expires_in``). Every number from the server is bounded.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from ..errors import SignInFailed
from ..transport.http_answers import printable
from . import mechanics
from .discovery import ServerMetadata
from .mechanics import Proofs
from .store import ClientRegistration, Tokens

DEFAULT_INTERVAL_S = 5
MIN_INTERVAL_S = 1
MAX_INTERVAL_S = 60
SLOW_DOWN_S = 5
DEFAULT_EXPIRES_S = 600
MAX_EXPIRES_S = 1800
MAX_CODE_CHARS = 64

Sleep = Callable[[float], Awaitable[Any]]


@dataclass(frozen=True)
class DeviceCode:
    """What the person needs: the URL to open and the code to enter there."""

    user_code: str
    verification_uri: str
    verification_uri_complete: str | None
    expires_in: int
    interval: int

    @property
    def instructions(self) -> str:
        minutes = max(1, round(self.expires_in / 60))
        return f"open {self.verification_uri} and enter the code {self.user_code} (within {minutes} min)"


def device_code_of(data: dict[str, Any], server: str) -> tuple[str, DeviceCode]:
    """The device code and what to show, from a device authorization response (bounded, checked)."""
    device_code, user_code, uri = data.get("device_code"), data.get("user_code"), data.get("verification_uri")
    if not (isinstance(device_code, str) and device_code and isinstance(user_code, str) and user_code):
        raise SignInFailed("the device authorization response lacks device_code or user_code", server=server)
    if len(user_code) > MAX_CODE_CHARS or not user_code.isprintable():
        raise SignInFailed(
            "the device authorization response's user_code is not a short printable code", server=server
        )
    if not (isinstance(uri, str) and uri.startswith(("https://", "http://")) and uri.isprintable()):
        raise SignInFailed("the device authorization response lacks a verification_uri", server=server)
    complete = data.get("verification_uri_complete")
    if not (isinstance(complete, str) and complete.startswith(("https://", "http://")) and complete.isprintable()):
        complete = None
    return device_code, DeviceCode(
        user_code,
        printable(uri, 500),
        complete,
        _bounded(data.get("expires_in"), DEFAULT_EXPIRES_S, 1, MAX_EXPIRES_S),
        _bounded(data.get("interval"), DEFAULT_INTERVAL_S, MIN_INTERVAL_S, MAX_INTERVAL_S),
    )


def _bounded(value: Any, default: int, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return default
    return int(max(low, min(high, value)))


def tell_terminal(server: str, code: DeviceCode) -> None:
    """The default way to show the code: one line on stderr."""
    print(f"To sign in to {server}, {code.instructions}", file=sys.stderr, flush=True)


async def sign_in_with_device(
    http: httpx.AsyncClient,
    metadata: ServerMetadata,
    client: ClientRegistration,
    scopes: list[str],
    resource: str,
    server: str,
    proofs: Proofs,
    show: Callable[[DeviceCode], Any],
    *,
    sleep: Sleep = asyncio.sleep,
) -> Tokens:
    """Ask for a user code, show it, and poll until the person has signed in (or it expires)."""
    data = await mechanics.device_authorization(http, metadata, client, scopes, resource, server)
    device_code, code = device_code_of(data, server)
    shown = show(code)
    if inspect.isawaitable(shown):
        await shown
    interval = code.interval
    deadline = time.monotonic() + code.expires_in
    while True:
        if time.monotonic() + interval > deadline:
            raise SignInFailed(f"nobody entered the code within {code.expires_in} s; sign in again", server=server)
        await sleep(interval)
        answer = await mechanics.device_token(http, metadata, client, device_code, resource, server, proofs)
        if isinstance(answer, Tokens):
            return answer
        if answer == "slow_down":
            interval = min(MAX_INTERVAL_S, interval + SLOW_DOWN_S)
