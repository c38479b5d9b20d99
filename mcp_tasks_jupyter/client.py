"""Client: one connected MCP server, its tools, and the tasks started on it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import warnings
from collections.abc import Awaitable, Callable, Generator, Iterable, Iterator, Mapping, Sequence
from typing import Any

from .dialects import STATEFUL, STATELESS, check_dialect, select_dialect
from .dialects.dialect import TaskDialect
from .errors import ConnectionFailed, ToolNotFound, UsageError
from .index.task_index import ServerIdentity, TaskIndex, notebook_path
from .oauth import OAuth, OAuthSignIn
from .protocol import apps as wire_apps, headers as wire_headers
from .protocol.bounds import MAX_LIST_PAGES
from .protocol.task_state import TaskState
from .protocol.types import Implementation, ListToolsResult, Tool
from .redact import safe_url, scrub, scrub_data
from .running.answering import Answerer
from .running.app_resources import AppResources
from .running.batch import DEFAULT_LIMIT, Batch
from .running.lifecycle import TaskLifecycle
from .session.handshake import PROBE_TIMEOUT_S, check_version, handshake
from .session.reconnection import RECONNECT_FOR_S
from .session.session import Session
from .tasks.handle import TaskHandle
from .tasks.results import ToolResult
from .tasks.tool_arguments import takes_other_names, unknown_names, unknown_names_text
from .transport import StdioTransport, StreamableHTTPTransport, Transport
from .transport.auth import AuthHook
from .views.install import install_renderers

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]

DEFAULT_CALL_TIMEOUT_S = 600.0
#: How much of the server's reported name and version the task index keeps.
MAX_SOFTWARE_CHARS = 200
#: Items of a ``map`` whose arguments are checked between two turns of the loop.
MAP_CHECKS_PER_TURN = 500


class Client:
    """A connection to one MCP server. Make one with ``await mtj.connect(...)``."""

    def __init__(
        self,
        session: Session,
        dialect: TaskDialect,
        *,
        elicitation_handler: Handler | None,
        sampling_handler: Handler | None,
    ) -> None:
        self.session = session
        self.dialect = dialect
        self.server_info = session.server_info or Implementation(name=session.name)
        self.protocol_version = session.protocol_version
        self.capabilities = session.server_capabilities
        self.instructions = session.instructions
        self._tools: dict[str, Tool] | None = None
        self._closed = False
        #: The batches of ``map`` with tasks still to end (strong references: queued tasks are owned).
        self._batches: set[Batch] = set()
        #: The URL or command as shown (never header or env values): the server's identity in the index.
        self.target: str = session.transport.label
        #: Who answers the server's questions; what happens to each task.
        self.answerer = Answerer(
            session, elicitation_handler=elicitation_handler, sampling_handler=sampling_handler
        )
        self.lifecycle = TaskLifecycle(session, dialect, identity=lambda: self.identity)
        #: MCP Apps: whether this connection declared the extension (``connect(..., apps=False)``: no), and
        #: its app tools' views, read once (``running/app_resources.py``).
        self.apps_enabled = wire_apps.EXTENSION in session.capabilities.get("extensions", {})
        self.app_views = AppResources(session)
        session.answer_inputs_with(self.answerer.answer_inputs)
        session.when_lost(lambda _exc: self.lifecycle.connection_lost())
        session.when_reconnecting(self.lifecycle.connection_changed)
        dialect.install(self.lifecycle, self.answerer)
        # Its handles and results draw themselves (repr, a notebook's display) with the views.
        install_renderers()

    # -- what the parts keep ---------------------------------------------------------------------

    @property
    def tasks(self) -> dict[str, TaskHandle]:
        """Every unfinished task this client started or attached to, by id (strong references)."""
        return self.lifecycle.tasks

    @property
    def index(self) -> TaskIndex | None:
        """Where the tasks this client starts are recorded (None: nowhere); see ``index/task_index.py``."""
        return self.lifecycle.index

    @index.setter
    def index(self, value: TaskIndex | None) -> None:
        self.lifecycle.index = value

    @property
    def max_poll_failures(self) -> int:
        """Failed polls in a row (with backoff between them) before a task is declared lost."""
        return self.lifecycle.max_poll_failures

    @max_poll_failures.setter
    def max_poll_failures(self, value: int) -> None:
        self.lifecycle.max_poll_failures = value

    @property
    def logs(self) -> Any:
        """Log notifications that belong to no task of this client (the newest 500)."""
        return self.lifecycle.logs

    @property
    def elicitation_handler(self) -> Handler | None:
        return self.answerer.elicitation_handler

    @elicitation_handler.setter
    def elicitation_handler(self, value: Handler | None) -> None:
        self.answerer.elicitation_handler = value

    @property
    def sampling_handler(self) -> Handler | None:
        return self.answerer.sampling_handler

    @sampling_handler.setter
    def sampling_handler(self, value: Handler | None) -> None:
        self.answerer.sampling_handler = value

    @property
    def ask_user(self) -> Handler | None:
        """Asks a person when neither the handler nor a task's answers settle a question (the notebook
        runtime sets it to show a form); same signature as an elicitation handler."""
        return self.answerer.ask_user

    @ask_user.setter
    def ask_user(self, value: Handler | None) -> None:
        self.answerer.ask_user = value

    @property
    def name(self) -> str:
        """The server's name as used in messages and errors."""
        return self.session.name

    @property
    def transport(self) -> Transport:
        return self.session.transport

    def describe(self) -> dict[str, Any]:
        """What this connection is: transport, protocol, dialect (and why), task capabilities."""
        info: dict[str, Any] = scrub_data(
            {
                **self.transport.describe(),
                "server": self.server_info.name,
                "version": self.server_info.version,
                "protocol": self.protocol_version,
                "stateless": self.session.modern,
                "dialect": self.dialect.name,
                "dialect_reason": self.dialect.reason,
                "tasks": self.capabilities.get("tasks"),
                "open_tasks": len(self.tasks),
                "reconnecting": self.session.reconnecting,
                "sessions_started": self.session.generation + 1,
            }
        )
        return info

    @property
    def identity(self) -> ServerIdentity:
        """Which server this is, for the task index (what may be shown: no header or env values)."""
        return ServerIdentity(
            self.name,
            self.target,
            self.transport.kind,
            self.protocol_version,
            self.dialect.name,
            scrub(self.server_info.name[:MAX_SOFTWARE_CHARS]),
            scrub(self.server_info.version[:MAX_SOFTWARE_CHARS]),
        )

    # -- tools ---------------------------------------------------------------------------------

    async def list_tools(self, *, refresh: bool = False) -> list[Tool]:
        """Every tool the server offers (all pages), cached after the first call.

        Over stateless HTTP, a tool with an invalid ``x-mcp-header`` declaration is left out (with
        a warning in the log); the valid declarations say which arguments travel as headers.
        """
        if self._tools is None or refresh:
            tools: dict[str, Tool] = {}
            headers: dict[str, wire_headers.ParamHeaders] = {}
            check = self.session.modern and self.transport.carries_headers
            cursor: str | None = None
            seen: set[str] = set()
            for page_number in range(MAX_LIST_PAGES + 1):
                if page_number == MAX_LIST_PAGES:
                    log.warning(
                        "%s: tools/list still had more after %d pages; listing stopped there",
                        self.name,
                        MAX_LIST_PAGES,
                    )
                    break
                raw = await self.session.request("tools/list", {"cursor": cursor} if cursor else {})
                page = self.session.validate(ListToolsResult, raw, "tools/list result", "tools/list")
                for tool in page.tools:
                    if check:
                        try:
                            spec = wire_headers.param_headers(tool.input_schema)
                        except ValueError as exc:
                            log.warning("%s: tool %r left out: %s", self.name, tool.name, exc)
                            continue
                        if spec:
                            headers[tool.name] = spec
                    self.dialect.tool_listed(tool)
                    tools[tool.name] = tool
                cursor = page.next_cursor
                if not cursor or cursor in seen:
                    break
                seen.add(cursor)
            self._tools = tools
            if check:
                self.session.mirror_param_headers(headers)
        return list(self._tools.values())

    @property
    def cached_tools(self) -> list[Tool] | None:
        """The tools of the last ``tools/list`` answer, without asking the server (None before the
        first ``list_tools``)."""
        return None if self._tools is None else list(self._tools.values())

    async def tool(self, name: str) -> Tool:
        """The named tool, or ToolNotFound listing what the server has."""
        if self._tools is None or name not in self._tools:
            await self.list_tools(refresh=self._tools is not None)
        assert self._tools is not None
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(sorted(self._tools)) or "none"
            raise ToolNotFound(f"no tool named {name!r} (tools: {known})", server=self.name)
        return tool

    def _check_arguments(self, tool: Tool, arguments: dict[str, Any]) -> None:
        # A name the schema does not know is refused before sending (a typo would be ignored by
        # many servers), or warned about when the schema says it takes other names.
        unknown = unknown_names(tool.input_schema, arguments)
        if unknown:
            text = unknown_names_text(tool.name, tool.input_schema, unknown)
            if not takes_other_names(tool.input_schema):
                raise UsageError(text, server=self.name)
            warnings.warn(f"{self.name}: {text} (sent anyway: the tool takes other names too)", stacklevel=3)
        missing = [a for a in tool.required_arguments if a not in arguments]
        if missing:
            raise UsageError(
                f"tool {tool.name!r} needs argument(s) {', '.join(missing)} "
                f"(given: {', '.join(arguments) or 'none'})",
                server=self.name,
            )

    # -- tasks ---------------------------------------------------------------------------------

    async def start_task(
        self,
        tool: str,
        arguments: dict[str, Any] | None = None,
        *,
        ttl: int | None = None,
        answers: dict[str, Any] | None = None,
        cache: bool = False,
    ) -> TaskHandle:
        """Start ``tool`` as a task and return its handle as soon as the server has accepted it.

        ``ttl`` is the retention asked for, in milliseconds (the server may change it). A tool that
        cannot run as a task here runs as an ordinary call in the background; ``handle.runs_as_task``
        is then False. ``answers`` answer the task's questions (elicitations) without asking anyone,
        whenever they satisfy the question's schema (defaults fill the gaps); otherwise the
        elicitation handler is asked. An ``elicitation_handler`` given to ``connect`` decides first.

        With ``cache=True`` the stored result of an identical earlier completed call (same server,
        tool and arguments, from the task index) comes back at once, without asking the server: the
        handle is already done and ``handle.cached`` is True. Nothing is cached unless asked.
        """
        self._check_open()
        if arguments is not None and not isinstance(arguments, dict):
            raise UsageError(
                f"arguments for {tool!r} must be a mapping, not {type(arguments).__name__}", server=self.name
            )
        args = dict(arguments or {})
        if cache:
            hit = self.lifecycle.cached(tool, args, self.target)
            if hit is not None:
                return hit
        spec = await self.tool(tool)
        self._check_arguments(spec, args)
        return await self.lifecycle.start(spec, args, ttl=ttl, answers=answers)

    async def map(
        self,
        tool: str,
        arguments_list: Iterable[Mapping[str, Any]] | None = None,
        *,
        limit: int | None = None,
        answers: Mapping[str, Any] | Sequence[Mapping[str, Any] | None] | None = None,
        ttl: int | None = None,
        cache: bool = False,
        resume: bool | str | None = False,
        restart: bool = False,
    ) -> Batch:
        """Start ``tool`` once per argument mapping, at most ``limit`` tasks running at once, and
        return the :class:`~mcp_tasks_jupyter.running.batch.Batch` of their handles at once, in order.

        The first ``limit`` tasks are sent straight away; the others are ``queued`` and each is sent
        as soon as another task of the batch ends. ``answers`` (one mapping for every task, or a list
        with one per task), ``ttl`` and ``cache`` are as in :meth:`start_task`; a cached result takes
        no slot. The tool and every mapping's required arguments are checked before anything is sent.
        A queued task can be cancelled (it is then never sent); closing the client ends it ``lost``.

        With a task index the batch is recorded there as a sweep (``batch.sweep`` is its id), which a later
        kernel resumes: ``resume=True`` continues the newest unfinished sweep of the same tool, server and
        items (none: a new one starts), ``resume=ID`` that sweep (``arguments_list`` may then be left out
        when no item has a secret argument), ``resume=None`` does what True does (the magic's default);
        ``restart=True`` always starts anew. A resumed sweep takes the tasks that ended from their records,
        re-attaches those the server still runs, sends again (once, noted in their records) those the
        server lost or whose send was in flight when the kernel stopped, and sends the queued ones;
        ``batch.resumed`` counts them. ``limit`` defaults to 8, or to a resumed sweep's own.
        """
        self._check_open()
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise UsageError(f"map: limit must be a whole number >= 1, not {limit!r}", server=self.name)
        if arguments_list is None and not isinstance(resume, str):
            raise UsageError("map: which argument mappings? (only resume=ID may leave them out)", server=self.name)
        if isinstance(arguments_list, (str, bytes, Mapping)):
            raise UsageError(
                f"map: arguments_list must be a list of argument mappings, not one "
                f"{type(arguments_list).__name__}",
                server=self.name,
            )
        items: list[dict[str, Any]] = []
        for place, arguments in enumerate(arguments_list or ()):
            if not isinstance(arguments, Mapping):
                raise UsageError(
                    f"map {tool!r}: item {place} must be a mapping of arguments, not {type(arguments).__name__}",
                    server=self.name,
                )
            items.append(dict(arguments))
        spec = await self.tool(tool)
        for place, args in enumerate(items):
            try:
                self._check_arguments(spec, args)
            except UsageError as exc:
                raise UsageError(f"map item {place}: {exc.detail}", server=self.name) from None
            if place % MAP_CHECKS_PER_TURN == MAP_CHECKS_PER_TURN - 1:
                await asyncio.sleep(0)  # a 100,000-item map's checks take seconds: the loop runs between
        plan = None
        if self.index is not None:
            from .running.sweep import plan as plan_sweep

            plan = await plan_sweep(
                self.lifecycle,
                self.index,
                spec,
                items if arguments_list is not None else None,
                target=self.target,
                limit=limit or DEFAULT_LIMIT,
                ttl=ttl,
                resume=resume,
                restart=restart,
            )
            items = plan.items
            if limit is None and plan.resumed is not None:
                limit = plan.run.sweep.limit
        presets = _presets(answers, len(items), self.name)
        cached = (lambda args: self.lifecycle.cached(tool, args, self.target)) if cache else None
        batch = await Batch.made(
            self.lifecycle,
            spec,
            items,
            limit=limit or DEFAULT_LIMIT,
            ttl=ttl,
            answers=presets,
            cached=cached,
            plan=plan,
        )
        if self._closed:  # closed while the batch's handles were made: they end as a closing client's do
            await batch.aclose("the client was closed")
            return batch
        self._batches.add(batch)
        batch.on_end(self._batches.discard)
        return batch

    def resume(self, *, notebook: str | None = None) -> list[TaskHandle]:
        """Attach again to this notebook's unfinished tasks on this server, as the task index has them.

        ``notebook`` defaults to the current one (``JPY_SESSION_NAME``; None: tasks started from no
        known notebook). Tasks the server no longer knows end as ``lost`` (or ``expired``), with the
        reason in their record; tasks of a stdio server (its process ended) or ordinary calls (they end
        with their connection) are marked ``lost`` without asking. Returns the resumed handles.
        """
        self._check_open()
        if self.index is None:
            raise UsageError("this client has no task index to resume from", server=self.name)
        notebook = notebook if notebook is not None else notebook_path()
        return self.lifecycle.resume(self.target, notebook, stdio=self.transport.kind == "stdio")

    def attach(self, task_id: str, *, tool: str | None = None) -> TaskHandle:
        """A handle for a task the server already has (e.g. started before a kernel restart)."""
        self._check_open()
        return self.lifecycle.attach(task_id, tool=tool)

    def handle_of(self, task_id: str) -> TaskHandle | None:
        """The handle of an unfinished task of this client, by id (None: none)."""
        return self.lifecycle.handle_of(task_id)

    async def list_tasks(self) -> list[TaskState]:
        """The server's tasks (all pages) where it offers ``tasks/list``; else this client's own."""
        if self.dialect.supports_list:
            return await self.dialect.list()
        return [
            TaskState(
                h.task_id,
                h.server_status,
                h.status_message,
                h.created_at,
                h.last_updated_at,
                h.ttl_ms,
                h.poll_interval_ms,
            )
            for h in self.tasks.values()
            if h.task_id
        ]

    async def delete_task(self, task_id: str) -> None:
        """Ask the server to forget a task and its result (``tasks/delete``, SEP-1686 servers only)."""
        self._check_open()
        if not self.dialect.supports_delete:
            raise UsageError(f"the {self.dialect.name} task dialect cannot delete tasks", server=self.name)
        await self.dialect.delete(task_id)

    async def call_tool(
        self, tool: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = DEFAULT_CALL_TIMEOUT_S
    ) -> ToolResult:
        """Call a tool and wait for its result; runs as a task when the tool requires one, or
        when the server answers with a task (ext): that task is then polled to its end.

        A server's questions on the way (elicitation, also as ``input_required`` results) go
        through the same answering path as a task's."""
        self._check_open()
        args = dict(arguments or {})
        spec = await self.tool(tool)
        if self.dialect.unsolicited_tasks:
            return await self.lifecycle.call_decided(spec, args, timeout)
        if self.dialect.requires_task(spec) and self.dialect.runs_as_task(spec):
            handle = await self.start_task(tool, args)
            async with asyncio.timeout(timeout):
                return await handle
        return await self.lifecycle.plain_call(tool, args, None, timeout=timeout)

    # -- questions (one answering path: see answering.py) ----------------------------------------

    # -- bookkeeping ---------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise UsageError("this client is closed", server=self.name)
        if self.session.closed_error is not None:
            raise self.session.closed_error

    # -- closing -------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Stop polling and close the connection. Tasks keep running on the server."""
        if self._closed:
            return
        self._closed = True
        for batch in list(self._batches):
            await batch.aclose("the client was closed")
        await self.lifecycle.aclose()
        await self.session.close()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _presets(
    answers: Mapping[str, Any] | Sequence[Mapping[str, Any] | None] | None, count: int, server: str
) -> list[dict[str, Any] | None]:
    """``map``'s answers as one entry per task: the same mapping for all, or one per task."""
    if answers is None or isinstance(answers, Mapping):
        return [dict(answers) if answers else None] * count
    given: Any = answers  # what callers pass is not always what the annotation says
    if (
        not isinstance(given, (list, tuple))
        or len(given) != count
        or not all(a is None or isinstance(a, Mapping) for a in given)
    ):
        raise UsageError(
            f"map: answers must be one mapping for every task or a list of {count} (one per task)", server=server
        )
    return [dict(a) if a else None for a in given]


def _transport_for(
    target: str | Sequence[str],
    headers: dict[str, str] | None,
    env: dict[str, str] | None,
    auth: OAuth | AuthHook | None = None,
    name: str | None = None,
) -> Transport:
    if isinstance(target, str) and target.startswith(("http://", "https://")):
        if env:
            raise UsageError("env= applies to stdio servers; this target is a URL")
        hook = OAuthSignIn(auth, target, name or safe_url(target)) if isinstance(auth, OAuth) else auth
        return StreamableHTTPTransport(target, headers=headers, auth=hook)
    if headers:
        raise UsageError("headers= apply to HTTP servers; this target is a command")
    if auth is not None:
        raise UsageError("auth= applies to HTTP servers; this target is a command")
    if not isinstance(target, (str, list, tuple)):
        raise UsageError(
            f"target must be a URL, a command string or a list of argv strings, not {type(target).__name__}"
        )
    return StdioTransport(target, env=env)


@contextlib.contextmanager
def _paused_while_signing_in(auth: AuthHook | None, deadline: asyncio.Timeout, seconds: float) -> Iterator[None]:
    """The handshake's timeout does not run while a person signs in (OAuth): it starts again after."""
    if not isinstance(auth, OAuthSignIn):
        yield
        return

    def waiting(person: bool) -> None:
        if not deadline.expired():
            deadline.reschedule(None if person else asyncio.get_running_loop().time() + seconds)

    auth.waiting.append(waiting)
    try:
        yield
    finally:
        auth.waiting.remove(waiting)


def _client_capabilities(sampling: bool, apps: bool = True) -> dict[str, Any]:
    # Elicitation is always offered: questions are answered by the handler, by a task's `answers`,
    # or declined at once, so a server that asks never waits on nobody.
    caps: dict[str, Any] = {"tasks": {"requests": {}}, "elicitation": {"form": {}}}
    if sampling:
        caps["sampling"] = {}
    if apps:  # MCP Apps: a notebook draws a tool's own view (session/handshake.py declares it on every wire)
        caps["extensions"] = {wire_apps.EXTENSION: dict(wire_apps.CLIENT_SETTINGS)}
    return caps


async def open_client(
    target: str | Sequence[str],
    *,
    headers: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
    dialect: str = "auto",
    elicitation_handler: Handler | None = None,
    sampling_handler: Handler | None = None,
    name: str | None = None,
    timeout: float = 30.0,
    protocol_version: str | None = None,
    index: TaskIndex | str | os.PathLike[str] | None = None,
    reconnect_for: float = RECONNECT_FOR_S,
    auth: OAuth | AuthHook | None = None,
    apps: bool = True,
) -> Client:
    check_dialect(dialect)
    check_version(protocol_version)
    transport = _transport_for(target, headers, env, auth, name)
    if not reconnect_for >= 0:
        raise UsageError(f"reconnect_for must be a number of seconds >= 0, not {reconnect_for!r}")
    session = Session(transport, name=name, capabilities=_client_capabilities(sampling_handler is not None, apps))
    session.reconnect_for = float(reconnect_for)
    # A dialect that lives on one wire decides it; otherwise the handshake finds out.
    stateless = True if dialect in STATELESS else False if dialect in STATEFUL else None
    try:
        await session.start()
        async with asyncio.timeout(timeout) as deadline:
            with _paused_while_signing_in(transport.auth, deadline, timeout):
                await handshake(
                    session, protocol_version, stateless=stateless, probe_timeout=min(PROBE_TIMEOUT_S, timeout)
                )
        if name is None and session.server_info is not None:
            session.name = scrub(f"{session.server_info.name} at {transport.label}")
        chosen = select_dialect(dialect, session)
    except TimeoutError:
        await session.close()
        raise ConnectionFailed(
            f"no answer to the handshake (server/discover or initialize) within {timeout} s", server=session.name
        ) from None
    except BaseException:
        await session.close()
        raise
    client = Client(session, chosen, elicitation_handler=elicitation_handler, sampling_handler=sampling_handler)
    if index is not None:
        client.index = index if isinstance(index, TaskIndex) else TaskIndex(index)
    return client


class Connecting:
    """What ``connect`` returns: await it for a Client, or use it as ``async with``."""

    def __init__(self, target: str | Sequence[str], **options: Any) -> None:
        self._target = target
        self._options = options
        self._client: Client | None = None

    def __await__(self) -> Generator[Any, None, Client]:
        return open_client(self._target, **self._options).__await__()

    async def __aenter__(self) -> Client:
        self._client = await open_client(self._target, **self._options)
        return self._client

    async def __aexit__(self, *exc: object) -> None:
        if self._client is not None:
            await self._client.aclose()


def connect(
    target: str | Sequence[str],
    *,
    headers: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
    dialect: str = "auto",
    elicitation_handler: Handler | None = None,
    sampling_handler: Handler | None = None,
    name: str | None = None,
    timeout: float = 30.0,
    protocol_version: str | None = None,
    index: TaskIndex | str | os.PathLike[str] | None = None,
    reconnect_for: float = RECONNECT_FOR_S,
    auth: OAuth | AuthHook | None = None,
    apps: bool = True,
) -> Connecting:
    """Connect to an MCP server.

    ``target``: an ``http(s)://`` URL (Streamable HTTP), or a command string / argv list (stdio).
    ``headers`` go on every HTTP request (tokens); ``env`` is added to a stdio server's environment.
    ``dialect``: how tasks are spoken: ``auto`` (default: the newest both sides support, see
    ``client.describe()["dialect_reason"]``), ``ext`` (the 2026-07-28 tasks extension),
    ``2025-11-25``, ``sep1686`` (the SEP-1686 draft) or ``none`` (ordinary calls only).
    ``protocol_version``: None (default) probes with ``server/discover`` and falls back to
    ``initialize``; ``"2026-07-28"`` speaks only the stateless wire; a legacy version
    (``"2025-11-25"``, ...) only ``initialize``.
    Handlers are ``async def handler(params: dict) -> dict`` returning the MCP result.
    ``index``: a :class:`~mcp_tasks_jupyter.index.task_index.TaskIndex` (or its path) recording every task
    started (for ``client.resume()`` and ``start_task(..., cache=True)``); the notebook runtime
    gives every connection the default one.
    ``reconnect_for``: how long (seconds) an HTTP server that went away is reconnected, with backoff,
    before its unfinished tasks end ``lost``; a server that ended the session (HTTP 404) gets a new one.
    ``auth``: ``mtj.OAuth(...)`` signs in with OAuth when the server asks for it (the MCP authorization
    flow: a sign-in link for a person, tokens kept in the token store and refreshed); or any object
    with the ``transport.auth.AuthHook`` interface.
    ``apps``: MCP Apps (default True): the client declares the ``io.modelcontextprotocol/ui`` extension and
    a notebook draws an app tool's own view in the task's output; False draws the plain result.
    """
    return Connecting(
        target,
        headers=headers,
        env=env,
        dialect=dialect,
        elicitation_handler=elicitation_handler,
        sampling_handler=sampling_handler,
        name=name,
        timeout=timeout,
        protocol_version=protocol_version,
        index=index,
        reconnect_for=reconnect_for,
        auth=auth,
        apps=apps,
    )
