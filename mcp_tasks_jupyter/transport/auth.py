"""The one auth hook of an HTTP connection: where its credentials come from, and what happens when
the server refuses them.

The transport puts :meth:`AuthHook.headers` on every request (POST, the GET stream, DELETE) and
rebuilds its headers only when the hook says they changed; a hook whose credentials need a proof
per request (DPoP, RFC 9449) also has :meth:`ProvingAuthHook.request_headers`, asked once per
request. The session, on an :class:`~mcp_tasks_jupyter.errors.AuthenticationFailed`, asks
:meth:`AuthHook.challenged` whether to send the request again: the hook may refresh a token or
sign in first (``oauth/``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol

from ..errors import AuthenticationFailed

if TYPE_CHECKING:
    from .base import Jobs


class AuthHook(Protocol):
    #: Goes up by one whenever :meth:`headers` changes.
    version: int

    def headers(self) -> Mapping[str, str]:
        """The headers that carry the credentials now (e.g. ``Authorization``); cheap, no I/O."""

    def on_change(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` whenever the headers change."""

    async def challenged(self, failure: AuthenticationFailed, version: int) -> bool:
        """The server refused a request sent with the headers of ``version``: True when it is worth
        sending again (new credentials are in place), False to let the failure stand."""

    async def aclose(self) -> None:
        """The connection closed: stop any timer (a refresh ahead of expiry)."""

    def attach(self, jobs: Jobs) -> None:
        """The group the hook starts its background work in (a refresh ahead of expiry): the
        transport's, given when the connection starts."""


class ProvingAuthHook(AuthHook, Protocol):
    """An auth hook whose requests each carry headers of their own (optional: the transport looks for
    ``request_headers`` once, when it is made)."""

    def request_headers(self, method: str, url: str) -> Mapping[str, str] | None:
        """Headers for this one request (``method`` to ``url``) beyond :meth:`headers`, e.g. a fresh DPoP
        proof; None when there are none. Called for every request: no I/O, and cheap when None."""
