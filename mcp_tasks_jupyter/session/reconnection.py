"""Keeping one connection's session: a new session when the server ended ours (HTTP 404), and
reconnection when the server went away (connection refused or reset).

A renewal is shared by every request that met the same loss (``renew``); requests wait for it before
going out, so nothing is sent without the new session's id. Reconnection starts only after a handshake
was answered once (a server never reached fails the connect at once: there is no connection to keep),
probes with ``ping`` under backoff for ``reconnect_for`` seconds, and gives the connection up after
that (its unfinished tasks end lost). ``generation`` counts the sessions started on the connection:
what a task or an answer belongs to is told by it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import ConnectionFailed, HTTPStatusError, MCPError, ProtocolError, RequestTimeout, SessionExpired
from ..protocol.versions import LATEST
from .listeners import tell

if TYPE_CHECKING:
    from .session import Session

log = logging.getLogger(__name__)

#: How long an HTTP server that went away (connection refused or reset) is reconnected, with
#: backoff, before the connection and its unfinished tasks are given up (``connect(reconnect_for=)``).
RECONNECT_FOR_S = 300.0
#: The first pause before a reconnection attempt, doubled after each failed one up to the maximum.
RECONNECT_FIRST_DELAY_S = 0.25
RECONNECT_MAX_DELAY_S = 10.0
#: How long one reconnection probe (``ping``) may take.
RECONNECT_PROBE_TIMEOUT_S = 5.0


class Reconnection:
    """A new session after a 404 and reconnection to a server that went away (``Session.reconnection``)."""

    def __init__(self, session: Session) -> None:
        self._session = session
        #: Sessions started on this connection: 0 for the first, +1 each time the server ended one.
        self.generation = 0
        #: How long a server that went away is reconnected before giving up (HTTP).
        self.reconnect_for = RECONNECT_FOR_S
        #: When the server stopped answering (a time.time()), while reconnecting; else None.
        self.since: float | None = None
        self._listeners: list[Callable[[], None]] = []
        self._reachable = asyncio.Event()
        self._reachable.set()
        self._renewal: asyncio.Task[None] | None = None
        self._last_probe_error = "connection refused"

    def when_changed(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` (no arguments) when reconnecting starts or ends."""
        self._listeners.append(listener)

    @property
    def renewal(self) -> asyncio.Task[None] | None:
        """The new session being started, if one is (requests wait for it before going out)."""
        return self._renewal

    async def wait_reachable(self) -> None:
        """Return once the server answers again, or the connection was given up."""
        await self._reachable.wait()

    def closed(self) -> None:
        """The connection closed: nobody waits for the server any more."""
        self._reachable.set()

    # -- a new session ---------------------------------------------------------------------------

    async def renew(self, seen_generation: int, cause: SessionExpired) -> None:
        """The server ended our session (HTTP 404): start a new one, once per loss. Callers that saw
        the same loss share one renewal; one that saw an older session only retries."""
        if self.generation != seen_generation:
            return
        if self._renewal is None:
            self._renewal = self._session.background.spawn(
                self._renew(cause), name=f"mcp-renew {self._session.name}"
            )
        await asyncio.shield(self._renewal)

    async def _renew(self, cause: SessionExpired) -> None:
        session = self._session
        log.warning("%s: %s; starting a new session", session.name, cause.detail)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.reconnect_for
        delay = RECONNECT_FIRST_DELAY_S
        try:
            while True:
                session.transport.reset_session()
                try:
                    await session.initialize(session.protocol_version or LATEST)
                    break
                except (ConnectionFailed, RequestTimeout) as exc:
                    if _refused(exc) or loop.time() + delay > deadline or session.closed_error is not None:
                        raise ConnectionFailed(
                            f"the server ended the session and a new one could not be started: {exc.detail}",
                            server=session.name,
                        ) from None
                    log.info("%s: a new session failed (%s); again in %.1f s", session.name, exc.detail, delay)
                await asyncio.sleep(delay)
                delay = min(RECONNECT_MAX_DELAY_S, delay * 2)
            self.generation += 1
            session.server_requests.new_session()
            log.info("%s: new session started", session.name)
        finally:
            self._renewal = None

    # -- a server that went away ---------------------------------------------------------------------

    def unreachable(self) -> None:
        """A request found the server unreachable: reconnect in the background (once at a time).
        Not before the first handshake: a server never reached fails the connect at once, with nothing
        said of reconnecting (there is no connection to keep)."""
        session = self._session
        if session.closed_error is not None or self.since is not None or not session.handshaken:
            return
        self.since = time.time()
        self._reachable.clear()
        log.warning(
            "%s: the server cannot be reached; reconnecting for up to %.0f s", session.name, self.reconnect_for
        )
        self._changed()
        session.background.spawn(self._reconnect(), name=f"mcp-reconnect {session.name}")

    async def _reconnect(self) -> None:
        session = self._session
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.reconnect_for
        delay = RECONNECT_FIRST_DELAY_S
        try:
            while session.closed_error is None:
                await asyncio.sleep(max(0.0, min(delay, deadline - loop.time())))
                if await self._answers(deadline):
                    break
                if loop.time() >= deadline:
                    session.connection_lost(
                        ConnectionFailed(
                            f"the server did not come back within {self.reconnect_for:.0f} s "
                            f"({self._last_probe_error}); its unfinished tasks are given up here (they may "
                            f"still run on the server)",
                            server=session.name,
                        )
                    )
                    break
                delay = min(RECONNECT_MAX_DELAY_S, delay * 2)
        finally:
            self.since = None
            self._reachable.set()
            self._changed()
        if session.closed_error is None:
            log.info("%s: the server is reachable again", session.name)  # good news is no warning (red in a cell)

    async def _answers(self, deadline: float) -> bool:
        """One reconnection probe: does the server answer at all (any answer counts)?"""
        session = self._session
        timeout = max(0.5, min(RECONNECT_PROBE_TIMEOUT_S, deadline - asyncio.get_running_loop().time()))
        generation = self.generation
        try:
            try:
                await session.request_once("ping", None, timeout)
            except SessionExpired as exc:  # back, without our session: start a new one
                await self.renew(generation, exc)
            return True
        except (ProtocolError, HTTPStatusError):
            return True  # it answers (an error is an answer; what polls get then is theirs to judge)
        except (ConnectionFailed, RequestTimeout) as exc:
            self._last_probe_error = exc.detail
            return False

    def _changed(self) -> None:
        tell(self._listeners, what="connection")


def _refused(exc: MCPError) -> bool:
    """An answer that says no to this client (401/403): retrying cannot help."""
    return isinstance(exc, HTTPStatusError) and exc.status_code in (401, 403)
