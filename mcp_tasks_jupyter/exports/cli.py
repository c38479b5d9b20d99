"""``mcp-tasks`` (also ``python -m mcp_tasks_jupyter``): the task index from a terminal.

The same index the kernels use (``$MTJ_INDEX``, else ``~/.local/share/mcp-tasks-jupyter/tasks.sqlite3``;
``--index PATH`` overrides both; either may be a team's ``postgresql://`` URL)::

    mcp-tasks list [--status S] [--server NAME] [--notebook PATH] [--user NAME] [--json]
    mcp-tasks list --batch SWEEP_ID
    mcp-tasks sweeps
    mcp-tasks show ID [--json]
    mcp-tasks result ID [--json] [--timeout S] [--header NAME=VALUE ...]
    mcp-tasks cancel ID [--timeout S] [--header NAME=VALUE ...]
    mcp-tasks export PATH [--status S] [--server NAME] [--notebook PATH] [--user NAME]
    mcp-tasks export --ro-crate PATH [--license SPDX|URL] [--name N] [--description D] [--publisher P] [filters]
    mcp-tasks clear [--finished]
    mcp-tasks copy [SQLITE_FILE]

``sweeps`` lists the recorded sweeps (``client.map`` / ``%mcp_map`` batches) with their items' counts by state;
``list --batch SWEEP_ID`` one sweep's items, in order, with their state, status, task id and why one was sent
again.

``copy`` copies a machine's SQLite index (default: this user's) into the index (the team's PostgreSQL
database, ``--index`` or ``$MTJ_INDEX``), each record once: running it again copies nothing twice.

``status`` is each task's outcome: a tool error reads ``error`` (``declined`` when one of its questions
was declined), never ``completed``; ``show`` also gives the server's own last status. ``list`` shows
everyone's tasks with who started them (``user@host``); ``--user NAME`` only one person's.

ID is a record's number (the first column of ``list``) or a task id, or an unambiguous beginning of
either. ``result`` prints the stored result; when the record has none and its server is reached over
HTTP, it attaches to the task there and waits (``--timeout``, default 60 s) for it. ``cancel`` asks an
HTTP server to cancel the task. A server that needs a token gets it from ``--header`` (never stored, never
printed); without an ``Authorization`` header, a server that asks through OAuth is signed in to: with the
tokens kept from an earlier sign-in (a notebook's), else by a code to enter on any device (the device
authorization grant, where a terminal has no browser and the server offers it) or a browser tab. Exit
status: 0 done, 1 an error (said on stderr in one line), 2 a bad command line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import sys
import warnings
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

from ..errors import MCPError
from ..index import sweeps
from ..index.author import settings_path
from ..index.task_index import TaskIndex, TaskRecord, data_dir
from ..protocol import versions
from ..release import __version__
from ..tasks.status import FINISHED, STATUSES
from ..views.labels import arguments_label
from .crate import NO_LICENSE, is_crate_path, write_crate
from .crate_sweeps import sweeps_of
from .provenance import export, matching, provenance_row, records

if TYPE_CHECKING:
    from ..client import Connecting
    from ..tasks.handle import TaskHandle
    from ..tasks.results import ToolResult

PROG = "mcp-tasks"
DEFAULT_TIMEOUT_S = 60.0
#: Control characters a server's text must not bring to a terminal (escape sequences), kept: tab, newline.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
LIST_COLUMNS = ("id", "server", "tool", "arguments", "status", "started", "task id", "notebook", "by")
#: The arguments column is cut to this many characters (``show`` gives them whole).
LIST_ARGUMENT_CHARS = 40
#: Record ids are shown by their first digits (at least this many), as many as tell them apart.
SHORT_ID_DIGITS = 6


class CommandError(Exception):
    """What went wrong, in one line for stderr (exit status 1)."""


def plain(text: Any) -> str:
    """``text`` safe for a terminal: control characters (escape sequences) shown as ``\\xNN``."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog=PROG, description="The MCP task index (the one the notebook kernels record in), from a terminal."
    )
    top.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    top.add_argument(
        "--index",
        metavar="PATH|URL",
        help="the task index: a SQLite file or a postgresql:// URL "
        "(default: $MTJ_INDEX, else ~/.local/share/mcp-tasks-jupyter/tasks.sqlite3)",
    )
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def filters(command: argparse.ArgumentParser) -> None:
        command.add_argument("--status", choices=sorted(STATUSES), help="only tasks with this status")
        command.add_argument(
            "--server", metavar="NAME", help="only tasks of this connection name (or URL/command)"
        )
        command.add_argument("--notebook", metavar="PATH", help="only tasks started from this notebook")
        command.add_argument("--user", metavar="NAME", help="only tasks this user started (default: everyone's)")

    def remote(command: argparse.ArgumentParser) -> None:
        command.add_argument(
            "--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="S", help="how long to wait (default 60 s)"
        )
        command.add_argument(
            "--header",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="an HTTP header for the server (a token); never stored or printed",
        )

    listing = commands.add_parser("list", help="list the recorded tasks, oldest first")
    filters(listing)
    listing.add_argument("--json", action="store_true", help="one JSON object per line (the export's rows)")
    listing.add_argument("--batch", metavar="SWEEP_ID", help="one sweep's items, in order (see: sweeps)")
    commands.add_parser("sweeps", help="list the recorded sweeps (client.map / %%mcp_map batches), newest first")
    show = commands.add_parser("show", help="everything recorded about one task")
    show.add_argument("id", metavar="ID", nargs="?")
    show.add_argument("--json", action="store_true", help="as one JSON object")
    result = commands.add_parser("result", help="a task's result: stored, or fetched from its HTTP server")
    result.add_argument("id", metavar="ID", nargs="?")
    result.add_argument("--json", action="store_true", help="the raw CallToolResult as JSON")
    remote(result)
    cancel = commands.add_parser("cancel", help="ask the task's HTTP server to cancel it")
    cancel.add_argument("id", metavar="ID", nargs="?")
    remote(cancel)
    exporting = commands.add_parser(
        "export",
        help="write the provenance of the tasks (JSON Lines, CSV by .csv, an RO-Crate by .crate or .crate.zip)",
    )
    exporting.add_argument("path", metavar="PATH", nargs="?")
    exporting.add_argument(
        "--ro-crate",
        metavar="PATH",
        help="write an RO-Crate (Process Run Crate) instead: a folder, or a zip when PATH ends in .zip",
    )
    exporting.add_argument(
        "--license",
        metavar="SPDX|URL",
        help='the crate\'s license, e.g. CC-BY-4.0 (default: "license" in the setting mcp-tasks-jupyter.json)',
    )
    exporting.add_argument("--name", help="the crate's name (default: made from the notebooks)")
    exporting.add_argument("--description", help="the crate's description")
    exporting.add_argument("--publisher", metavar="NAME|URL", help="who publishes the crate (an organization)")
    filters(exporting)
    clear = commands.add_parser("clear", help="remove records (every one, or the finished ones)")
    clear.add_argument("--finished", action="store_true", help="only the records of tasks that have ended")
    copy = commands.add_parser("copy", help="copy a SQLite index into this one (each record once)")
    copy.add_argument(
        "source",
        nargs="?",
        metavar="SQLITE_FILE",
        help="the SQLite index to copy (default: ~/.local/share/mcp-tasks-jupyter/tasks.sqlite3)",
    )
    return top


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line, where an ID may begin with ``-`` (task ids are random base64url: some do) without
    argparse taking it for an option."""
    top = parser()
    args, extra = top.parse_known_args(argv)
    wants_id = "id" in vars(args)
    if wants_id and args.id is None and len(extra) == 1 and extra[0].startswith("-") and extra[0] != "--":
        args.id, extra = extra[0], []
    if extra:
        top.error(f"unrecognized arguments: {' '.join(extra)}")
    if wants_id and args.id is None:
        top.error(f"{args.command}: the following arguments are required: ID")
    return args


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run one command; the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    args = parse(argv)
    try:
        index = TaskIndex(args.index or None)
    except MCPError as exc:  # a location that is neither a file nor a PostgreSQL URL
        print(f"{PROG}: {plain(exc)}", file=err)
        return 1
    try:
        index.check()  # a server away or a wrong password is said now, naming the host and database
        return COMMANDS[args.command](args, index, out)
    except (CommandError, MCPError) as exc:
        print(f"{PROG}: {plain(exc)}", file=err)
        return 1
    finally:
        index.close()


# -- the commands ------------------------------------------------------------------------------


def _sweeps(args: argparse.Namespace, index: TaskIndex, out: TextIO) -> int:
    index.flush()
    store = _sweep_store(index)
    try:
        found = store.now(sweeps.listing, None)
    finally:
        store.close()
    if not found:
        print(f"no sweeps recorded in {index.describe()}", file=out)
        return 0
    rows = [
        [
            s.sweep.id,
            s.sweep.server_name,
            s.sweep.tool,
            f"{s.sweep.total:,}",
            ", ".join(f"{s.counts[state]:,} {state}" for state in sweeps.ITEM_STATES if s.counts.get(state)),
            f"{s.sent_again:,}",
            "finished" if s.sweep.finished_at is not None else "unfinished",
            _when(s.sweep.created_at),
        ]
        for s in found
    ]
    _table(["sweep", "server", "tool", "items", "states", "sent again", "", "started"], rows, out)
    return 0


def _sweep_store(index: TaskIndex) -> sweeps.SweepStore:
    return sweeps.SweepStore(index.location, index.describe())


def _batch(ident: str, index: TaskIndex, out: TextIO) -> int:
    index.flush()

    def read(database: Any, db: Any) -> tuple[sweeps.SweepRow, list[sweeps.ItemRow]] | None:
        found = sweeps.find(database, db, ident, "", "", None)
        return None if found is None else (found, sweeps.items(database, db, found.id))

    store = _sweep_store(index)
    try:
        answer = store.now(read)
    finally:
        store.close()
    if answer is None:
        raise CommandError(f"no sweep {ident!r} in {index.describe()} (mcp-tasks sweeps lists them)")
    sweep, items = answer
    print(
        f"sweep {sweep.id}: {sweep.tool} on {sweep.server_name}, {sweep.total:,} items, limit {sweep.limit}",
        file=out,
    )
    rows = [
        [
            str(item.position),
            arguments_label(item.arguments, LIST_ARGUMENT_CHARS) or "-",
            item.state,
            item.status or "-",
            item.task_id or "-",
            item.came_back or "",
            item.note or "",
        ]
        for item in items
    ]
    _table(["#", "arguments", "state", "status", "task", "came back", "note"], rows, out)
    return 0


def _table(head: list[str], rows: list[list[str]], out: TextIO) -> None:
    widths = [max(len(plain(cell)) for cell in column) for column in zip(head, *rows, strict=True)]
    for row in [head, *rows]:
        print(
            "  ".join(plain(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip(), file=out
        )


def _list(args: argparse.Namespace, index: TaskIndex, out: TextIO) -> int:
    if args.batch:
        return _batch(args.batch, index, out)
    records = _filtered(index, args)
    if args.json:
        for record in records:
            print(json.dumps(provenance_row(record), ensure_ascii=False, default=str), file=out)
        return 0
    if not records:
        print(f"no tasks recorded in {index.describe()}" + (" match" if _any_filter(args) else ""), file=out)
        return 0
    short = short_ids(r.id for r in index.records())
    rows = [
        [
            short.get(r.id, str(r.id)),
            r.server_name,
            _tool_cell(r, short),
            arguments_label(r.arguments, LIST_ARGUMENT_CHARS) or "-",
            r.status,
            _when(r.started_at or r.recorded_at),
            r.task_id or "-",
            r.notebook or "-",
            _starter(r),
        ]
        for r in records
    ]
    widths = [max(len(plain(cell)) for cell in column) for column in zip(LIST_COLUMNS, *rows, strict=True)]
    for row in [list(LIST_COLUMNS), *rows]:
        print(
            "  ".join(plain(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip(), file=out
        )
    return 0


def _tool_cell(record: TaskRecord, short: dict[int, str]) -> str:
    """The tool, marked when it drew an MCP Apps view (``[view]``) or a view started it (``<- view of ID``)."""
    if record.started_by is not None:
        whose = record.started_by.record
        return f"{record.tool} <- view of {short.get(whose, str(whose)) if whose is not None else '?'}"
    return f"{record.tool} [view]" if record.app_view is not None else record.tool


def short_ids(ids: Iterable[int]) -> dict[int, str]:
    """Each record id by its first digits: at least :data:`SHORT_ID_DIGITS`, as many as tell it from
    every other id (``find`` takes any such beginning; ids are random 63-bit numbers, ``task_index.py``)."""
    texts = sorted({str(i) for i in ids})
    short: dict[int, str] = {}
    for k, text in enumerate(texts):
        shared = max(
            _common_prefix(text, texts[k - 1]) if k > 0 else 0,
            _common_prefix(text, texts[k + 1]) if k + 1 < len(texts) else 0,
        )
        short[int(text)] = text[: max(SHORT_ID_DIGITS, shared + 1)]
    return short


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _show(args: argparse.Namespace, index: TaskIndex, out: TextIO) -> int:
    record = find(index, args.id)
    row = provenance_row(record)
    if args.json:
        print(json.dumps(row, ensure_ascii=False, default=str, indent=2), file=out)
        return 0
    for key, value in row.items():
        if value is None or value == [] or value == {}:
            continue
        shown = json.dumps(value, ensure_ascii=False, default=str) if isinstance(value, (dict, list)) else value
        print(f"{key:>16}: {plain(shown)}", file=out)
    return 0


def _result(args: argparse.Namespace, index: TaskIndex, out: TextIO) -> int:
    from ..tasks.results import ToolResult

    record = find(index, args.id)
    raw = record.result
    if raw is None:
        if record.status in FINISHED:
            why = record.error or record.status_message or "no result was stored"
            raise CommandError(f"task {_name(record)} ended {record.status} without a result: {why}")
        raw = asyncio.run(_fetch(record, index, args))
    try:
        result = ToolResult.from_wire(raw)
    except ValueError as exc:
        raise CommandError(f"task {_name(record)}: the stored result is not a tool result ({exc})") from None
    if args.json:
        print(json.dumps(result.raw, ensure_ascii=False, indent=2, default=str), file=out)
    else:
        print(plain(_result_text(result)), file=out)
    return 1 if result.is_error else 0


def _cancel(args: argparse.Namespace, index: TaskIndex, out: TextIO) -> int:
    record = find(index, args.id)
    if record.status in FINISHED:
        raise CommandError(f"task {_name(record)} has already ended ({record.status})")
    status = asyncio.run(_cancel_remote(record, index, args))
    print(f"task {plain(_name(record))}: {status}", file=out)
    return 0


def _export(args: argparse.Namespace, index: TaskIndex, out: TextIO) -> int:
    wanted = {k: getattr(args, k) for k in ("status", "server", "notebook", "user") if getattr(args, k)}
    if (args.path is None) == (args.ro_crate is None):
        raise CommandError("export: give PATH, or --ro-crate PATH for an RO-Crate (one of them)")
    crate = args.ro_crate or (args.path if is_crate_path(args.path) else None)
    if crate is None:
        count = export(wanted, args.path, index=index)
        print(
            f"exported the provenance of {count} task{'' if count == 1 else 's'} to {plain(args.path)}", file=out
        )
        return 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # said below, in the command's words
        chosen = records(wanted, index=index)
        written = write_crate(
            chosen,
            crate,
            sweeps=sweeps_of(index, chosen),
            license=args.license,
            name=args.name,
            description=args.description,
            publisher=args.publisher,
        )
    tasks = f"{written.tasks} task{'' if written.tasks == 1 else 's'}"
    print(f"exported {tasks} as an RO-Crate (Process Run Crate 0.5) to {plain(crate)}", file=out)
    if "license" in written.missing:
        print(f"note: {NO_LICENSE.format(settings=settings_path())}", file=out)
    return 0


def _clear(args: argparse.Namespace, index: TaskIndex, out: TextIO) -> int:
    gone = index.clear() if args.finished else index.clear(finished_only=False)
    what = "finished task record" if args.finished else "task record"
    print(f"removed {len(gone)} {what}{'' if len(gone) == 1 else 's'} from {index.describe()}", file=out)
    return 0


def _copy(args: argparse.Namespace, index: TaskIndex, out: TextIO) -> int:
    source = TaskIndex(args.source or data_dir() / "tasks.sqlite3")
    try:
        if source.path is None:
            raise CommandError(f"{source.describe()} is not a SQLite file: copy takes a machine's SQLite index")
        if not source.path.is_file():
            raise CommandError(f"there is no SQLite index at {source.describe()}")
        if source.location == index.location:
            raise CommandError(f"{source.describe()} is the index itself: give --index or MTJ_INDEX the other one")
        count = index.copy_from(source)
    finally:
        source.close()
    copied, there = count
    sweeps = f" and {count.sweeps} sweep{'' if count.sweeps == 1 else 's'}" if count.sweeps else ""
    print(
        f"copied {copied} task record{'' if copied == 1 else 's'}{sweeps} from {source.describe()} into "
        f"{index.describe()}" + (f" ({there} already there)" if there else ""),
        file=out,
    )
    return 0


COMMANDS = {
    "list": _list,
    "sweeps": _sweeps,
    "show": _show,
    "result": _result,
    "cancel": _cancel,
    "export": _export,
    "clear": _clear,
    "copy": _copy,
}


# -- finding a record, reaching its server -----------------------------------------------------


def find(index: TaskIndex, ident: str) -> TaskRecord:
    """The record whose number or task id is ``ident``, or begins with it (when only one does)."""
    records = index.records()
    exact = [r for r in records if str(r.id) == ident or r.task_id == ident]
    found = exact or [r for r in records if str(r.id).startswith(ident) or (r.task_id or "").startswith(ident)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise CommandError(f"no task {ident!r} in {index.describe()} (see: {PROG} list)")
    listed = ", ".join(str(r.id) for r in found[:5]) + (", …" if len(found) > 5 else "")
    raise CommandError(f"{ident!r} names {len(found)} tasks ({listed}): give more of it")


def _attached(record: TaskRecord, args: argparse.Namespace) -> tuple[Connecting, str]:
    """A connection to the record's server over HTTP (a stdio server ended with its kernel), and the
    record's task id."""
    from ..client import connect

    if record.task_id is None:
        raise CommandError(f"task {_name(record)} ran as an ordinary call: there is no task to reach")
    if not record.target.startswith(("http://", "https://")):
        raise CommandError(_stdio_reach(record))
    headers = {}
    for item in args.header:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise CommandError(f"--header needs NAME=VALUE, got {name.strip()!r}")
        headers[name.strip()] = value
    options: dict[str, Any] = {"headers": headers, "timeout": min(args.timeout, 30.0), "name": record.server_name}
    if not any(name.lower() == "authorization" for name in headers):
        from ..oauth import OAuth, OAuthSignIn

        # Only where the server publishes OAuth metadata (else its refusal stands, as before).
        server = record.server_name or record.target
        options["auth"] = OAuthSignIn(OAuth(), record.target, server, implicit=True)
    if record.dialect in ("ext", "2025-11-25", "sep1686"):
        options["dialect"] = record.dialect
    if record.protocol in versions.ALL:  # else (a version this client no longer speaks) it chooses
        options["protocol_version"] = record.protocol
    return connect(record.target, **options), record.task_id


async def _fetch(record: TaskRecord, index: TaskIndex, args: argparse.Namespace) -> dict[str, Any]:
    """Attach to the record's task on its HTTP server, wait for its result, store it in the index."""
    connecting, task_id = _attached(record, args)
    async with connecting as client:
        handle = client.attach(task_id, tool=record.tool)
        try:
            result = await asyncio.wait_for(handle, args.timeout)
        except TimeoutError:
            raise CommandError(
                f"task {_name(record)} is still {handle.status} on {record.server_name} after {args.timeout:g} s; "
                "try again later"
            ) from None
        except MCPError:
            _record_end(index, record, handle)
            raise
        _record_end(index, record, handle)
        return result.raw


async def _cancel_remote(record: TaskRecord, index: TaskIndex, args: argparse.Namespace) -> str:
    connecting, task_id = _attached(record, args)
    async with connecting as client:
        handle = client.attach(task_id, tool=record.tool)
        await asyncio.wait_for(handle.cancel(), args.timeout)
        try:
            await asyncio.wait_for(handle, args.timeout)
        except TimeoutError:
            raise CommandError(f"task {_name(record)}: asked to cancel, but it is still {handle.status}") from None
        except MCPError:
            pass  # TaskCancelled, the expected end
        _record_end(index, record, handle)
        return handle.status


def _record_end(index: TaskIndex, record: TaskRecord, handle: TaskHandle) -> None:
    """Keep the record current with what the server said (``Recorder`` does this in a kernel)."""
    from ..index.task_index import Recorder

    if handle.done():
        Recorder(index, record.id)(handle)


# -- small helpers -----------------------------------------------------------------------------


def _filtered(index: TaskIndex, args: argparse.Namespace) -> list[TaskRecord]:
    return matching(
        index.records(), status=args.status, server=args.server, notebook=args.notebook, user=args.user
    )


def _any_filter(args: argparse.Namespace) -> bool:
    return bool(args.status or args.server or args.notebook or args.user)


def _stdio_reach(record: TaskRecord) -> str:
    """Why a task of a stdio server cannot be reached from here, from what the record knows: its
    server is a child of the kernel that started it, which may still run (then the task goes on there)."""
    where = f"task {_name(record)} runs on a stdio server ({plain(record.target)}), a process of the kernel"
    if record.pid is not None and record.hostname == socket.gethostname() and _alive(record.pid):
        state = "waits for input" if record.status == "input_required" else f"is {record.status}"
        notebook = f" ({plain(record.notebook)})" if record.notebook else ""
        return (
            f"{where} that started it (process {record.pid}{notebook}), which is still running: the task "
            f"{state} there; answer or collect it in that notebook (its result is recorded when it ends)"
        )
    if record.pid is not None and record.hostname != socket.gethostname():
        return f"{where} on {plain(record.hostname)}: only that machine's kernel can reach it"
    return f"{where}, which has ended: its result was not stored and cannot be fetched"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        return True
    return True


def _starter(record: TaskRecord) -> str:
    """Who started the task: the person's name when they named themselves (``set_author``), else
    ``user@host`` (``-`` for records made before it was kept)."""
    if record.author is not None:
        return plain(record.author.name)
    if record.username is None and record.hostname is None:
        return "-"
    return f"{record.username or '?'}@{record.hostname or '?'}"


def _name(record: TaskRecord) -> str:
    return f"{record.id} ({record.tool}{', ' + record.task_id if record.task_id else ''})"


def _when(epoch: float | None) -> str:
    if epoch is None:
        return "-"
    return datetime.fromtimestamp(epoch, UTC).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def _result_text(result: ToolResult) -> str:
    if result.text:
        return result.text
    if result.structured is not None:
        return json.dumps(result.structured, ensure_ascii=False, indent=2, default=str)
    kinds = ", ".join(sorted({type(block).__name__ for block in result.content})) or "no content"
    return f"(no text: {kinds}; use --json for the whole result)"


__all__ = ["COMMANDS", "CommandError", "find", "main", "parser", "plain"]
