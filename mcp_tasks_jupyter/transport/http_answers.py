"""Reading an HTTP answer, bounded, and saying plainly what was wrong with it.

The answer is untrusted: a body is read up to a bound and never further, what a message quotes from
it is cut and escaped, and the values of the headers the user configured (secrets) are never shown,
not even when a server echoes them back.
"""

from __future__ import annotations

import aiohttp

from ..errors import AuthenticationFailed, InvalidMessage
from ..protocol import jsonrpc
from ..protocol.www_authenticate import bearer_challenge, parse_www_authenticate
from ..redact import scrub
from .sse import size_text

SSE = "text/event-stream"
JSON = "application/json"
#: The largest JSON answer read; a bigger one is an InvalidMessage (a runaway server, not a tool result).
MAX_JSON_BYTES = 64 * 1024 * 1024
#: How much of an HTTP error answer is read: enough for a JSON-RPC error or a line of explanation.
MAX_ERROR_BODY_BYTES = 8 * 1024
#: How much of an answer a message quotes.
QUOTED_CHARS = 200
RECONNECT_HINT = (
    '%mcp_connect NAME --header "Authorization=Bearer ..." URL '
    '(or connect(url, headers={"Authorization": "Bearer ..."}))'
)


def content_type(response: aiohttp.ClientResponse) -> str:
    return response.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()


async def read_at_most(response: aiohttp.ClientResponse, limit: int) -> tuple[bytes, bool]:
    """Up to ``limit`` bytes of the body, and whether there was more (the rest is never read: the
    caller closes the connection, which releasing a half-read answer does too)."""
    content = response.content
    first = await content.readany()
    if not first or content.at_eof():  # the common case: one read, whole
        return (first, False) if len(first) <= limit else (first[:limit], True)
    body = bytearray(first)
    while chunk := await content.readany():
        body += chunk
        if len(body) > limit:
            return bytes(body[:limit]), True
    return bytes(body), False


def printable(text: str, limit: int = QUOTED_CHARS) -> str:
    """``text`` on one line, at most ``limit`` characters, control characters escaped."""
    text = " ".join(text.split())
    cut = len(text) > limit
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[:limit])
    return text + "…" if cut else text


def quote(data: bytes | str, more: bool = False) -> str:
    """What came, quoted and escaped for a message: ``'<html>…'``."""
    text = data.decode(errors="replace") if isinstance(data, bytes) else data
    quoted = repr(text[:QUOTED_CHARS])
    return quoted + "…" if more or len(text) > QUOTED_CHARS else quoted


def body_text(body: bytes, more: bool) -> str:
    """An error answer's body for a message: one line, escaped, cut; the user's secrets in it hidden
    (before the cut, which could split one)."""
    text = printable(scrub(body.decode(errors="replace")), 300)
    return text + "…" if more and not text.endswith("…") else text


def _invalid(message: str, method: str | None, server: str) -> InvalidMessage:
    exc = InvalidMessage(message, server=server)
    exc.method = method  # not given to the constructor, which would put it before the message again
    return exc


async def read_json(response: aiohttp.ClientResponse, method: str | None, server: str) -> list[jsonrpc.Message]:
    """The messages of a JSON answer to ``method``, read bounded; else an InvalidMessage saying what came."""
    status, ctype = response.status, content_type(response)
    answer = f"answer to {method or 'a message'}"
    location = response.headers.get("Location")
    if 300 <= status < 400 and location:  # typically a proxy sending us to its sign-in page
        raise _invalid(
            f"the {answer} is a redirect (HTTP {status}) to {printable(location, 300)!r}, which this "
            "client does not follow: connect to the URL of the MCP endpoint itself",
            method,
            server,
        )
    if ctype != JSON:
        head, more = await read_at_most(response, QUOTED_CHARS)
        came = f"it begins {quote(head, more)}" if head else "it is empty"
        raise _invalid(
            f"the {answer} (HTTP {status}) has content type {printable(ctype, 80) or 'none'!r}, "
            f"neither {JSON} nor {SSE}; {came}",
            method,
            server,
        )
    declared = response.content_length
    if declared is not None and declared > MAX_JSON_BYTES:
        raise _invalid(
            f"the {answer} (HTTP {status}) is {declared} bytes, more than the "
            f"{size_text(MAX_JSON_BYTES)} this client reads",
            method,
            server,
        )
    body, more = await read_at_most(response, MAX_JSON_BYTES)
    if more:
        raise _invalid(
            f"the {answer} (HTTP {status}) is larger than the {size_text(MAX_JSON_BYTES)} this client reads",
            method,
            server,
        )
    if not body.strip():
        raise _invalid(f"the {answer} (HTTP {status}, {JSON}) is empty", method, server)
    try:
        return jsonrpc.decode(body)
    except (jsonrpc.MessageError, RecursionError) as exc:
        why = exc if isinstance(exc, jsonrpc.MessageError) else "nested too deeply"
        raise _invalid(
            f"unreadable {answer} (HTTP {status}, {len(body)} bytes of {JSON}): {why}; it begins {quote(body)}",
            method,
            server,
        ) from None


def auth_failure(
    response: aiohttp.ClientResponse, what: str, text: str, header_names: tuple[str, ...], server: str
) -> AuthenticationFailed:
    """The AuthenticationFailed for a 401/403 answer about ``what``: what was refused, which headers
    were sent (names only) and what to do. ``text`` is the answer's body as ``body_text`` gives it."""
    status = response.status
    raw = ", ".join(response.headers.getall("WWW-Authenticate", ()))
    challenges = parse_www_authenticate(raw)
    challenge = bearer_challenge(challenges)
    if status == 401:
        refused = "the server refused the credentials" if header_names else "the server wants credentials"
    else:
        refused = (
            "the server refused access with these credentials" if header_names else "the server refused access"
        )
    error = challenge.error if challenge is not None else None
    if challenge is not None and challenge.error:
        refused += f" ({printable(challenge.error, 60)}"
        if challenge.error == "insufficient_scope" and challenge.scope:
            refused += f": it needs scope {printable(challenge.scope, 200)!r}"
        if challenge.error_description:
            refused += f": {printable(challenge.error_description)}"
        refused += ")"
    if header_names:
        plural = "s" if len(header_names) > 1 else ""
        sent = f"sent header{plural} {', '.join(printable(n, 60) for n in header_names)}"
    else:
        sent = "no credentials were sent"
    if error == "insufficient_scope":
        todo = "get a token with the scope it needs and reconnect with it"
    else:
        todo = "check or renew the token and reconnect with it" if header_names else "connect with credentials"
    todo += f", e.g. {RECONNECT_HINT}"
    if challenge is not None and challenge.resource_metadata:
        todo += (
            f"; the server signs in with OAuth (its metadata: {printable(challenge.resource_metadata, 300)}): "
            "connect with auth=mtj.OAuth() (in a notebook, %mcp_connect signs in when asked)"
        )
    head = f"HTTP {status} {printable(response.reason or '', 60)} for {what}"
    if text:
        head += f": {text}"
    return AuthenticationFailed(
        f"{head}; {refused} ({sent}); {todo}",
        server=server,
        status_code=status,
        body=text,
        www_authenticate=raw,
        challenges=challenges,
        header_names=header_names,
        dpop_nonce=response.headers.get("DPoP-Nonce"),
    )
