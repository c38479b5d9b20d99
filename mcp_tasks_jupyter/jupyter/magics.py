"""The ``%mcp_*`` magics: connect to servers, start and watch tasks, collect their results.

Load them with ``%load_ext mcp_tasks_jupyter`` (or ``c.InteractiveShellApp.extensions =
["mcp_tasks_jupyter"]`` in an IPython/kernel config). Each magic's docstring is its help
(``%mcp_task?``). The argument grammar is in ``magic_args``; the cell rewriting that lets a cell
await a magic is in ``transform``; the connections and jobs live in the runtime.

Mistakes (bad arguments, unknown servers or tools, missing required arguments, errors from the
server) fail the cell with one line, ``UsageError: <what>: <problem>``, and no traceback.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class, needs_local_scope, no_var_expand
from IPython.display import display as ipython_display
from IPython.utils.text import DollarFormatter

from ..errors import MCPError
from ..exports.provenance import export_notebook
from ..tasks.handle import TaskHandle
from ..views.labels import task_label
from . import display, notebook_sign_in as sign_in
from .config import ConfigError
from .config_sources import config_table, load_server
from .magic_args import (
    ArgumentError,
    TaskRef,
    parse_connect_line,
    parse_server_name,
    parse_task_line,
    parse_task_ref,
    parse_tasks_args,
)
from .pending import Pending, one_line
from .runtime import Runtime, get_runtime
from .tables import servers_table, tools_table
from .widgets.compact_widget import COMPACT_AFTER

_formatter = DollarFormatter()
#: Names %mcp_connect can expand without an import: {sys.executable}, {os.environ[...]}.
_CONNECT_NAMES = {"sys": sys, "os": os}


@magics_class
class MCPMagics(Magics):
    """The ``%mcp_*`` magics, bound to one :class:`Runtime` (the process-wide one by default)."""

    def __init__(self, shell: Any, runtime: Runtime | None = None) -> None:
        super().__init__(shell)
        self.runtime = runtime if runtime is not None else get_runtime()
        #: (execution count of the cell, tasks it asked for): many tasks in one cell show compact.
        self._cell_tasks: tuple[Any, int] = (None, 0)

    @property
    def user_ns(self) -> dict[str, Any]:
        """The user's namespace in the shell these magics serve (``load`` always gives one)."""
        if self.shell is None:
            raise UsageError("the %mcp_* magics are not registered on an IPython shell")
        namespace: dict[str, Any] = self.shell.user_ns
        return namespace

    # -- %mcp_connect --------------------------------------------------------------------------

    @no_var_expand
    @line_magic
    @needs_local_scope
    def mcp_connect(self, line: str, local_ns: dict[str, Any] | None = None) -> Pending:
        """Connect to an MCP server and give the connection a NAME.

        Usage::

            %mcp_connect [options] NAME [options] URL_OR_COMMAND...
            %mcp_connect [options] NAME                 # NAME from mcp.json

        Options (before URL_OR_COMMAND)::

            --header NAME=VALUE   an HTTP header on every request (repeatable; also NAME: VALUE)
            --env NAME=VALUE      an environment variable for a stdio server (repeatable)
            --dialect D           auto (default), 2025-11-25, ext, sep1686, none
            --timeout SECONDS     how long to wait for the server's initialize answer (30)

        The first word after NAME that does not start with ``-`` begins URL_OR_COMMAND, and every
        word from there on belongs to the command (its own ``-m``, ``--port`` ... included); write
        ``--`` to end the options explicitly. A URL (``http://``, ``https://``) means Streamable
        HTTP; anything else is a command run over stdio, split like a shell would. ``$var`` and
        ``{expr}`` expand from the notebook's variables (``sys`` and ``os`` are there even when
        not imported)::

            %mcp_connect demo {sys.executable} -m mcp_tasks_jupyter.demo --poll-interval 200
            %mcp_connect api --header "Authorization=Bearer $token" https://example.org/mcp
            %mcp_connect research            # "research" from mcp.json

        Without URL_OR_COMMAND, NAME is looked up in ``mcp.json``: next to the notebook, then the
        user's Jupyter config directory (or ``$MTJ_CONFIG``); ``${env:VAR}`` in it comes from the
        environment. Options given here are added to the file's headers and env.

        An HTTP server that asks you to sign in (OAuth) gets a "Sign in to NAME" link in the cell:
        it opens the sign-in in a new tab, and the cell goes on once you are signed in (where the browser
        cannot reach this kernel, e.g. on a hub, paste the address it ended on into the field under the
        link). Tokens are
        kept for the next time (``%mcp_logout NAME`` forgets them). ``"oauth": {...}`` in mcp.json
        sets ``client_id``, ``client_secret``, ``scopes``, ``redirect_port``; ``"oauth": false``
        never signs in. ``"apps": false`` draws the plain result of a tool with its own view (MCP Apps).

        Connecting again with a NAME in use replaces that connection once the new one is up; its
        unfinished tasks keep running on the server (``%mcp_result NAME:TASK_ID`` picks one up).
        Header and env values are never shown.
        """
        args = self._parse(parse_connect_line, self._expander(local_ns, fallback=_CONNECT_NAMES)(line))
        headers, env = dict(args.headers), dict(args.env)
        secrets: frozenset[str] = frozenset()
        oauth: Any = None
        options: dict[str, Any] = {"timeout": args.timeout} if args.timeout is not None else {}
        if args.target is None:
            try:
                config = load_server(args.name)
            except MCPError as exc:
                raise UsageError(one_line(f"%mcp_connect {args.name}", exc)) from None
            target: str | list[str] = config.target
            headers, env = {**config.headers, **headers}, {**config.env, **env}
            dialect = args.dialect or config.dialect or "auto"
            shown, source, secrets = config.display_target, str(config.source), config.secrets
            oauth = config.oauth
            if not config.apps:
                options["apps"] = False  # "apps": false in mcp.json: plain results, no views
        else:
            target = args.target
            dialect = args.dialect or "auto"
            shown = _as_written(line, target)
            source = "%mcp_connect"
        runtime = self.runtime
        job = self._job(
            runtime.connect(
                args.name,
                target,
                headers=headers or None,
                env=env or None,
                dialect=dialect,
                display_target=shown,
                source=source,
                secrets=secrets,
                oauth=oauth,
                **options,
            ),
            f"mcp-connect {args.name}",
        )

        async def report(client: Any) -> Any:
            info = client.describe()
            print(
                f"connected {args.name}: {info['server']} {info['version']} over {info['transport']}, "
                f"protocol {info['protocol']}, tasks: {info['dialect']}"
            )
            return client

        return Pending(
            f"%mcp_connect {args.name}",
            job,
            report,
            quiet=True,
            redact=lambda text: runtime.redact(_scrub(text, secrets, headers, env)),
        )

    # -- %mcp_login, %mcp_logout ---------------------------------------------------------------

    @line_magic
    def mcp_login(self, line: str) -> Pending:
        """Sign in to a connected server with OAuth now (e.g. as another account, or for more scope).

        Usage::

            %mcp_login NAME
        """
        name = self._one_name(line, "mcp_login")
        client = self._client(name, f"%mcp_login {name}")
        job = self._job(sign_in.login(name, client), f"mcp-login {name}")

        async def report(text: str) -> None:
            print(text)

        return Pending(f"%mcp_login {name}", job, report, quiet=True, redact=self.runtime.redact)

    @line_magic
    def mcp_logout(self, line: str) -> None:
        """Forget the OAuth tokens of a server (connected, or configured in mcp.json): the next request
        that needs them asks you to sign in again.

        Usage::

            %mcp_logout NAME
        """
        name = self._one_name(line, "mcp_logout")
        client = self.runtime.clients.get(name)
        url = None
        if client is None:
            try:
                config = load_server(name)
            except MCPError as exc:
                raise UsageError(one_line(f"%mcp_logout {name}", exc)) from None
            url = config.target if isinstance(config.target, str) else None
        try:
            sign_in.logout(name, client, url)
        except MCPError as exc:
            raise UsageError(one_line("", exc)) from None

    # -- %mcp_servers --------------------------------------------------------------------------

    @line_magic
    def mcp_servers(self, line: str) -> None:
        """Show this kernel's connections: transport, target, server, protocol version, task
        dialect (and why it was chosen), the server's task capabilities, open tasks, state, and the
        names (never the values) of headers and env variables.

        Usage: ``%mcp_servers [--config]``; ``--config`` lists every server configured in the files
        ``%mcp_connect NAME`` reads (``mcp.json``, ``.vscode/mcp.json``, Jupyter AI's settings), the
        file each came from and which one a name resolves to.
        """
        if line.strip() == "--config":
            try:
                ipython_display(config_table())
            except ConfigError as exc:
                raise UsageError(f"%mcp_servers --config: {exc}") from None
            return
        if line.strip():
            raise UsageError(f"%mcp_servers takes no arguments but --config (got {line.strip()!r})")
        table = servers_table(self.runtime.connections.values(), self.runtime.redact)
        if not self.runtime.connections:
            table.notes.append("Connect with %mcp_connect NAME URL_OR_COMMAND.")
        ipython_display(table)

    # -- %mcp_tools ----------------------------------------------------------------------------

    @line_magic
    def mcp_tools(self, line: str) -> Pending:
        """Show the tools of server NAME (default: every connected server) with their task
        support (``forbidden``/``optional``/``required`` and how a call runs on this connection;
        on the stateless wire the server decides per call), a summary of their arguments
        (``*`` = required) and the first line of their description.

        Usage: ``%mcp_tools [NAME]``
        """
        name = self._parse(parse_server_name, line, magic="mcp_tools")
        runtime = self.runtime
        names = [name] if name is not None else list(runtime.clients)
        if name is not None:
            self._client(name, "%mcp_tools")
        elif not names:
            raise UsageError("%mcp_tools: no MCP server is connected: run %mcp_connect NAME URL_OR_COMMAND first")

        async def gather() -> list[Any]:
            tables = []
            for server in names:
                client = runtime.client(server)
                tools = await client.list_tools(refresh=True)
                tables.append(tools_table(server, tools, client.dialect))
            return tables

        async def show(tables: list[Any]) -> None:
            for table in tables:
                ipython_display(table)

        what = f"%mcp_tools {name}" if name else "%mcp_tools"
        return Pending(what, self._job(gather(), what), show, quiet=True, redact=runtime.redact)

    # -- %mcp_task / %%mcp_task ------------------------------------------------------------------

    @no_var_expand
    @line_cell_magic
    @needs_local_scope
    def mcp_task(self, line: str, cell: str | None = None, local_ns: dict[str, Any] | None = None) -> Pending:
        """Start a tool as a task; the cell gets its TaskHandle as soon as the server has it.

        Usage::

            h = %mcp_task [OPTIONS] NAME:TOOL [key=value ...]
            %%mcp_task [OPTIONS] NAME:TOOL [key=value ...]
            <arguments as a JSON object or YAML mapping>

            OPTIONS: [-o VAR] [--wait] [--ttl MS] [--answers JSON] [--cache | --refresh] [--compact]
                     [--no-app]

        ``NAME:`` may be left out when one server is connected. Options come before NAME:TOOL, in
        any order; everything after it is ``key=value``. A value is JSON when it parses as JSON
        (``seconds=2``, ``flag=true``, ``values=[1, 2, 3]``, ``opts={"a": 1}``, ``topic="two words"``),
        else a Python literal (``['a', 'b']``, ``'a b'``, ``None``), else the text as written
        (``topic=tides``). ``$var`` and ``{expr}`` expand from the notebook's variables, word by
        word (a JSON object or array is never expanded); quote them to keep a string a string:
        ``label="{name}"``. In ``%%mcp_task`` the cell body holds the arguments (``key=value`` on
        the line may add more); it is not expanded.

        ``-o VAR``       when the task ends with a result, bind its ToolResult to VAR (with or
                         without ``--wait``); a tool error is a result too (``VAR.is_error``).
                         A task that ends without one (failed, cancelled, lost) binds nothing: its
                         widget says VAR stays unbound and why (``await h`` raises the error).
        ``--wait``       wait for the task inside the cell (other jobs keep running) and return
                         its ToolResult; a failed task fails the cell with one line.
        ``--ttl MS``     how long the server should keep the task, in milliseconds.
        ``--answers J``  a JSON mapping accepted as the answer if the task asks a question
                         (elicitation), e.g. ``--answers '{"interpretation": "tides (history)"}'``.
        ``--cache``      return the stored result of an identical earlier completed call (same
                         server, tool and arguments, from the task index) at once, without asking
                         the server; the summary says "cached". Nothing is cached unless asked.
        ``--refresh``    run the call anew even with ``--cache``.
        ``--compact``    show the task on one line (status, arguments, progress, outcome, cancel).
        ``--no-app``     a tool with its own view (MCP Apps) shows its plain result, not the view.

        The task is shown below the cell as it runs; on one line when the cell starts more than
        a few tasks (a loop, several magics) or with ``--compact``. Errors in the arguments, unknown servers or
        tools, missing required arguments and refusals by the server fail the cell with one line.
        Interrupting the cell never cancels the task: use ``%mcp_cancel``.
        """
        call = self._parse(parse_task_line, line, body=cell, expand=self._expander(local_ns))
        runtime = self.runtime
        user_ns = self.user_ns

        async def create() -> TaskHandle:
            handle = await runtime.start_task(
                call.server,
                call.tool,
                call.arguments,
                ttl=call.ttl,
                answers=call.answers,
                cache=call.cache,
                out=call.out,
            )
            if call.out is not None:
                bind_when_done(user_ns, call.out, handle)
            return handle

        many = self._count_task_of_cell() > COMPACT_AFTER

        async def then(handle: TaskHandle) -> Any:
            display.show_task(handle, compact=call.compact or pending.many or many, app=not call.no_app)
            if call.wait:
                return await handle
            return handle

        named = task_label(call.tool, call.arguments)
        pending = Pending(
            call.label,
            self._job(create(), f"mcp-task {call.label}"),
            then,
            quiet=not call.wait,
            redact=runtime.redact,
            starts_task=f"{call.server}:{named}" if call.server else named,
        )
        return pending

    # -- %mcp_tasks ----------------------------------------------------------------------------

    @line_magic
    def mcp_tasks(self, line: str) -> None:
        """Show a live board of this kernel's tasks; tasks started later join it. Behind its
        "history" toggle: the task index's earlier tasks (earlier kernels, other notebooks) and,
        where the server offers ``tasks/list``, the server's own. Searchable, sortable, 50 rows a
        page; tick rows to cancel them, or cancel every running one. NAME and S only pre-select
        the board's filters.

        Usage: ``%mcp_tasks [NAME] [--status S] [--history] | --resume | --clear | --export PATH | --sweeps``,
        S one of working, input_required, completed, failed, cancelled, expired, lost.

        ``--history`` show the history at first.

        ``--resume``  attach again to this notebook's unfinished tasks (from the task index) on
                      server NAME (default: every connection), e.g. after a kernel restart: each is
                      shown, and its ``-o`` variable is bound when it completes. Tasks the server no
                      longer knows are marked lost (or expired) in the index, saying why.
        ``--clear``   remove the finished tasks' records from the task index (SEP-1686 servers are
                      also asked to delete them).
        ``--sweeps``  list the task index's sweeps (``%mcp_map`` batches; of server NAME) with their items'
                      counts by state: an unfinished one resumes with ``%mcp_map --resume SWEEP_ID``.
        ``--export PATH``  write the provenance of this kernel's tasks and this notebook's recorded
                      ones (of server NAME) to PATH: JSON Lines, or CSV for ``.csv``
                      (``mcp_tasks_jupyter.exports.provenance``).
        """
        args = self._parse(parse_tasks_args, line)
        server, status = args.server, args.status
        runtime = self.runtime
        if args.resume or args.clear:
            if server is not None:
                self._client(server, "%mcp_tasks")
            elif not runtime.clients:
                raise UsageError(
                    "%mcp_tasks: no MCP server is connected: run %mcp_connect NAME URL_OR_COMMAND first"
                )
        elif (
            server is not None
            and server not in runtime.clients
            and all(h.server != server for h in runtime.handles)
        ):
            raise UsageError(f"%mcp_tasks: no server named {server!r} is connected{runtime.connected_summary()}")
        if args.sweeps:
            self._sweeps(server)
            return None
        if args.export is not None:
            count = export_notebook(runtime.handles, runtime.task_index(), args.export, server=server)
            print(f"exported the provenance of {count} task{'' if count == 1 else 's'} to {args.export}")
            return None
        if args.resume:
            self._resume(server)
            return None
        if args.clear:
            try:
                count = runtime.clear(server)
            except MCPError as exc:
                raise UsageError(one_line("%mcp_tasks --clear", exc)) from None
            print(f"removed {count} finished task record{'' if count == 1 else 's'}")
            return None
        display.show_board(runtime.handles, server=server, status=status, history=args.history)
        return None

    def _sweeps(self, server: str | None) -> None:
        from ..running.sweep import listing

        index = self.runtime.task_index()
        if index is None:
            raise UsageError("%mcp_tasks --sweeps: there is no task index (MTJ_INDEX=off)")
        target = self.runtime.clients[server].target if server in self.runtime.clients else None
        found = listing(index, target)
        if not found:
            print(f"no sweeps recorded in {index.describe()}")
        for one in found:
            counts = ", ".join(f"{n:,} {state}" for state, n in sorted(one.counts.items()))
            state = "finished" if one.sweep.finished_at is not None else "unfinished"
            again = f", {one.sent_again:,} sent again" if one.sent_again else ""
            print(
                f"{one.sweep.id}  {one.sweep.tool} on {one.sweep.server_name}: {one.sweep.total:,} items "
                f"({counts}{again}), {state}"
            )

    def _resume(self, server: str | None) -> None:
        try:
            handles = self.runtime.resume(server)
        except MCPError as exc:
            raise UsageError(one_line("%mcp_tasks --resume", exc)) from None
        print(f"resumed {len(handles)} task{'' if len(handles) == 1 else 's'}")
        for handle in handles:
            if handle.out_var:
                bind_when_done(self.user_ns, handle.out_var, handle)
            display.show_task(handle)

    # -- %mcp_cancel ---------------------------------------------------------------------------

    @line_magic
    @needs_local_scope
    def mcp_cancel(self, line: str, local_ns: dict[str, Any] | None = None) -> Pending:
        """Ask the server to cancel a task.

        Usage: ``%mcp_cancel TASK_ID_OR_VARIABLE``, where the argument is the name of a variable
        holding a TaskHandle (``%mcp_cancel h``) or a task id, ``[NAME:]TASK_ID`` (``NAME:`` may be
        left out when one server is connected or the task is known in this kernel).
        """
        ref = self._parse(parse_task_ref, line, magic="mcp_cancel", allow_out=False)
        handle, server, task_id = self._lookup(ref, local_ns, "%mcp_cancel")
        runtime = self.runtime
        what = f"%mcp_cancel {ref.ref}"

        async def cancel() -> TaskHandle:
            target = handle if handle is not None else await runtime.attach_known(task_id, server)
            await target.cancel()
            return target

        async def report(target: TaskHandle) -> None:
            print(f"{target.server}:{target.tool or '?'} task {target.task_id}: {target.status}")

        return Pending(what, self._job(cancel(), "mcp-cancel"), report, quiet=True, redact=runtime.redact)

    # -- %mcp_result ---------------------------------------------------------------------------

    @line_magic
    @needs_local_scope
    def mcp_result(self, line: str, local_ns: dict[str, Any] | None = None) -> Pending:
        """Wait for a task's result and return it (a ToolResult).

        Usage: ``%mcp_result [NAME:]TASK_ID [-o VAR]`` (or a variable holding a TaskHandle).

        A task this kernel knows is simply awaited; any other one (started before a kernel
        restart, or elsewhere) is picked up on server NAME (or the only server connected) and
        shown while it runs. ``-o VAR`` binds the result to VAR. A failed task fails the cell with
        one line; interrupting the cell never cancels the task.
        """
        ref = self._parse(parse_task_ref, line, magic="mcp_result", allow_out=True)
        handle, server, task_id = self._lookup(ref, local_ns, "%mcp_result")
        runtime = self.runtime
        user_ns = self.user_ns
        what = f"%mcp_result {ref.ref}"

        async def find() -> tuple[TaskHandle, bool]:
            if handle is not None:
                return handle, False
            return await runtime.attach_known(task_id, server), True

        async def collect(found: tuple[TaskHandle, bool]) -> Any:
            target, fresh = found
            if fresh and not target.done():
                display.show_task(target)
            if ref.out is not None:
                bind_when_done(user_ns, ref.out, target)  # the one place -o VAR is bound
            return await target

        return Pending(what, self._job(find(), "mcp-result"), collect, redact=runtime.redact)

    # -- helpers -------------------------------------------------------------------------------

    def _one_name(self, line: str, magic: str) -> str:
        name: str | None = self._parse(parse_server_name, line, magic=magic)
        if name is None:
            raise UsageError(f"%{magic} NAME: give the name of the connection (see %mcp_servers)")
        return name

    def _parse(self, parser: Callable[..., Any], line: str, **kwargs: Any) -> Any:
        try:
            return parser(line, **kwargs)
        except ArgumentError as exc:
            raise UsageError(str(exc)) from None

    def _expander(
        self, local_ns: dict[str, Any] | None, fallback: dict[str, Any] | None = None
    ) -> Callable[[str], str]:
        """IPython's ``$var`` / ``{expr}`` expansion over the user's (and the caller's) names."""
        user_ns = self.user_ns
        namespace = {**(fallback or {}), **user_ns}
        if local_ns is not None and local_ns is not user_ns:
            namespace.update(local_ns)

        def expand(text: str) -> str:
            if "$" not in text and "{" not in text:
                return text
            try:
                return _formatter.vformat(text, args=[], kwargs=namespace)
            except Exception:
                return text  # as IPython does: what cannot be expanded stays as written

        return expand

    def _count_task_of_cell(self) -> int:
        """How many tasks the running cell has asked for, this one included."""
        cell = getattr(self.shell, "execution_count", None)
        count = self._cell_tasks[1] + 1 if self._cell_tasks[0] == cell else 1
        self._cell_tasks = (cell, count)
        return count

    def _job(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            coro.close()
            raise UsageError(
                "the %mcp_* magics need a running asyncio loop: use them in a Jupyter "
                "kernel (or IPython with %autoawait asyncio)"
            ) from None
        return self.runtime.spawn(coro, name=name, awaited=True)

    def _client(self, name: str, what: str) -> Any:
        try:
            return self.runtime.client(name)
        except MCPError as exc:
            raise UsageError(one_line(what, exc)) from None

    def _lookup(
        self, ref: TaskRef, local_ns: dict[str, Any] | None, what: str
    ) -> tuple[TaskHandle | None, str | None, str]:
        """(handle, None, "") for a variable or a task known here; else (None, server, task_id)."""
        text = ref.ref
        if text.isidentifier():
            namespace = {**self.user_ns, **(local_ns or {})}
            if text in namespace:
                value = namespace[text]
                if isinstance(value, TaskHandle):
                    return self.runtime.track(value), None, ""
                raise UsageError(
                    f"{what}: {text} is a {type(value).__name__}, not a task "
                    f"(give a TaskHandle variable or [NAME:]TASK_ID)"
                )
        server, colon, rest = text.partition(":")
        if colon and server in self.runtime.clients:
            task_id, name = rest, server
        else:
            task_id, name = text, None
        known = self.runtime.find(task_id, server=name)
        if known is not None and not self.runtime.needs_reattach(known):
            return known, None, ""
        if name is None and len(self.runtime.clients) != 1:
            if not self.runtime.clients:
                raise UsageError(
                    f"{what}: no task {task_id!r} in this kernel and no server connected to "
                    f"ask: run %mcp_connect NAME ... first"
                )
            raise UsageError(
                f"{what}: task {task_id!r} is not known in this kernel; say which server has "
                f"it: NAME:{task_id} (connected: {', '.join(self.runtime.clients)})"
            )
        return None, name, task_id


def plain_help(doc: str) -> str:
    """A magic's docstring as ``%mcp_task?`` shows it: plain text, without the reST markup the
    source uses (````code````, ``::`` before a block, ``:role:`` names)."""
    text = re.sub(r":[a-z]+:`~?\.*([^`]+)`", r"\1", doc)
    text = re.sub(r"``([^`]+)``", r"\1", text)
    text = re.sub(r"(\S)::\n", r"\1:\n", text)
    return re.sub(r"\s::\n", "\n", text)


def _plain_magic_help() -> None:
    for name, member in vars(MCPMagics).items():
        if name.startswith("mcp_") and callable(member) and member.__doc__:
            member.__doc__ = plain_help(member.__doc__)


_plain_magic_help()


def bind_when_done(namespace: dict[str, Any], name: str, handle: TaskHandle) -> None:
    """Set ``namespace[name]`` to the handle's ToolResult the moment it has one: also a tool error's
    (``is_error``; a declined question ends so), which is a result. A task that ended without a result
    (failed, cancelled, lost) binds nothing; its view says so."""

    def bind(h: TaskHandle) -> None:
        if not h.done():
            return
        unsubscribe()
        if h.exception() is None:
            namespace[name] = h.result()

    unsubscribe = handle.on_change(bind)
    bind(handle)


#: What a command as shown may keep expanded: it names the interpreter the server ran with, so that the
#: record can be run again; any other ``$var``/``{expr}`` stays as written (it may hold a token).
_RERUNNABLE = "{sys.executable}"


def _as_written(line: str, target: str | list[str]) -> str:
    """The target as shown and recorded: as the user wrote it, before ``$var``/``{expr}`` expansion
    (tokens stay hidden), except that ``{sys.executable}`` in a command is the interpreter it ran."""
    try:
        written = parse_connect_line(line).target
    except ArgumentError:
        written = None
    chosen = written if written else target
    if isinstance(chosen, list) and isinstance(target, list) and len(chosen) == len(target):
        chosen = [ran if word == _RERUNNABLE else word for word, ran in zip(chosen, target, strict=True)]
    if isinstance(chosen, str):
        return chosen
    return " ".join(shlex.quote(w) if not w or any(c.isspace() for c in w) else w for w in chosen)


def _scrub(text: str, secrets: frozenset[str], headers: dict[str, str], env: dict[str, str]) -> str:
    from ..redact import scrub_values

    values = set(secrets) | {v for v in (*headers.values(), *env.values()) if len(v) >= 3}
    return scrub_values(text, values)


__all__ = ["MCPMagics", "bind_when_done"]
