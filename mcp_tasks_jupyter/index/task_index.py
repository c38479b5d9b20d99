"""The task index: a record of every task a client started, in a local SQLite file or a team's PostgreSQL
database (``MTJ_INDEX=postgresql://...``; ``postgres.py``). One interface, two backends (``backend.py``):
everything below holds on both, but for the journal (SQLite only) and where the cache's key comes from.

One row per task: the server's identity (connection name, URL or command as shown, protocol,
dialect, the software and version it reported — never header or env values), the tool, its arguments
(values of secret-looking keys redacted), the task id, the notebook (``JPY_SESSION_NAME``) when known,
the ``-o`` variable, the created time and ttl, when this client started and saw it finish, the last
status and message, the error it ended with, every question the server asked and how it was answered
(secret-looking values redacted), and the raw result once fetched. ``provenance.py`` exports it.

It lets a notebook resume its unfinished tasks after a kernel restart (``client.resume()``) and
reuse the result of an identical earlier call (``start_task(..., cache=True)``).

Where it lives: the ``path`` given, else ``$MTJ_INDEX``, else
``$XDG_DATA_HOME/mcp-tasks-jupyter/tasks.sqlite3`` (``~/.local/share/...``). ``MTJ_INDEX=off``
turns it off for the notebook runtime. A failing write is logged, never raised: the index must not
break a task.

Several kernels at once. Writes are short transactions, so several kernels (processes) can share one
index. On a running event loop (a kernel) a write never holds the loop: it waits at most a few tens of
milliseconds for another process's lock, and a change that meets a busy database is kept and written
later from the loop, the row's latest state winning; one kept for ten minutes is given up with a logged
error, and ``close()`` writes what is left (``writes.py`` has the rules and the bounds). Reads
(``cached``, ``unfinished``, ``records``) wait up to a second; a read does not see changes still kept.
Without a running loop (plain scripts) a write or read may wait up to 5 s.

Row ids are chosen by the client (random 63-bit integers), so :meth:`TaskIndex.add` returns the row's
id at once even when its insert has to wait; records are ordered by the time they were recorded.

Journal. The database uses WAL, except on a network file system (nfs, nfs4, cifs, smb3, smbfs, lustre,
gpfs, beegfs, ceph, fuse.sshfs, 9p and the like, found from ``/proc/self/mountinfo`` for the index's
directory), where WAL's shared memory does not work across hosts, and wherever SQLite refuses WAL: there
it uses a rollback journal (``journal_mode=DELETE``; writers then also wait for readers). The
environment variable ``MTJ_INDEX_JOURNAL=wal`` or ``=delete`` overrides the detection
(``journal.py``). :attr:`TaskIndex.journal_mode` says which is in use.

The result cache matches calls on ``args_key``, an HMAC-SHA256 of the full canonical arguments under a
per-installation random key kept next to the index (``tasks.sqlite3.key``, mode 0600, made on first use;
``key.py``), so a short secret argument cannot be recovered from its digest by guessing. Schema
version 1 stored plain SHA-256 digests: opening such an index migrates it to version 2 and blanks them,
so calls recorded before no longer match the cache (their records stay). Removing the key file likewise
makes earlier results stop matching.
"""

from __future__ import annotations

import getpass
import hashlib
import hmac
import json
import logging
import os
import secrets
import socket
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from ..redact import redact_arguments, scrub_data, scrub_optional
from ..tasks.status import FINISHED as FINISHED_STATUSES
from . import closer, key as index_key, unwritten
from .author import Author, current_author
from .backend import IndexBackend
from .database import SCHEMA_VERSION, IndexDatabase
from .location import IndexLocation, parse_location
from .notebook_run import NotebookRun, notebook_run
from .view_record import StartedBy, ViewRecord
from .writes import WriteQueue, flush_kept_for, read_timeout_ms, running_loop

if TYPE_CHECKING:
    from ..errors import TaskLost
    from ..tasks.handle import TaskHandle

log = logging.getLogger(__name__)

#: How much of a tool error's text the record keeps as its ``error``.
MAX_ERROR_CHARS = 2000
#: Statuses after which a task never changes.
FINISHED = tuple(sorted(FINISHED_STATUSES))
#: Columns an update leaves as they are when given None.
_KEPT_WHEN_NONE = ("task_id", "created_at", "ttl_ms", "result", "finished_at", "questions", "error", "out_var")
_COLUMNS = (
    "id, server_name, target, tool, arguments, task_id, notebook, out_var, created_at, ttl_ms, status, "
    "status_message, result, transport, protocol, dialect, server_software, server_version, started_at, "
    "finished_at, questions, error, recorded_at, updated_at, server_status, username, hostname, pid, author, "
    "notebook_run, app_view, started_by"
)


@dataclass(frozen=True)
class ServerIdentity:
    """Which server a task ran on, as may be shown (never header or env values)."""

    name: str
    target: str
    transport: str | None = None
    protocol: str | None = None
    dialect: str | None = None
    #: The server's own name and version (``serverInfo``), as it reported them.
    software: str | None = None
    version: str | None = None


@dataclass(frozen=True)
class TaskRecord:
    """One row of the index. Times: ``created_at`` is the server's (ISO 8601); ``started_at``,
    ``finished_at``, ``recorded_at`` and ``updated_at`` this client's (epoch seconds). ``questions``:
    one mapping per question asked (``question``, ``source``: answers / handler / person / no handler,
    ``action``, ``content``: the values given, secret-looking ones redacted)."""

    id: int
    server_name: str
    target: str
    tool: str
    arguments: dict[str, Any]
    task_id: str | None
    notebook: str | None
    out_var: str | None
    created_at: str | None
    ttl_ms: int | None
    status: str
    status_message: str | None
    result: dict[str, Any] | None
    transport: str | None = None
    protocol: str | None = None
    dialect: str | None = None
    server_software: str | None = None
    server_version: str | None = None
    started_at: float | None = None
    finished_at: float | None = None
    questions: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    recorded_at: float | None = None
    updated_at: float | None = None
    #: The server's own last status (``status`` is the outcome: a tool error is ``error``, not ``completed``).
    server_status: str | None = None
    #: Who started the task: the user, the host and the process (a kernel) that recorded it.
    username: str | None = None
    hostname: str | None = None
    pid: int | None = None
    #: The person, when they named themselves (``index/author.py``): None leaves only ``username``.
    author: Author | None = None
    #: The headless run (papermill, nbconvert, nbclient) the task came from: its runner, and papermill's
    #: output notebook (``notebook`` is its input).
    notebook_run: NotebookRun | None = None
    #: The task's MCP Apps view: its resource URI and what it called (``index/view_record.py``).
    app_view: ViewRecord | None = None
    #: The view this task was started from (a ``tools/call`` of a view), and the record of that view's task.
    started_by: StartedBy | None = None


def file_path(location: str | os.PathLike[str]) -> Path:
    """The SQLite file an index location names; a URL of another scheme is a UsageError naming it (see
    ``location.py``), and so is a PostgreSQL URL here: it names no file."""
    parsed = parse_location(location)
    if parsed.path is None:
        from ..errors import UsageError

        raise UsageError(f"the task index {parsed.shown} is a PostgreSQL database, not a SQLite file")
    return parsed.path


def data_dir() -> Path:
    """This user's data directory of the package: ``$XDG_DATA_HOME/mcp-tasks-jupyter`` (``~/.local/share``)."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "mcp-tasks-jupyter"


def default_location() -> IndexLocation:
    """``$MTJ_INDEX`` (a path or a ``postgresql://`` URL), else ``data_dir()/tasks.sqlite3``."""
    configured = os.environ.get("MTJ_INDEX")
    return parse_location(configured if configured else data_dir() / "tasks.sqlite3")


def default_path() -> Path:
    """The SQLite file of :func:`default_location` (a UsageError when ``MTJ_INDEX`` is a URL)."""
    return file_path(os.environ.get("MTJ_INDEX") or data_dir() / "tasks.sqlite3")


def default_index() -> TaskIndex | None:
    """The index at :func:`default_location`, or None when ``MTJ_INDEX`` is ``off``."""
    if os.environ.get("MTJ_INDEX", "").lower() in ("off", "0", "false", "none"):
        return None
    return TaskIndex(default_location())


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: equal arguments give equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def given_order_json(value: Any) -> str:
    """JSON with no spaces, keys in the order given: what a record keeps of a call's arguments."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def arguments_key(arguments: dict[str, Any] | None, key: bytes) -> str:
    """What the result cache matches a call's arguments on: an HMAC-SHA256 of the full (unredacted)
    canonical arguments under the installation ``key`` (:attr:`TaskIndex.key`)."""
    return hmac.new(key, canonical_json(arguments or {}).encode(), hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Starter:
    """Who starts the tasks this process records: the user, the host and this process."""

    username: str | None
    hostname: str | None
    pid: int

    @classmethod
    def here(cls) -> Starter:
        try:
            username: str | None = getpass.getuser()
        except (KeyError, OSError):  # no name for this uid (a bare container)
            username = None
        return cls(username, socket.gethostname() or None, os.getpid())


_STARTER = Starter.here()


def notebook_path() -> str | None:
    """The notebook this process runs for, when Jupyter says (``JPY_SESSION_NAME``), or the notebook a
    headless run (papermill, nbconvert, nbclient) runs (``notebook_run.py``)."""
    run = notebook_run()
    return os.environ.get("JPY_SESSION_NAME") or (run.path if run is not None else None)


class TaskIndex:
    """The task index at ``location`` (default :func:`default_location`): a SQLite file's path, or a
    ``postgresql://`` URL (an :class:`IndexLocation` too); opened on first use."""

    def __init__(self, location: str | os.PathLike[str] | IndexLocation | None = None) -> None:
        if location is None:
            location = default_location()
        self.location = location if isinstance(location, IndexLocation) else parse_location(location)
        #: The SQLite file (None for a database on a server).
        self.path: Path | None = self.location.path
        self._database = _backend(self.location)
        # What a closing index could not write to its database (on a server) waits in a file of this user's.
        kept = unwritten.file_for(self.location.shown, data_dir()) if self._database.blocking else None
        self._writes = WriteQueue(self._database, kept)
        self._key: bytes | None = None
        self._last_recorded = 0.0
        self._said: set[str] = set()
        # Kept changes are written (or given up, logged) when the index is dropped or the process exits.
        # (on the closing thread: the collector may drop an index inside any code; see ``closer.py``)
        closer.ready()
        self._finalizer = weakref.finalize(self, closer.close_later, _close, self._writes, self._database)

    def __repr__(self) -> str:
        return f"TaskIndex({self.location.shown!r})"

    def describe(self) -> str:
        """Where the index is, as may be shown (a file's path; a URL without its password)."""
        return self.location.shown

    @property
    def database(self) -> IndexBackend:
        """The index's database (``backend.py``: SQLite or PostgreSQL)."""
        return self._database

    @property
    def backend(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.location.kind

    @property
    def journal_mode(self) -> str | None:
        """``wal`` or ``delete`` (a rollback journal) once a SQLite file is open; see the module docstring."""
        return getattr(self._database, "journal_mode", None)

    @property
    def key(self) -> bytes:
        """The key of the cache's argument digests (``key.py``): a SQLite file's installation key
        next to it (shared by whoever shares the file); for a database on a server the team's
        (``MTJ_INDEX_KEY`` or ``MTJ_INDEX_KEY_FILE``), else this user's own key in :func:`data_dir`
        (said once: others' records are then never hits); read or made on first use. Raises OSError or
        ValueError when it can neither be read nor made."""
        if self._key is None:
            if self.path is not None:
                self._key = index_key.installation_key(index_key.key_path(self.path))
                return self._key
            try:
                team = index_key.team_key()
                why = f"neither {index_key.KEY_ENV} nor {index_key.KEY_FILE_ENV} is set"
            except (OSError, ValueError) as exc:
                team, why = None, f"the team key cannot be used ({exc})"
            if team is not None:
                self._key = team
                return self._key
            own = data_dir() / "shared-index.key"
            self._key = index_key.installation_key(own)
            self._say_once(
                "no team key",
                f"the task index {self.describe()} is shared, but {why}: the result cache matches calls under "
                f"this user's own key ({own}), so other people's records are never cache hits",
            )
        return self._key

    def _say_once(self, what: str, message: str) -> None:
        if what not in self._said:
            self._said.add(what)
            log.warning("%s", message)

    def arguments_key(self, arguments: dict[str, Any] | None) -> str:
        """The cache's match key of ``arguments`` in this index (:func:`arguments_key` under :attr:`key`)."""
        return arguments_key(arguments, self.key)

    def check(self) -> None:
        """Open the index now (making or migrating its schema): raises ConnectionFailed naming the file,
        or the host and database, when it cannot be (a wrong password, a server away)."""
        from ..errors import ConnectionFailed

        try:
            self._database.connection(read_timeout_ms())
        except self._database.errors as exc:
            raise ConnectionFailed(
                f"the task index {self.describe()} cannot be opened: {self._database.describe_error(exc)}"
            ) from None

    def copy_from(self, source: TaskIndex) -> CopyCount:
        """Copy every record of ``source`` (a machine's SQLite file) into this index, each once (by its
        id; ``copy.py``), and its sweeps: (copied, already there), with ``.sweeps`` the sweeps copied. Raises
        ConnectionFailed naming either index when one cannot be read or written."""
        from ..errors import ConnectionFailed
        from .copy import copy_rows
        from .writes import BLOCKING_BUSY_TIMEOUT_MS

        source.flush()
        self.flush()
        try:
            return CopyCount(
                *copy_rows(
                    source.database,
                    self._database,
                    BLOCKING_BUSY_TIMEOUT_MS,
                    self.arguments_key,
                    source.key == self.key,
                    self.key,
                )
            )
        except (*source.database.errors, *self._database.errors) as exc:
            raise ConnectionFailed(
                f"the task index {source.describe()} could not be copied into {self.describe()}: "
                f"{self._database.describe_error(exc)}"
            ) from None

    def close(self) -> None:
        """Write the changes still kept (waiting up to 5 s for a busy or unreachable database; what is left
        is given up, logged) and close the database. The index opens again on its next use."""
        _close(self._writes, self._database)

    def flush(self) -> None:
        """Write what is kept now (the batch of a running loop; see ``writes.py``), unless the
        database is busy and a retry is scheduled. The connection's close calls it, so that no change
        waits for a loop that is about to stop."""
        self._writes.flush_unless_due()

    def pending(self) -> int:
        """How many rows have changes not written yet (kept while the database was busy or away)."""
        return len(self._writes)

    def _query(self, db: Any, sql: str, params: tuple[Any, ...]) -> list[TaskRecord]:
        rows = self._database.execute(db, f"SELECT {_COLUMNS} FROM tasks {sql}", params).fetchall()
        return [_record(r) for r in rows]

    def _rows(self, sql: str, params: tuple[Any, ...]) -> list[TaskRecord]:
        flush_kept_for(self.location)
        if self._writes.unreachable_since is not None and running_loop() is not None:
            # The loop never waits on a database known to be away: its writes are kept meanwhile.
            self._say_once("unreachable read", f"the task index {self.describe()} cannot be read while it is away")
            return []
        try:
            return self._query(self._database.connection(read_timeout_ms()), sql, params)
        except self._database.errors as exc:
            log.warning(
                "the task index %s could not be read: %s", self.describe(), self._database.describe_error(exc)
            )
            return []

    # -- recording -----------------------------------------------------------------------------

    def add(
        self,
        server: ServerIdentity,
        tool: str,
        arguments: dict[str, Any] | None,
        *,
        task_id: str | None = None,
        status: str = "working",
        status_message: str | None = None,
        created_at: str | None = None,
        ttl_ms: int | None = None,
        notebook: str | None = None,
        out_var: str | None = None,
        started_at: float | None = None,
    ) -> int | None:
        """Record a new task; its row id (also while the insert waits for a busy database), or None when
        it cannot be recorded (logged)."""
        try:
            key = self.arguments_key(arguments)
        except (OSError, ValueError) as exc:
            log.warning("the task index %s cannot record a task without its key: %s", self.describe(), exc)
            return None
        # A random id is final at once, whenever the insert happens; the time keeps the records' order.
        row = 1 + secrets.randbelow(2**63 - 1)
        now = self._last_recorded = max(time.time(), self._last_recorded + 1e-6)
        run = notebook_run()  # a headless run's notebook: ``notebook`` is its input when it is this one
        values = {
            "server_name": server.name,
            "target": server.target,
            "transport": server.transport,
            "protocol": server.protocol,
            "dialect": server.dialect,
            "server_software": server.software,
            "server_version": server.version,
            "tool": tool,
            # In the order given (the board's history and the exports show them so); the cache
            # matches on ``args_key``, the canonical form.
            "arguments": given_order_json(redact_arguments(arguments or {})),
            "args_key": key,
            "task_id": task_id,
            "notebook": notebook,
            "out_var": out_var,
            "created_at": created_at,
            "ttl_ms": ttl_ms,
            "status": status,
            "server_status": status,
            "status_message": status_message,
            "result": None,
            "username": _STARTER.username,
            "hostname": _STARTER.hostname,
            "pid": _STARTER.pid,
            "author": author.as_json() if (author := current_author()) is not None else None,
            "notebook_run": run.as_json() if run is not None and run.path == notebook else None,
            "recorded_at": now,
            "updated_at": now,
            "started_at": started_at if started_at is not None else now,
        }
        return row if self._writes.submit(row, insert=values) else None

    def update(
        self,
        row: int,
        *,
        task_id: str | None,
        status: str,
        status_message: str | None,
        server_status: str | None = None,
        created_at: str | None = None,
        ttl_ms: int | None = None,
        result: dict[str, Any] | None = None,
        finished_at: float | None = None,
        questions: list[dict[str, Any]] | None = None,
        error: str | None = None,
        out_var: str | None = None,
    ) -> None:
        """The task's latest state (and its raw result once fetched, its finish time, its questions, its
        error, the ``-o`` variable); None leaves the id, times, result, questions, error and variable as
        they are. The questions' values of secret-looking keys are redacted, and a secret registered in this
        process (``redact.py``) that the server echoes is scrubbed from the result, message and error. Never
        waits long on a running loop (see the module docstring)."""
        self._writes.submit(
            row,
            sets={
                "task_id": task_id,
                "status": status,
                "server_status": server_status or status,
                "status_message": scrub_optional(status_message),
                "created_at": created_at,
                "ttl_ms": ttl_ms,
                # a secret registered in this process (a header, a token) that the server echoes is not kept
                "result": canonical_json(scrub_data(result)) if result is not None else None,
                "finished_at": finished_at,
                "questions": canonical_json(redact_arguments(questions)) if questions else None,
                "error": scrub_optional(error),
                "out_var": out_var,
                "updated_at": time.time(),
            },
            keep=_KEPT_WHEN_NONE,
        )

    def note_view(
        self, row: int, *, app_view: ViewRecord | None = None, started_by: StartedBy | None = None
    ) -> None:
        """What row ``row``'s MCP Apps view called (``app_view``, the whole record each time: the latest
        wins), or the view that started its task (``started_by``); ``view_record.py`` says what is kept.
        Never waits long on a running loop, as :meth:`update`."""
        sets: dict[str, Any] = {}
        if app_view is not None:
            sets["app_view"] = scrub_optional(app_view.as_json())
        if started_by is not None:
            sets["started_by"] = scrub_optional(started_by.as_json())
        if sets:
            self._writes.submit(row, sets=sets)

    def mark(self, row: int, status: str, message: str) -> None:
        """End a record without its task (``lost``, ``expired``), saying why in plain words."""
        self._writes.submit(row, sets={"status": status, "status_message": message, "updated_at": time.time()})

    # -- reading -------------------------------------------------------------------------------

    def get(self, row: int) -> TaskRecord | None:
        rows = self._rows("WHERE id = ?", (row,))
        return rows[0] if rows else None

    def records(self, target: str | None = None) -> list[TaskRecord]:
        """Every record (on ``target``), oldest first."""
        if target is None:
            return self._rows("ORDER BY recorded_at, id", ())
        return self._rows("WHERE target = ? ORDER BY recorded_at, id", (target,))

    def unfinished(self, target: str, notebook: str | None) -> list[TaskRecord]:
        """The records of ``target`` started from ``notebook`` (None: from no known notebook) that
        have not ended, oldest first."""
        marks = ",".join("?" * len(FINISHED))
        same = "notebook IS NULL" if notebook is None else "notebook = ?"
        return self._rows(
            f"WHERE target = ? AND {same} AND status NOT IN ({marks}) ORDER BY recorded_at, id",
            (target, *((notebook,) if notebook is not None else ()), *FINISHED),
        )

    def cached(self, target: str, tool: str, arguments: dict[str, Any] | None) -> TaskRecord | None:
        """The newest completed record of the same call (server, tool, arguments) with a result."""
        try:
            key = self.arguments_key(arguments)
        except (OSError, ValueError) as exc:
            log.warning("the task index %s cannot look up the cache without its key: %s", self.describe(), exc)
            return None
        rows = self._rows(
            "WHERE target = ? AND tool = ? AND args_key = ? AND status = 'completed' "
            "AND result IS NOT NULL ORDER BY recorded_at DESC, id DESC LIMIT 1",
            (target, tool, key),
        )
        return rows[0] if rows else None

    def clear(self, target: str | None = None, *, finished_only: bool = True) -> list[TaskRecord]:
        """Remove the finished records (every record with ``finished_only=False``) of ``target`` (None:
        of every server); the records removed (none when the database stayed busy: logged)."""
        marks = ",".join("?" * len(FINISHED))
        conditions = ([f"status IN ({marks})"] if finished_only else []) + (["target = ?"] if target else [])
        where = "WHERE " + " AND ".join(conditions) if conditions else ""
        params = (*(FINISHED if finished_only else ()), *((target,) if target else ()))
        self._writes.flush_unless_due()
        try:
            db = self._database.connection(read_timeout_ms())
            with self._database.transaction(db):
                gone = self._query(db, where + " ORDER BY recorded_at, id", params)
                self._database.execute(db, f"DELETE FROM tasks {where}", params)
        except self._database.errors as exc:
            log.warning(
                "the task index %s could not be cleared: %s", self.describe(), self._database.describe_error(exc)
            )
            return []
        return gone


def _record(r: tuple[Any, ...]) -> TaskRecord:
    """A row of ``SELECT {_COLUMNS}`` as a record."""
    return TaskRecord(
        id=r[0],
        server_name=r[1],
        target=r[2],
        tool=r[3],
        arguments=json.loads(r[4]),
        task_id=r[5],
        notebook=r[6],
        out_var=r[7],
        created_at=r[8],
        ttl_ms=r[9],
        status=r[10],
        status_message=r[11],
        result=json.loads(r[12]) if r[12] else None,
        transport=r[13],
        protocol=r[14],
        dialect=r[15],
        server_software=r[16],
        server_version=r[17],
        started_at=r[18],
        finished_at=r[19],
        questions=json.loads(r[20]) if r[20] else [],
        error=r[21],
        recorded_at=r[22],
        updated_at=r[23],
        server_status=r[24],
        username=r[25],
        hostname=r[26],
        pid=r[27],
        author=Author.from_json(r[28]),
        notebook_run=NotebookRun.from_json(r[29]),
        app_view=ViewRecord.from_json(r[30]),
        started_by=StartedBy.from_json(r[31]),
    )


def _backend(location: IndexLocation) -> IndexBackend:
    """The database of ``location``: a SQLite file, or PostgreSQL (psycopg imported only then)."""
    if location.path is not None:
        return IndexDatabase(location.path)
    from .postgres import PostgresDatabase

    return PostgresDatabase(location)


def backend_for(location: IndexLocation) -> IndexBackend:
    """A database object of its own for ``location`` (its own connections: another thread's, ``sweeps.py``)."""
    return _backend(location)


def records_by_id(database: IndexBackend, db: Any, ids: list[int]) -> dict[int, TaskRecord]:
    """The records of ``ids`` that exist, read on ``db`` (any thread's connection of ``database``)."""
    found: dict[int, TaskRecord] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        for row in database.execute(db, f"SELECT {_COLUMNS} FROM tasks WHERE id IN ({marks})", chunk).fetchall():
            record = _record(row)
            found[record.id] = record
    return found


class CopyCount(tuple[int, int]):
    """What :meth:`TaskIndex.copy_from` copied: (records copied, records already there), and ``sweeps``, the
    sweeps copied with their items (a pair, as before sweeps were copied, so that it unpacks as one)."""

    sweeps: int

    def __new__(cls, copied: int, there: int, sweeps: int = 0) -> CopyCount:
        count = super().__new__(cls, (copied, there))
        count.sweeps = sweeps
        return count


def _close(writes: WriteQueue, database: IndexBackend) -> None:
    try:
        writes.close()
    finally:
        try:
            database.close()
        except database.errors as exc:  # e.g. dropped by the garbage collector on another thread
            log.debug("the task index %s could not be closed: %s", database.location.shown, exc)


class Recorder:
    """Keeps one handle's row current: writes on a change of status, message or id, and at the end
    (never per progress tick or log line). One per recorded handle, for its life: slots, not a ``__dict__``."""

    __slots__ = ("_last", "_server_status", "index", "row")

    def __init__(self, index: TaskIndex, row: int) -> None:
        self.index = index
        self.row = row
        self._last: tuple[Any, ...] | None = None
        self._server_status = "working"

    def __call__(self, handle: TaskHandle) -> None:
        done = handle.done()
        asked = len(handle.questions)
        state = (handle.task_id, handle.status, handle.status_message, handle.ttl_ms, done, asked, handle.out_var)
        if state == self._last:
            return
        self._last = state
        status, message, result, failure, finished = handle.status, handle.status_message, None, None, None
        server_status = handle.server_status
        if done:
            error = handle.exception()
            finished = handle.finished
            if error is None:
                outcome = handle.result()
                result = outcome.raw
                # status is the outcome: a tool error is recorded as one, never as completed
                if outcome.is_error:
                    failure = f"tool error: {outcome.text[:MAX_ERROR_CHARS]}".rstrip(": ")
            elif _connection_lost(error) and handle.task_id is not None:
                # Only this side let go (a closed or broken connection, a kernel exit): the task
                # may still run there, so the record stays unfinished for ``resume`` to ask.
                status = server_status = self._server_status
                message = f"this client lost the connection ({error.detail}); resume to ask the server"
                finished = None
            else:
                status, message = ended_status(handle, error)
                failure = f"{type(error).__name__}: {message or ''}".rstrip(": ")
                server_status = self._server_status
        else:
            self._server_status = server_status
        self.index.update(
            self.row,
            task_id=handle.task_id,
            status=status,
            server_status=server_status,
            status_message=message,
            created_at=handle.created_at,
            ttl_ms=handle.ttl_ms,
            result=result,
            finished_at=finished,
            questions=list(handle.questions) if asked else None,
            error=failure,
            out_var=handle.out_var,
        )


def _connection_lost(error: BaseException) -> TypeGuard[TaskLost]:
    from ..errors import TaskLost

    return isinstance(error, TaskLost)


def ended_status(handle: TaskHandle, error: BaseException) -> tuple[str, str | None]:
    """How a record of a task that ended with ``error`` reads: (status, message in plain words; the
    handle's, which says how a lost task was lost: ``tasks/status.lost_words``)."""
    from ..errors import MCPError

    detail = error.detail if isinstance(error, MCPError) else str(error)
    return handle.server_status, handle.status_message or detail


__all__ = [
    "SCHEMA_VERSION",
    "Recorder",
    "ServerIdentity",
    "TaskIndex",
    "TaskRecord",
    "arguments_key",
    "canonical_json",
    "default_index",
    "default_path",
    "notebook_path",
    "redact_arguments",
]
