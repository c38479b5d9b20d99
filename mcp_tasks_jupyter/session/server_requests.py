"""What the server sends on its own: its requests (a question, a sampling request, a ping), its
notifications, and progress for a request of ours.

Who handles what is registered here (``on_request``, ``on_notification``, ``add_progress_listener``)
by the dialect and the lifecycle; nobody writes these tables directly. A request is served once per id
(a repeated id is logged and dropped), in the connection's background group, and answered through
``_send_answer``: an answer lost on the way is sent again while the session that asked stands, and the
answers given are kept by question, so a server that asks the same again through a new session gets
the same answer and nobody is asked twice.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..errors import (
    AuthenticationFailed,
    ConnectionFailed,
    HTTPStatusError,
    InvalidMessage,
    MCPError,
    RequestTimeout,
    ServerExited,
    ServerUnreachable,
    SessionExpired,
)
from ..protocol import jsonrpc
from ..protocol.jsonrpc import Notification, Request, RequestId

if TYPE_CHECKING:
    from .session import Session

log = logging.getLogger(__name__)

#: Server request ids remembered as answered, so that a repeated id is answered only once.
ANSWERED_IDS_KEPT = 1024
#: How often the answer to a server request is sent when it is lost on the way (a cut connection, a
#: 5xx, a timeout), with backoff from ANSWER_FIRST_DELAY_S doubling up to ANSWER_MAX_DELAY_S (about
#: a minute in all, and across a reconnection): while the session that asked stands and the server has
#: not withdrawn the request.
ANSWER_SENDS = 8
ANSWER_FIRST_DELAY_S = 0.25
ANSWER_MAX_DELAY_S = 15.0
#: Answers kept for a question asked again through a new session (the oldest are dropped).
ANSWERS_KEPT = 256

RequestHandler = Callable[[dict[str, Any], Request], Awaitable[dict[str, Any]]]
NotificationHandler = Callable[[dict[str, Any]], None]


class HandlerError(Exception):
    """Raised by a request handler to answer the server with a specific JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


class ServerRequests:
    """The server's requests and notifications on one connection (``Session.server_requests``)."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._request_handlers: dict[str, RequestHandler] = {}
        self._notification_handlers: dict[str, NotificationHandler] = {}
        self._progress: dict[str | int, Callable[[dict[str, Any]], None]] = {}
        self._serving: dict[RequestId, asyncio.Task[None]] = {}
        #: Server requests to answer with an error instead of their handler's answer (request id → why).
        self._refusing: dict[RequestId, str] = {}
        self._answered: collections.OrderedDict[RequestId, None] = collections.OrderedDict()
        #: The answers given, by (method, params), with the session generation they were given in.
        self._given: collections.OrderedDict[tuple[str, str], tuple[int, dict[str, Any]]] = (
            collections.OrderedDict()
        )

    # -- registration ------------------------------------------------------------------------------

    def on_request(self, method: str, handler: RequestHandler) -> None:
        """Serve the server's ``method`` requests with ``handler`` (its result is the answer; a
        ``HandlerError`` answers with that error)."""
        self._request_handlers[method] = handler

    def on_notification(self, method: str, handler: NotificationHandler) -> None:
        """Give the server's ``method`` notifications to ``handler`` (its failure is logged)."""
        self._notification_handlers[method] = handler

    def add_progress_listener(self, token: str | int, listener: Callable[[dict[str, Any]], None]) -> None:
        self._progress[token] = listener

    def remove_progress_listener(self, token: str | int) -> None:
        self._progress.pop(token, None)

    # -- serving -------------------------------------------------------------------------------------

    def received(self, request: Request) -> None:
        """A request from the server: served in the background, once per id."""
        if request.id in self._serving or request.id in self._answered:
            log.warning(
                "%s: the server sent request id %r again (%s); it is answered once",
                self._session.name,
                request.id,
                request.method,
            )
            return
        task = self._session.background.spawn(self._serve(request), name=f"mcp-serve {request.method}")
        self._serving[request.id] = task
        request_id = request.id
        task.add_done_callback(lambda _task: self._served(request_id))

    def withdraw(self, request_id: RequestId) -> None:
        """Stop serving a server request (the server withdrew it): no reply is sent."""
        task = self._serving.get(request_id)
        if task is not None:
            task.cancel()

    def refuse(self, request_id: RequestId, reason: str) -> None:
        """Stop serving a server request whose answer would be stale (its task ended): the server
        gets an error saying ``reason`` instead of an answer."""
        task = self._serving.get(request_id)
        if task is not None and not task.done():
            self._refusing[request_id] = reason
            task.cancel()

    def new_session(self) -> None:
        """A new session started: request ids start afresh there."""
        self._answered.clear()

    def close(self) -> None:
        for task in list(self._serving.values()):
            task.cancel()

    def _served(self, request_id: RequestId) -> None:
        self._serving.pop(request_id, None)
        self._refusing.pop(request_id, None)
        self._answered[request_id] = None
        if len(self._answered) > ANSWERED_IDS_KEPT:
            self._answered.popitem(last=False)

    def notified(self, note: Notification) -> None:
        """A notification from the server: progress to its token's listener, a withdrawn request
        stops being served, anything else to its registered handler."""
        method = note.method
        if method == "notifications/progress":
            token = note.params.get("progressToken")
            listener = self._progress.get(token) if isinstance(token, (str, int)) else None
            if listener is not None:
                try:
                    listener(note.params)
                except Exception:  # a listener's bug (or a value it cannot take) must not stop the reader
                    log.exception("%s: progress listener failed", self._session.name)
            return
        if method == "notifications/cancelled":
            request_id = note.params.get("requestId")
            if isinstance(request_id, (str, int)):
                self.withdraw(request_id)
            return
        handler = self._notification_handlers.get(method)
        if handler is not None:
            try:
                handler(note.params)
            except Exception:
                log.exception("handler for %s failed", method)

    async def _serve(self, request: Request) -> None:
        session = self._session
        generation = session.generation
        handler = self._request_handlers.get(request.method)
        asked = (request.method, json.dumps(request.params, sort_keys=True, default=str))
        try:
            if request.method == "ping":
                reply = jsonrpc.result_response(request.id, {})
            elif asked in self._given and self._given[asked][0] != generation:
                log.info(
                    "%s: %s asked again through a new session: the earlier answer is sent",
                    session.name,
                    request.method,
                )
                reply = jsonrpc.result_response(request.id, self._given[asked][1])
            elif handler is None:
                reply = jsonrpc.error_response(
                    request.id, jsonrpc.METHOD_NOT_FOUND, f"this client does not handle {request.method}"
                )
            else:
                result = await handler(request.params, request)
                reply = jsonrpc.result_response(request.id, result)
        except asyncio.CancelledError:
            reason = self._refusing.pop(request.id, None)
            if reason is None or session.closed_error is not None:
                return  # the server withdrew the request (or we are closing): send nothing
            reply = jsonrpc.error_response(request.id, jsonrpc.INVALID_PARAMS, reason)
        except HandlerError as exc:
            reply = jsonrpc.error_response(request.id, exc.code, exc.message, exc.data)
        except InvalidMessage as exc:  # the server's request itself was malformed
            reply = jsonrpc.error_response(request.id, jsonrpc.INVALID_PARAMS, exc.message)
        except Exception as exc:
            log.exception("handler for %s failed", request.method)
            reply = jsonrpc.error_response(
                request.id, jsonrpc.INTERNAL_ERROR, f"the client's {request.method} handler failed: {exc}"
            )
        if "result" in reply and request.method != "ping":
            self._given[asked] = (generation, reply["result"])
            if len(self._given) > ANSWERS_KEPT:
                self._given.popitem(last=False)
        await self._send_answer(request, reply, generation)

    async def _send_answer(self, request: Request, reply: dict[str, Any], generation: int) -> bool:
        """Send the answer to a server request. One lost on the way is sent again with backoff (a
        repeated answer is harmless: the server takes the first) while the session that asked stands;
        never to a new session (it did not ask), never after a refusal (401/403, a stdio server gone).
        A server that cannot be reached is reconnected, as for a request, and the next send waits until
        it answers again (within ``reconnect_for``). A 404 for the session ends it, as it does for a
        request: a new one is started, through which the server asks its open question again (a task's
        question comes through the session that waits for the task) and gets the answer kept for it
        (``_given``). The server withdrawing the request, or the task ending, cancels this
        (``withdraw``, ``refuse``). Whether the answer went out."""
        session = self._session
        name = session.name
        delay = ANSWER_FIRST_DELAY_S
        for attempt in range(1, ANSWER_SENDS + 1):
            try:
                await session.transport.send(reply)
                return True
            except SessionExpired as exc:
                log.warning("%s: could not answer %s: %s", name, request.method, exc)
                if not session.modern and session.closed_error is None:
                    try:
                        await session.renew(generation, exc)
                    except ConnectionFailed as failure:  # the requests that follow meet it too
                        log.warning("%s: %s", name, failure)
                return False
            except (ConnectionFailed, RequestTimeout) as exc:
                lasting = isinstance(exc, (AuthenticationFailed, ServerExited)) or (
                    isinstance(exc, HTTPStatusError) and exc.status_code < 500
                )
                if lasting or attempt == ANSWER_SENDS or session.closed_error is not None:
                    log.warning("%s: could not answer %s: %s", name, request.method, exc)
                    return False
                log.info("%s: the answer to %s was lost (%s); sending it again", name, request.method, exc)
                if isinstance(exc, ServerUnreachable):
                    session.reconnection.unreachable()  # as a request would: send again once it answers
            except MCPError as exc:
                log.warning("%s: could not answer %s: %s", name, request.method, exc)
                return False
            if session.reconnecting:
                await session.wait_reachable()
            else:
                await asyncio.sleep(delay)
                delay = min(ANSWER_MAX_DELAY_S, delay * 2)
            if session.generation != generation or session.closed_error is not None:
                log.warning(
                    "%s: the session that asked %s has ended; its answer is kept in case it asks again",
                    name,
                    request.method,
                )
                return False
        return False
