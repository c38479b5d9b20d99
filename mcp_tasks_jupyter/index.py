"""The task index: a small local SQLite record of every task a client started (pure stdlib).

One row per task: the server's identity (connection name, URL or command as shown, protocol,
dialect — never header or env values), the tool, its arguments (values of secret-looking keys
redacted), the task id, the notebook (``JPY_SESSION_NAME``) when known, the ``-o`` variable, the
created time and ttl, the last status and message, and the raw result once fetched.

It lets a notebook resume its unfinished tasks after a kernel restart (``client.resume()``) and
reuse the result of an identical earlier call (``start_task(..., cache=True)``).

Where it lives: the ``path`` given, else ``$MTJ_INDEX``, else
``$XDG_DATA_HOME/mcp-tasks-jupyter/tasks.sqlite3`` (``~/.local/share/...``). ``MTJ_INDEX=off``
turns it off for the notebook runtime. Writes are transactions on a WAL database with a busy
timeout, so several kernels can write at once. A failing write is logged, never raised: the index
must not break a task.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .tasks import TaskHandle

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 5000
REDACTED = "<redacted>"
#: Argument keys whose values are never written (any part of the key, any case).
SECRET_KEY = re.compile(r"token|key|secret|password|passwd|authorization|credential", re.IGNORECASE)
#: Statuses after which a task never changes.
FINISHED = ("completed", "failed", "cancelled", "expired", "lost")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    id INTEGER PRIMARY KEY,
    server_name TEXT NOT NULL,
    target TEXT NOT NULL,
    transport TEXT,
    protocol TEXT,
    dialect TEXT,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    args_key TEXT NOT NULL,
    task_id TEXT,
    notebook TEXT,
    out_var TEXT,
    created_at TEXT,
    ttl_ms INTEGER,
    status TEXT NOT NULL,
    status_message TEXT,
    result TEXT,
    recorded_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS tasks_by_call ON tasks (target, tool, args_key);
CREATE INDEX IF NOT EXISTS tasks_by_notebook ON tasks (target, notebook, status);
"""


@dataclass(frozen=True)
class ServerIdentity:
    """Which server a task ran on, as may be shown (never header or env values)."""

    name: str
    target: str
    transport: str | None = None
    protocol: str | None = None
    dialect: str | None = None


@dataclass(frozen=True)
class TaskRecord:
    """One row of the index."""

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


def default_path() -> Path:
    """``$MTJ_INDEX``, else ``$XDG_DATA_HOME/mcp-tasks-jupyter/tasks.sqlite3`` (``~/.local/share``)."""
    configured = os.environ.get("MTJ_INDEX")
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "mcp-tasks-jupyter" / "tasks.sqlite3"


def default_index() -> "TaskIndex | None":
    """The index at :func:`default_path`, or None when ``MTJ_INDEX`` is ``off``."""
    if os.environ.get("MTJ_INDEX", "").lower() in ("off", "0", "false", "none"):
        return None
    return TaskIndex(default_path())


def redact_arguments(value: Any) -> Any:
    """``value`` with the values of secret-looking keys (token, key, password, ...) replaced, at any depth."""
    if isinstance(value, dict):
        return {k: REDACTED if isinstance(k, str) and SECRET_KEY.search(k) else redact_arguments(v)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_arguments(v) for v in value]
    return value


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: equal arguments give equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def arguments_key(arguments: dict[str, Any] | None) -> str:
    """A digest of the full (unredacted) canonical arguments: what the result cache matches on."""
    return hashlib.sha256(canonical_json(arguments or {}).encode()).hexdigest()


def notebook_path() -> str | None:
    """The notebook this process runs for, when Jupyter says (``JPY_SESSION_NAME``)."""
    return os.environ.get("JPY_SESSION_NAME") or None


class TaskIndex:
    """The SQLite task index at ``path`` (default :func:`default_path`), opened on first use."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()
        self._db: sqlite3.Connection | None = None

    def __repr__(self) -> str:
        return f"TaskIndex({str(self.path)!r})"

    # -- the database --------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            with _transaction(db):
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        db.execute(statement)
                if db.execute("PRAGMA user_version").fetchone()[0] == 0:
                    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            self._db = db
        return self._db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def _write(self, sql: str, params: tuple[Any, ...]) -> int | None:
        """Run one write in its own transaction; the row id (None if the write failed: logged)."""
        try:
            db = self._connect()
            with _transaction(db):
                cursor = db.execute(sql, params)
            return cursor.lastrowid
        except sqlite3.Error as exc:
            log.warning("the task index %s could not be written: %s", self.path, exc)
            return None

    def _rows(self, sql: str, params: tuple[Any, ...]) -> list[TaskRecord]:
        try:
            db = self._connect()
            rows = db.execute(f"SELECT id, server_name, target, tool, arguments, task_id, notebook, out_var, "
                              f"created_at, ttl_ms, status, status_message, result FROM tasks {sql}",
                              params).fetchall()
        except sqlite3.Error as exc:
            log.warning("the task index %s could not be read: %s", self.path, exc)
            return []
        return [TaskRecord(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], r[6], r[7], r[8], r[9], r[10],
                           r[11], json.loads(r[12]) if r[12] else None) for r in rows]

    # -- recording -----------------------------------------------------------------------------

    def add(self, server: ServerIdentity, tool: str, arguments: dict[str, Any] | None, *,
            task_id: str | None = None, status: str = "working", status_message: str | None = None,
            created_at: str | None = None, ttl_ms: int | None = None,
            notebook: str | None = None, out_var: str | None = None) -> int | None:
        """Record a new task; its row id."""
        now = time.time()
        return self._write(
            "INSERT INTO tasks (server_name, target, transport, protocol, dialect, tool, arguments, args_key, "
            "task_id, notebook, out_var, created_at, ttl_ms, status, status_message, recorded_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (server.name, server.target, server.transport, server.protocol, server.dialect, tool,
             canonical_json(redact_arguments(arguments or {})), arguments_key(arguments), task_id, notebook,
             out_var, created_at, ttl_ms, status, status_message, now, now))

    def update(self, row: int, *, task_id: str | None, status: str, status_message: str | None,
               created_at: str | None = None, ttl_ms: int | None = None,
               result: dict[str, Any] | None = None) -> None:
        """The task's latest state (and its raw result once fetched)."""
        self._write("UPDATE tasks SET task_id = COALESCE(?, task_id), status = ?, status_message = ?, "
                    "created_at = COALESCE(?, created_at), ttl_ms = COALESCE(?, ttl_ms), "
                    "result = COALESCE(?, result), updated_at = ? WHERE id = ?",
                    (task_id, status, status_message, created_at, ttl_ms,
                     canonical_json(result) if result is not None else None, time.time(), row))

    def set_out(self, row: int, var: str | None) -> None:
        """The variable (``-o VAR``) that receives the task's result."""
        self._write("UPDATE tasks SET out_var = ?, updated_at = ? WHERE id = ?", (var, time.time(), row))

    def mark(self, row: int, status: str, message: str) -> None:
        """End a record without its task (``lost``, ``expired``), saying why in plain words."""
        self._write("UPDATE tasks SET status = ?, status_message = ?, updated_at = ? WHERE id = ?",
                    (status, message, time.time(), row))

    # -- reading -------------------------------------------------------------------------------

    def get(self, row: int) -> TaskRecord | None:
        rows = self._rows("WHERE id = ?", (row,))
        return rows[0] if rows else None

    def records(self, target: str | None = None) -> list[TaskRecord]:
        """Every record (on ``target``), oldest first."""
        if target is None:
            return self._rows("ORDER BY id", ())
        return self._rows("WHERE target = ? ORDER BY id", (target,))

    def unfinished(self, target: str, notebook: str | None) -> list[TaskRecord]:
        """The records of ``target`` started from ``notebook`` (None: from no known notebook) that
        have not ended, oldest first."""
        marks = ",".join("?" * len(FINISHED))
        return self._rows(f"WHERE target = ? AND notebook IS ? AND status NOT IN ({marks}) ORDER BY id",
                          (target, notebook, *FINISHED))

    def cached(self, target: str, tool: str, arguments: dict[str, Any] | None) -> TaskRecord | None:
        """The newest completed record of the same call (server, tool, arguments) with a result."""
        rows = self._rows("WHERE target = ? AND tool = ? AND args_key = ? AND status = 'completed' "
                          "AND result IS NOT NULL ORDER BY id DESC LIMIT 1",
                          (target, tool, arguments_key(arguments)))
        return rows[0] if rows else None

    def clear(self, target: str | None = None) -> list[TaskRecord]:
        """Remove the finished records (of ``target``); the records removed."""
        marks = ",".join("?" * len(FINISHED))
        where = f"WHERE status IN ({marks})" + (" AND target = ?" if target is not None else "")
        params = (*FINISHED, *((target,) if target is not None else ()))
        gone = self._rows(where, params)
        self._write(f"DELETE FROM tasks {where}", params)
        return gone


class _transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on error) on an autocommit connection."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: Any, *_: Any) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")


class Recorder:
    """Keeps one handle's row current: writes on a change of status, message or id, and at the end
    (never per progress tick or log line)."""

    def __init__(self, index: TaskIndex, row: int) -> None:
        self.index = index
        self.row = row
        self._last: tuple[Any, ...] | None = None
        self._server_status = "working"

    def __call__(self, handle: "TaskHandle") -> None:
        done = handle.done()
        state = (handle.task_id, handle.status, handle.status_message, handle.ttl_ms, done)
        if state == self._last:
            return
        self._last = state
        status, message, result = handle.status, handle.status_message, None
        if done:
            error = handle.exception()
            if error is None:
                result = handle.result().raw
            elif _connection_lost(error) and handle.task_id is not None:
                # Only this side let go (a closed or broken connection, a kernel exit): the task
                # may still run there, so the record stays unfinished for ``resume`` to ask.
                status = self._server_status
                message = f"this client lost the connection ({error.detail}); resume to ask the server"
            else:
                status, message = ended_status(handle, error)
        else:
            self._server_status = status
        self.index.update(self.row, task_id=handle.task_id, status=status, status_message=message,
                          created_at=handle.created_at, ttl_ms=handle.ttl_ms, result=result)


def _connection_lost(error: BaseException) -> bool:
    from .errors import TaskLost

    return isinstance(error, TaskLost)


def ended_status(handle: "TaskHandle", error: BaseException) -> tuple[str, str | None]:
    """How a record of a task that ended with ``error`` reads: (status, message in plain words)."""
    from .errors import MCPError, TaskExpired, TaskNotFound

    detail = error.detail if isinstance(error, MCPError) else str(error)
    if isinstance(error, TaskExpired):
        return "expired", f"the server dropped the task when its ttl ran out ({detail})"
    if isinstance(error, TaskNotFound):
        return "lost", f"the server no longer knows this task ({detail})"
    return handle.status, detail or handle.status_message


__all__ = ["TaskIndex", "TaskRecord", "ServerIdentity", "Recorder", "default_index", "default_path",
           "redact_arguments", "canonical_json", "arguments_key", "notebook_path"]
