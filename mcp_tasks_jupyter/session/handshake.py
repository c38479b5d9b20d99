"""How a connection starts: find out which wire the server speaks.

``protocol_version=None`` (auto): probe with ``server/discover`` on the stateless 2026-07-28 wire;
a ``DiscoverResult`` (or a recognised modern error) means a modern server. Anything else (another
error, an HTTP error status without a modern error body, a result that is no ``DiscoverResult``, a
broken answer, no answer within the probe timeout) means a legacy server: fall back to
``initialize``, which reports the trouble itself when it was not about eras. This is the fallback
both the stdio and the Streamable HTTP bindings of 2026-07-28 describe. Refused credentials (HTTP
401/403) are no sign of an era: they fail the connection at once.

A modern version (``"2026-07-28"``) speaks only the stateless wire; a legacy one (``"2025-11-25"``,
...) only ``initialize``, offering that version.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable

from ..errors import (
    AuthenticationFailed,
    ConnectionFailed,
    HTTPStatusError,
    InvalidMessage,
    MCPError,
    ProtocolError,
    RequestTimeout,
    SignInFailed,
    UsageError,
)
from ..protocol import jsonrpc, modern
from ..protocol.versions import ALL, LATEST, LATEST_MODERN, SUPPORTED, is_modern
from .session import Session

log = logging.getLogger(__name__)

#: How long a probe waits for a legacy server that does not answer requests before ``initialize``.
PROBE_TIMEOUT_S = 10.0
#: Over stdio, how long the probe still waits once the server has answered the ping sent behind it:
#: four times that round trip, within these bounds.
PING_GRACE_MIN_S = 0.05
PING_GRACE_MAX_S = 1.0


def check_version(protocol_version: str | None) -> None:
    if protocol_version is not None and protocol_version not in ALL:
        raise UsageError(f"unknown protocol version {protocol_version!r}; this client speaks {', '.join(ALL)}")


async def handshake(
    session: Session,
    protocol_version: str | None,
    *,
    stateless: bool | None,
    probe_timeout: float = PROBE_TIMEOUT_S,
) -> str:
    """Connect ``session`` on the right wire; return why that wire (for ``describe()``).

    ``stateless``: True/False when the chosen dialect needs one wire; None when either will do.
    """
    declare_extensions(session)
    if protocol_version is not None:
        if is_modern(protocol_version):
            if stateless is False:
                raise UsageError(f"protocol {protocol_version} is stateless; this dialect needs initialize")
            await _discover(session, protocol_version)
            return f"protocol_version={protocol_version!r} asked for"
        if stateless:
            raise UsageError(f"protocol {protocol_version} needs initialize; this dialect is stateless")
        await session.initialize(protocol_version)
        return f"protocol_version={protocol_version!r} asked for"
    if stateless is False:
        await session.initialize()
        return "the dialect needs initialize"
    legacy_version = await probe(session, probe_timeout)
    if legacy_version is None:
        return "server/discover answered"
    if stateless:
        raise ConnectionFailed(
            "the server does not speak the stateless 2026-07-28 protocol (server/discover "
            "failed), which this dialect needs",
            server=session.name,
        )
    await session.initialize(legacy_version)
    return "server/discover failed: a legacy server, so initialize"


def declare_extensions(session: Session) -> None:
    """The extensions of the client's capabilities (MCP Apps' ``io.modelcontextprotocol/ui``, ...) declared
    on every wire: ``initialize`` sends ``session.capabilities`` as they are; the stateless wire sends
    them in each request's ``_meta``, where ``Session.declare_extension`` puts them."""
    extensions = session.capabilities.get("extensions")
    for identifier, settings in (extensions or {}).items():
        session.declare_extension(identifier, settings)


async def _discover(session: Session, version: str) -> None:
    try:
        await session.discover(version)
    except ProtocolError as exc:
        if exc.code != jsonrpc.METHOD_NOT_FOUND or isinstance(exc, InvalidMessage):
            raise
        log.warning("%s: no server/discover; going on without the server's capabilities", session.name)


async def _probe_discover(session: Session, timeout: float) -> None:
    """``server/discover`` over stdio, with a ``ping`` right behind it (allowed before ``initialize``): a
    server that answers the ping but not the probe ignores ``server/discover`` (a legacy one), which is
    then known after one more round trip instead of the whole probe timeout."""
    loop = asyncio.get_running_loop()
    discover = session.background.future(session.discover(LATEST_MODERN, timeout=timeout), name="mcp-discover")
    sent = loop.time()
    ping = session.background.future(_answered(session.request("ping", {}, timeout=timeout)), name="mcp-ping")
    try:
        await asyncio.wait([discover, ping], return_when=asyncio.FIRST_COMPLETED)
        if not discover.done() and ping.result():
            # It answers requests: a modern one answers the probe about as fast (in order, usually).
            grace = min(PING_GRACE_MAX_S, max(PING_GRACE_MIN_S, 4 * (loop.time() - sent)))
            done, _ = await asyncio.wait([discover], timeout=grace)
            if not done:
                raise RequestTimeout(
                    "server/discover: no answer, though the server answered a ping", server=session.name
                )
        try:
            await discover
        except (MCPError, TimeoutError):
            await _let_answer(ping, session)
            raise
        await _let_answer(ping, session)
    finally:
        for job in (discover, ping):
            if not job.done():
                job.cancel()
        await asyncio.gather(discover, ping, return_exceptions=True)


async def _let_answer(ping: asyncio.Future[bool], session: Session) -> None:
    """Let the ping's answer come rather than withdraw it (a cancellation is one more message a server must
    understand); a server that answered the probe answers the ping right behind it."""
    if not ping.done() and session.closed_error is None:
        await asyncio.wait([ping], timeout=PING_GRACE_MAX_S)


async def _answered(request: Awaitable[object]) -> bool:
    """Whether the server answered ``request`` at all (an error is an answer)."""
    try:
        await request
    except ProtocolError:
        return True
    except (ConnectionFailed, RequestTimeout):
        return False
    return True


async def probe(session: Session, timeout: float) -> str | None:
    """Try the stateless wire. None: it works (the session is on it); else the legacy version to
    offer in ``initialize`` (the session is then back on the stateful wire)."""
    legacy = LATEST
    try:
        if session.transport.kind == "stdio":
            await _probe_discover(session, timeout)
        else:
            await session.discover(LATEST_MODERN, timeout=timeout)
        return None
    except InvalidMessage as exc:  # e.g. "{}" for a DiscoverResult: a legacy server's catch-all
        why = str(exc)
    except ProtocolError as exc:
        if exc.code == modern.UNSUPPORTED_PROTOCOL_VERSION:
            offered = modern.supported_versions(exc.data)
            legacy = modern.pick_version(offered, SUPPORTED) or ""
            if not legacy:
                raise  # a modern server with no version in common
            why = f"the server offers {', '.join(offered)}"
        elif modern.is_modern_error(exc.code, exc.data):
            raise  # a modern server that refused the probe itself
        else:
            why = f"JSON-RPC error {exc.code}: {exc.message}"
    except (AuthenticationFailed, SignInFailed):
        raise  # initialize would be refused the same way (and a person would be asked to sign in again)
    except HTTPStatusError as exc:
        why = f"HTTP {exc.status_code}"  # initialize will say it again if it is not about eras
    except RequestTimeout:
        why = f"no answer within {timeout} s"
    except ConnectionFailed as exc:
        if session.closed_error is not None:
            raise  # the connection itself is gone (a stdio server that exited)
        why = exc.detail  # e.g. an answer stream cut short; initialize will tell
    log.info("%s: server/discover failed (%s): falling back to initialize", session.name, why)
    return legacy
