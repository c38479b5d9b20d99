"""The one tree of errors this library raises.

    MCPError                      root: catch this to catch everything
    ├── ConnectionFailed          the server cannot be reached or the link broke
    │   ├── ServerExited          a stdio server process ended (exit code and stderr tail)
    │   ├── ServerUnreachable     an HTTP server cannot be reached now (refused, reset): reconnected
    │   ├── HTTPStatusError       an HTTP answer with a 4xx/5xx status
    │   │   └── AuthenticationFailed  401/403: credentials refused (never retried; challenge kept)
    │   ├── SignInFailed          OAuth sign-in could not be done (metadata, registration, refused, timed out)
    │   └── SessionExpired        the server no longer knows our HTTP session
    ├── ProtocolError             a JSON-RPC error answer (code, message, data)
    │   └── InvalidMessage        the server sent something that is not valid JSON-RPC / MCP (or too much)
    ├── RequestTimeout            no answer within the request's timeout
    ├── UsageError                the caller asked for something impossible (unknown tool, bad arguments)
    │   └── ToolNotFound
    └── TaskError                 about one task
        ├── TaskFailed            failed without a result (status message and JSON-RPC error kept)
        ├── TaskCancelled
        ├── TaskNotFound          the server does not know the task id
        │   └── TaskExpired       ... because its ttl ran out
        └── TaskLost              the connection to the task's server was lost

Every error names the server it came from (``server``) in its message. No error shows a secret the
user gave (header and env values, URL passwords; see ``redact.py``): the message and the server's
words each error keeps (HTTP body, stderr, JSON-RPC error, status message) are scrubbed when it is made.
"""

from __future__ import annotations

from typing import Any

from .protocol.www_authenticate import Challenge, bearer_challenge
from .redact import scrub, scrub_data, scrub_optional


class MCPError(Exception):
    """Root of every error raised by mcp_tasks_jupyter."""

    def __init__(self, message: str, *, server: str | None = None) -> None:
        message, server = scrub(message), scrub_optional(server)
        self.server = server
        self.detail = message
        super().__init__(f"[{server}] {message}" if server else message)


class ConnectionFailed(MCPError):
    """The server could not be reached, or the connection to it broke."""


class ServerExited(ConnectionFailed):
    """A stdio server process ended; ``returncode`` and ``stderr`` (its last lines) are kept."""

    def __init__(
        self, message: str, *, server: str | None = None, returncode: int | None = None, stderr: str = ""
    ) -> None:
        self.returncode = returncode
        self.stderr = stderr = scrub(stderr)
        if stderr:
            message = f"{message}\n--- server stderr (last lines) ---\n{stderr}"
        super().__init__(message, server=server)


class ServerUnreachable(ConnectionFailed):
    """The HTTP server cannot be reached right now (connection refused or reset): the client
    reconnects with backoff for a bounded time (``connect(..., reconnect_for=...)``)."""


class HTTPStatusError(ConnectionFailed):
    """The server answered an HTTP request with an error status."""

    def __init__(self, message: str, *, server: str | None = None, status_code: int = 0, body: str = "") -> None:
        self.status_code = status_code
        self.body = scrub(body)
        super().__init__(message, server=server)


class AuthenticationFailed(HTTPStatusError):
    """The server refused the credentials (HTTP 401) or refused access with them (HTTP 403).

    Not transient: the same request with the same headers will be refused again, so nothing retries
    it. ``header_names`` are the names of the headers the connection sends (never their values);
    ``www_authenticate`` is the raw ``WWW-Authenticate`` header ("" without one), ``challenges`` its
    parsed challenges and ``challenge`` the Bearer one (else the first; None without any), with its
    ``realm``, ``scope``, ``error`` and ``resource_metadata`` (where OAuth metadata lives);
    ``dpop_nonce`` the answer's ``DPoP-Nonce`` header (RFC 9449 section 9), if any.
    """

    def __init__(
        self,
        message: str,
        *,
        server: str | None = None,
        status_code: int = 401,
        body: str = "",
        www_authenticate: str = "",
        challenges: list[Challenge] | None = None,
        header_names: tuple[str, ...] = (),
        dpop_nonce: str | None = None,
    ) -> None:
        self.www_authenticate = www_authenticate
        self.dpop_nonce = dpop_nonce
        self.challenges = list(challenges or [])
        self.challenge = bearer_challenge(self.challenges)
        self.header_names = tuple(header_names)
        super().__init__(message, server=server, status_code=status_code, body=body)


class SignInFailed(ConnectionFailed):
    """Signing in to a server with OAuth failed: its metadata is wrong or insecure (a resource or
    issuer that does not match), registration or the token request was refused, the person declined,
    or nobody signed in in time. Not transient: the message says what went wrong and what to do."""


class SessionExpired(ConnectionFailed):
    """The server answered 404 for our ``Mcp-Session-Id``: it forgot the session."""


class ProtocolError(MCPError):
    """The server answered with a JSON-RPC error."""

    def __init__(
        self,
        message: str,
        *,
        server: str | None = None,
        code: int = -32603,
        data: Any = None,
        method: str | None = None,
    ) -> None:
        self.code = code
        self.message = message = scrub(message)
        self.data = scrub_data(data)
        self.method = method
        where = f"{method}: " if method else ""
        super().__init__(f"{where}{message} (JSON-RPC error {code})", server=server)

    @property
    def error(self) -> dict[str, Any]:
        """The JSON-RPC error object as the server sent it."""
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err


class InvalidMessage(ProtocolError):
    """The server sent something that is not valid JSON-RPC or not a valid MCP message."""

    def __init__(
        self, message: str, *, server: str | None = None, method: str | None = None, data: Any = None
    ) -> None:
        self.code = -32700 if data is None else -32600
        self.message = message = scrub(message)
        self.data = scrub_data(data)
        self.method = method
        where = f"{method}: " if method and not message.startswith(method) else ""
        MCPError.__init__(self, f"{where}{message}", server=server)


class RequestTimeout(MCPError):
    """A request got no answer in time (the request was cancelled on the server)."""


class UsageError(MCPError):
    """The caller asked for something that cannot work (checked before anything is sent)."""


class ToolNotFound(UsageError):
    """The server does not offer a tool of that name."""


class TaskError(MCPError):
    """An error about one task; ``task_id`` and ``tool`` say which."""

    def __init__(
        self, message: str, *, server: str | None = None, task_id: str | None = None, tool: str | None = None
    ) -> None:
        self.task_id = task_id
        self.tool = tool
        #: What happened, without the task's label (scrubbed like the message).
        self.reason = scrub(message)
        label = f"task {task_id}" if task_id else "task"
        if tool:
            label = f"{tool} {label}"
        super().__init__(f"{label}: {message}", server=server)


class TaskFailed(TaskError):
    """The task failed without a tool result.

    ``status_message`` is the server's own words; ``error`` the JSON-RPC error object, when one was sent.
    """

    def __init__(
        self,
        message: str,
        *,
        server: str | None = None,
        task_id: str | None = None,
        tool: str | None = None,
        status_message: str | None = None,
        error: dict[str, Any] | None = None,
    ) -> None:
        self.status_message = scrub_optional(status_message)
        self.error = scrub_data(error)
        super().__init__(message, server=server, task_id=task_id, tool=tool)


class TaskCancelled(TaskError):
    """The task was cancelled (by us, or by the server)."""


class TaskNotFound(TaskError):
    """The server does not know this task id (never had it, or purged it)."""


class TaskExpired(TaskNotFound):
    """The server dropped the task because its ttl ran out."""


class TaskLost(TaskError):
    """The connection to the task's server broke; the task may still run there."""
