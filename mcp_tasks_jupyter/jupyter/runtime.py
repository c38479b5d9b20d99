"""The one long-lived owner of connections and background jobs in a kernel (or any asyncio program).

Everything runs on the event loop that is running when the runtime is first used (the kernel's own
loop in Jupyter): no threads, no nested loops. Work a cell asks for (connecting, creating a task)
runs as a job the runtime owns and the cell only awaits it through ``asyncio.shield``, so an
interrupted cell never cancels a connection, a task creation or a poller; tasks end only when the
server ends them or ``await handle.cancel()`` asks it to.

At interpreter exit (kernel shutdown or restart) an ``atexit`` hook closes every connection on the
stopped loop within :data:`EXIT_TIMEOUT_S`: pollers stop, stdio servers are shut down, HTTP sessions
are ended. Tasks stay on their servers; after a restart ``%mcp_result NAME:TASK_ID`` (or
``client.attach``) picks them up again.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import shlex
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..client import Client, connect as open_connection
from ..errors import TaskLost, TaskNotFound, UsageError
from ..index.task_index import TaskIndex, default_index
from ..oauth import OAuth
from ..oauth.sign_in import Relay
from ..protocol.task_state import question_task_id
from ..redact import register_all, safe_url, scrub, scrub_values
from ..session.background import Background
from ..tasks.control import control_of
from ..tasks.handle import TaskHandle
from .magic_args import NAME_RE
from .notebook_sign_in import notebook_hook, wants_oauth

log = logging.getLogger(__name__)

#: How long the exit hook waits for connections to close before killing what is left.
EXIT_TIMEOUT_S = 2.0

QuestionHandler = Callable[[TaskHandle | None, dict[str, Any]], Awaitable[dict[str, Any]]]


@dataclass
class Connection:
    """A named connection and what may be shown about it (never header or env values)."""

    name: str
    client: Client
    #: The URL or command as given (from mcp.json: before ``${env:...}`` expansion).
    target: str
    header_names: list[str] = field(default_factory=list)
    env_names: list[str] = field(default_factory=list)
    #: Where it came from: "code", "%mcp_connect", or the mcp.json path.
    source: str = "code"
    secrets: frozenset[str] = frozenset()


class Runtime:
    """Holds every connection (by name), every task handle started here, and every background job.

    Strong references keep jobs alive between cells; nothing a user started is dropped silently.
    The same API works in plain asyncio code (``await runtime.aclose()`` at the end there).
    """

    def __init__(self) -> None:
        #: Connected clients by name.
        self.clients: dict[str, Client] = {}
        #: The same connections with what may be shown about them.
        self.connections: dict[str, Connection] = {}
        #: Every task started or attached in this kernel, oldest first (finished ones too).
        self.handles: list[TaskHandle] = []
        #: Answers a task's questions (elicitation) when no preset answer fits: ``async def
        #: handler(handle_or_None, params) -> {"action": ..., "content": ...}``. Set by the UI layer;
        #: without it, questions without preset answers are declined.
        self.question_handler: QuestionHandler | None = None
        #: The runtime's own jobs (the magics' work, widgets' requests); each connection owns its own.
        self._jobs = Background("runtime")
        self._loop: asyncio.AbstractEventLoop | None = None
        #: Where every connection records its tasks (``index/task_index.py``); the default one on first use
        #: (``$MTJ_INDEX``, or the user's data directory; ``MTJ_INDEX=off``: none).
        self.index: TaskIndex | None = None
        self._index_chosen = False
        #: Called with every handle the runtime starts tracking (the extension's channel listens).
        self.on_track: list[Callable[[TaskHandle], None]] = []

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The event loop this runtime's connections and tasks live on (None before its first use)."""
        return self._loop

    # -- connections ---------------------------------------------------------------------------

    async def connect(
        self,
        name: str,
        target: str | Sequence[str],
        *,
        headers: dict[str, str] | None = None,
        env: dict[str, str] | None = None,
        dialect: str = "auto",
        timeout: float = 30.0,
        display_target: str | None = None,
        source: str = "code",
        secrets: frozenset[str] | set[str] = frozenset(),
        oauth: OAuth | bool | None = None,
        **options: Any,
    ) -> Client:
        """Connect to ``target`` (URL, command string or argv) under ``name``; return the Client.

        An existing connection of that name is closed once the new one is up (its unfinished
        handles end with TaskLost; the tasks stay on the server). ``options`` go to
        :func:`mcp_tasks_jupyter.connect` (e.g. ``elicitation_handler``); by default the runtime
        answers questions itself (preset ``answers`` of ``start_task``, then ``question_handler``).
        An HTTP server without an ``Authorization`` header of the user's is signed in to with OAuth
        when it asks (a "Sign in" link in the cell); ``oauth``: settings for that (``mtj.OAuth``),
        or False never to sign in.
        """
        self._bind_loop()
        if not NAME_RE.match(name):
            raise UsageError(f"{name!r} is not a usable connection name (letters, digits, _ . -; no ':')")
        register_all(secrets)  # expanded ${env:...} values (headers and env are registered by the transports)
        if "auth" not in options and oauth is not False and wants_oauth(target, headers):
            settings = oauth if isinstance(oauth, OAuth) else None
            options["auth"] = notebook_hook(name, str(target), settings, relay=self._sign_in_relay)
        shown = (
            display_target
            if display_target is not None
            else (target if isinstance(target, str) else shlex.join(str(a) for a in target))
        )
        shown = safe_url(shown)  # no URL userinfo in what is shown or in the task index
        values = (*(headers or {}).values(), *(env or {}).values())
        about = dict(
            target=shown,
            header_names=sorted(headers or {}),
            env_names=sorted(env or {}),
            source=source,
            secrets=frozenset(secrets) | frozenset(v for v in values if len(v) >= 3),
        )
        job = self.spawn(
            self._connect(
                name, target, about, headers=headers, env=env, dialect=dialect, timeout=timeout, **options
            ),
            name=f"mcp-connect {name}",
            awaited=True,
        )
        return await asyncio.shield(job)

    async def _connect(
        self,
        name: str,
        target: str | Sequence[str],
        about: dict[str, Any],
        *,
        headers: dict[str, str] | None,
        env: dict[str, str] | None,
        dialect: str,
        timeout: float,
        **options: Any,
    ) -> Client:
        client = await open_connection(
            target, headers=headers, env=env, dialect=dialect, name=name, timeout=timeout, **options
        )
        client.ask_user = self._ask_person
        client.target = about["target"]
        if client.index is None:
            client.index = self.task_index()
        old = self.connections.get(name)
        self.connections[name] = Connection(name, client, **about)
        self.clients[name] = client
        if old is not None:
            await self._retire(old, f"the connection {name!r} was replaced")
        return client

    async def disconnect(self, name: str) -> None:
        """Close the connection ``name``; its unfinished handles end with TaskLost (tasks stay on the server)."""
        connection = self.connections.pop(name, None)
        self.clients.pop(name, None)
        if connection is None:
            raise UsageError(f"no server named {name!r} is connected{self.connected_summary()}")
        await self._retire(connection, f"the connection {name!r} was closed")

    async def _retire(self, connection: Connection, why: str) -> None:
        try:
            await connection.client.aclose()
        except Exception as exc:  # closing must not fail the caller
            log.debug("closing %s failed: %s", connection.name, exc)
        lifecycle = connection.client.lifecycle
        for handle in lifecycle.live():
            resume = f"; resume with %mcp_result {connection.name}:{handle.task_id}" if handle.task_id else ""
            lifecycle.end_here(handle, why, resume)

    def task_index(self) -> TaskIndex | None:
        """The task index of this runtime (the default one unless ``index`` was set)."""
        if self.index is None and not self._index_chosen:
            self.index = default_index()
        self._index_chosen = True
        return self.index

    def client(self, name: str | None = None) -> Client:
        """The client called ``name``; without a name, the only one connected (else a clear UsageError)."""
        if name is None:
            if len(self.clients) == 1:
                return next(iter(self.clients.values()))
            if not self.clients:
                raise UsageError("no MCP server is connected: run %mcp_connect NAME URL_OR_COMMAND first")
            raise UsageError(
                f"several servers are connected ({', '.join(self.clients)}): say which, e.g. NAME:TOOL"
            )
        client = self.clients.get(name)
        if client is None:
            raise UsageError(f"no server named {name!r} is connected{self.connected_summary()}")
        return client

    async def _sign_in_relay(self) -> Relay | None:
        """Where a sign-in's answer comes back: the Jupyter server's route when the JupyterLab
        extension said there is one (``sign_in_route.py``), else None (the loopback listener)."""
        from .comm import served  # the channel imports the widgets, which import this module

        channel = served(self)
        return await channel.relay() if channel is not None else None

    def connected_summary(self) -> str:
        """`` (connected: a, b)`` or `` (none is connected)``, for messages."""
        return f" (connected: {', '.join(self.clients)})" if self.clients else " (none is connected)"

    def redact(self, text: str) -> str:
        """``text`` without any header value, env value or expanded ``${env:...}`` of any connection."""
        secrets: set[str] = set()
        for connection in self.connections.values():
            secrets |= connection.secrets
        return scrub(scrub_values(text, secrets))

    # -- tasks ---------------------------------------------------------------------------------

    async def start_task(
        self,
        server: str | None,
        tool: str,
        arguments: dict[str, Any] | None = None,
        *,
        ttl: int | None = None,
        answers: dict[str, Any] | None = None,
        cache: bool = False,
        out: str | None = None,
    ) -> TaskHandle:
        """Start ``tool`` on ``server`` (None: the only one) and return its tracked handle.

        ``cache`` returns the stored result of an identical earlier completed call (see
        ``Client.start_task``); ``out`` is the variable that gets the result, kept in the task index.

        ``answers`` is accepted as the content of the task's questions (elicitation), if it asks.
        The creation runs as a runtime job: cancelling the caller does not cancel it.
        """
        self._bind_loop()
        client = self.client(server)
        job = self.spawn(
            self._start(client, tool, arguments, ttl, answers, cache, out),
            name=f"mcp-start {client.name}:{tool}",
            awaited=True,
        )
        return await asyncio.shield(job)

    async def _start(
        self,
        client: Client,
        tool: str,
        arguments: dict[str, Any] | None,
        ttl: int | None,
        answers: dict[str, Any] | None,
        cache: bool = False,
        out: str | None = None,
    ) -> TaskHandle:
        handle = await client.start_task(tool, arguments, ttl=ttl, answers=answers, cache=cache)
        if out is not None:
            control_of(handle).output_to(out)  # the task's index record hears it as a change
        return self.track(handle)

    def resume(self, server: str | None = None) -> list[TaskHandle]:
        """Attach again to this notebook's unfinished tasks on ``server`` (None: every connection)
        from the task index; the resumed handles, tracked (``Client.resume``)."""
        self._bind_loop()
        names = [server] if server is not None else list(self.clients)
        resumed: list[TaskHandle] = []
        for name in names:
            client = self.client(name)
            if client.index is not None:
                resumed.extend(self.track(h) for h in client.resume())
        return resumed

    def clear(self, server: str | None = None) -> int:
        """Remove the finished records of ``server`` (None: every connection) from the task index;
        how many went. On servers that can (SEP-1686) a background job also deletes those tasks there."""
        self._bind_loop()
        names = [server] if server is not None else list(self.clients)
        removed = 0
        for name in names:
            client = self.client(name)
            if client.index is None:
                continue
            gone = client.index.clear(client.target)
            removed += len(gone)
            ids = [record.task_id for record in gone if record.task_id is not None]
            if ids and client.dialect.supports_delete:
                self.spawn(_delete_tasks(client, ids), name=f"mcp-clear {name}")
        return removed

    def attach(self, task_id: str, server: str | None = None, *, tool: str | None = None) -> TaskHandle:
        """The tracked handle of a task the server has (the runtime's own one if it is known here)."""
        self._bind_loop()
        known = self.find(task_id, server=server)
        if known is not None and not self.needs_reattach(known):
            return known
        client = self.client(server if server is not None or known is None else known.server)
        return self.track(client.attach(task_id, tool=tool if tool or known is None else known.tool))

    async def attach_known(self, task_id: str, server: str | None = None) -> TaskHandle:
        """:meth:`attach`, once the server has said it has ``task_id`` (one ``tasks/get``); a task
        nobody knows raises TaskNotFound and leaves nothing behind (no handle, no index row)."""
        self._bind_loop()
        known = self.find(task_id, server=server)
        if known is not None and not self.needs_reattach(known):
            return known
        client = self.client(server if server is not None or known is None else known.server)
        try:
            await client.dialect.get(task_id)
        except TaskNotFound as exc:
            raise TaskNotFound(
                f"no task {task_id!r} on {client.name}: neither this kernel nor the server knows it "
                f"(the server said: {exc.detail}); %mcp_tasks lists the tasks known here",
                server=client.name,
            ) from None
        return self.attach(task_id, client.name)

    def needs_reattach(self, handle: TaskHandle) -> bool:
        """Whether ``handle`` ended only because its connection was closed or replaced here, so
        attaching again (``attach``) resumes its task."""
        current = self.clients.get(handle.server)
        return (
            handle.done()
            and isinstance(handle.exception(), TaskLost)
            and (current is None or not current.lifecycle.owns(handle))
        )

    def find(self, task: str | TaskHandle, *, server: str | None = None) -> TaskHandle | None:
        """The handle for a task id (newest first) or the handle itself, tracked; None if unknown here."""
        if isinstance(task, TaskHandle):
            return self.track(task)
        for handle in reversed(self.handles):
            if handle.task_id == task and (server is None or handle.server == server):
                return handle
        for name, client in self.clients.items():
            if server is None or name == server:
                live = client.handle_of(task)
                if live is not None:
                    return self.track(live)
        return None

    def track(self, handle: TaskHandle) -> TaskHandle:
        """Remember ``handle`` (for ``%mcp_tasks`` and ``find``); returns it."""
        if handle not in self.handles:
            self.handles.append(handle)
            for listener in self.on_track:
                listener(handle)
        return handle

    # -- questions from tasks --------------------------------------------------------------------

    async def _ask_person(self, params: dict[str, Any]) -> dict[str, Any]:
        """A question neither a connect() handler nor the task's preset answers settled: show it
        to a person through ``question_handler`` (the widget form), else decline."""
        # The connection found the task before asking (waiting for its creation if need be).
        task_id = question_task_id(params)
        handle = self.find(task_id) if task_id else None
        if self.question_handler is not None:
            return await self.question_handler(handle, params)
        return {"action": "decline"}

    # -- background jobs -------------------------------------------------------------------------

    def spawn(
        self, coro: Coroutine[Any, Any, Any], *, name: str | None = None, awaited: bool = False
    ) -> asyncio.Task[Any]:
        """Run ``coro`` in the background on the running loop, owned by the runtime.

        A failure is logged unless ``awaited`` says that a caller receives it.
        """
        self._bind_loop()
        if awaited:
            job = self._jobs.future(coro, name=name)
            job.add_done_callback(_retrieved)
            return job
        return self._jobs.spawn(coro, name=name)

    def _bind_loop(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is loop:
            return
        if self._loop is not None and not self._loop.is_closed() and self.connections:
            raise UsageError("this runtime's connections belong to another event loop that is still open")
        # A fresh loop (first use, or a new asyncio.run in plain code): start over.
        self.clients.clear()
        self.connections.clear()
        self.handles.clear()
        self._jobs = Background("runtime")
        self._loop = loop
        _install_exit_hook()

    # -- closing -------------------------------------------------------------------------------

    async def aclose(self, *, finish_handles: bool = True) -> None:
        """Stop every job and close every connection (tasks stay on their servers).

        With ``finish_handles`` unfinished handles end with TaskLost, so nobody awaits them forever.
        """
        connections = list(self.connections.values())
        self.connections.clear()
        self.clients.clear()
        await asyncio.gather(
            self._jobs.aclose(), *(c.client.aclose() for c in connections), return_exceptions=True
        )
        if finish_handles:
            for connection in connections:
                await self._retire(connection, "the runtime was closed")

    def close_at_exit(self) -> None:
        """At interpreter exit, on a loop no longer running: close the connections (bounded wait)
        and kill any stdio server still alive."""
        loop = self._loop
        if loop is None or loop.is_closed() or loop.is_running():
            return
        if not self.connections and not self._jobs:
            return
        processes = [_process_of(c.client) for c in self.connections.values()]
        try:
            loop.run_until_complete(asyncio.wait_for(self.aclose(finish_handles=False), EXIT_TIMEOUT_S))
        except Exception as exc:  # never fail interpreter exit
            log.debug("closing MCP connections at exit failed: %s", exc)
        for process in processes:
            if process is not None and process.returncode is None:
                try:
                    process.kill()
                except ProcessLookupError:
                    pass


async def _delete_tasks(client: Client, task_ids: list[str]) -> None:
    for task_id in task_ids:
        try:
            await client.delete_task(task_id)
        except Exception as exc:  # the server may have forgotten it already
            log.debug("deleting task %s on %s failed: %s", task_id, client.name, exc)


def _process_of(client: Client) -> Any:
    """The asyncio subprocess of a stdio connection (None for HTTP)."""
    return getattr(client.transport, "process", None)


_runtime: Runtime | None = None
_exit_hook_installed = False


def get_runtime() -> Runtime:
    """The process-wide runtime (created on first use). ``%load_ext mcp_tasks_jupyter`` also serves the
    JupyterLab extension's tasks channel for it (``extension.py``, ``comm.py``)."""
    global _runtime
    if _runtime is None:
        _runtime = Runtime()
    return _runtime


def _install_exit_hook() -> None:
    global _exit_hook_installed
    if not _exit_hook_installed:
        _exit_hook_installed = True
        atexit.register(_close_runtime_at_exit)


def _close_runtime_at_exit() -> None:
    if _runtime is not None:
        _runtime.close_at_exit()


def _retrieved(job: asyncio.Task[Any]) -> None:
    if not job.cancelled():
        job.exception()  # the caller got it; mark it retrieved


__all__ = ["EXIT_TIMEOUT_S", "Connection", "Runtime", "get_runtime"]
