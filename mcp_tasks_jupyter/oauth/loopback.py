"""The loopback redirect listener (RFC 8252): ``http://127.0.0.1:PORT/callback`` receives the
authorization server's answer through the person's browser.

It reads one bounded request head per connection (the request line is all it needs), answers a
short static page and offers the query parameters to the sign-in that waits
(:meth:`~.answers.AwaitedAnswer.offer`, which checks ``state``, as for an answer pasted by hand).
Anything else (another path, another state, a slow or oversized request) is answered and dropped. It
listens only while a sign-in waits.
"""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import parse_qsl, urlsplit

from ..errors import SignInFailed
from .answers import AwaitedAnswer

HOST = "127.0.0.1"
PATH = "/callback"
MAX_HEAD_BYTES = 16 * 1024
READ_TIMEOUT_S = 10.0

_DONE_PAGE = (
    "<!doctype html><meta charset=utf-8><title>Signed in</title>"
    "<body style='font-family:sans-serif;margin:3em'><h2>Signed in.</h2>"
    "<p>You can close this tab and go back to your notebook.</p></body>"
)
_FAILED_PAGE = (
    "<!doctype html><meta charset=utf-8><title>Not signed in</title>"
    "<body style='font-family:sans-serif;margin:3em'><h2>Sign-in was not completed.</h2>"
    "<p>Go back to your notebook: it says what happened.</p></body>"
)


class RedirectListener:
    """Listens on 127.0.0.1 (``port`` 0: any free port) for one sign-in's answer."""

    def __init__(self, port: int = 0) -> None:
        self.port = port
        self._server: asyncio.Server | None = None
        self._awaited: AwaitedAnswer | None = None

    @property
    def redirect_uri(self) -> str:
        return f"http://{HOST}:{self.port}{PATH}"

    async def start(self) -> None:
        """Bind the port (OSError when it is taken)."""
        self._server = await asyncio.start_server(self._serve, HOST, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    def expect(self, awaited: AwaitedAnswer) -> None:
        """Hand answers to ``awaited`` (before that, every request is refused)."""
        self._awaited = awaited

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_TIMEOUT_S)
            if len(head) > MAX_HEAD_BYTES:
                raise ValueError("oversized")
            status, page = self._handle(head.split(b"\r\n", 1)[0].decode("latin-1"))
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ValueError, OSError):
            status, page = "400 Bad Request", _FAILED_PAGE
        body = page.encode()
        with contextlib.suppress(OSError):
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
                f"Content-Length: {len(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        writer.close()

    def _handle(self, request_line: str) -> tuple[str, str]:
        parts = request_line.split(" ")
        if len(parts) != 3 or parts[0] != "GET":
            return "405 Method Not Allowed", _FAILED_PAGE
        target = urlsplit(parts[1])
        if target.path != PATH:
            return "404 Not Found", _FAILED_PAGE
        params = dict(parse_qsl(target.query, keep_blank_values=True))
        if self._awaited is None:
            return "400 Bad Request", _FAILED_PAGE
        try:
            self._awaited.offer(params)
        except SignInFailed:
            return "400 Bad Request", _FAILED_PAGE  # not the sign-in that is waiting
        return ("200 OK", _DONE_PAGE) if "code" in params else ("200 OK", _FAILED_PAGE)
