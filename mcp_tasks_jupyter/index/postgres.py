"""The task index on a team's PostgreSQL database (``MTJ_INDEX=postgresql://user:password@host/db``).

The PostgreSQL backend of the one index interface (``backend.py``), on psycopg 3: its synchronous API
fits the index's (recording runs in handle callbacks, reads in cells and in the ``mcp-tasks`` command,
none of which may start an event loop of their own), and ``writes.py`` runs every batched write on one
thread of its own, so that the kernel's loop never waits on the network.

Connections: one per thread that uses the index (at most two in a kernel: the writer's thread and the
loop's, which reads), made on first use with libpq's ``connect_timeout`` and TCP keepalives plus
``tcp_user_timeout`` (a vanished server fails a statement within seconds instead of hanging it). A
connection the server dropped (a restart) is made again on the next use.

Schema: the table ``tasks`` as in SQLite (the same columns and meaning, :data:`database.SCHEMA_VERSION`),
with PostgreSQL's types; the version lives in the one-row table ``mtj_schema``. Opening migrates an
older schema in one transaction under an advisory lock (so that many kernels opening a new database at
once make it once): the columns later versions added (version 7's view columns, version 8's
``sweep_items.came_back``), version 4's outcomes re-derived (``database.outcomes_from_results``), and
version 6's sweep tables (``database.SWEEP_TABLES``). A newer version is left as it is.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

import psycopg
from psycopg import sql as pgsql
from psycopg.conninfo import conninfo_to_dict

from ..redact import scrub
from .database import (
    ADDED_IN_3,
    ADDED_IN_4,
    ADDED_IN_5,
    ADDED_IN_7,
    ADDED_TO_ITEMS_IN_8,
    COLUMNS,
    SCHEMA_VERSION,
    outcomes_from_results,
    sweep_schema,
)
from .location import IndexLocation

log = logging.getLogger(__name__)

#: The advisory lock key a migration holds (any constant; "mtj" in ASCII).
MIGRATION_LOCK = 0x6D746A
#: libpq's connect_timeout is in whole seconds, at least 2.
MIN_CONNECT_TIMEOUT_S = 2
#: How long an unanswered statement may keep a connection before it is taken as broken (ms).
TCP_USER_TIMEOUT_MS = 10_000
#: Connection settings added unless the URL gives its own.
CONNECT_DEFAULTS = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
    "tcp_user_timeout": TCP_USER_TIMEOUT_MS,
    "application_name": "mcp-tasks-jupyter",
}
#: A connection idle longer than this is checked (one empty statement) before it is used: a server restarted
#: meanwhile closed it, and the first statement would fail.
CHECK_IDLE_S = 1.0
#: SQL types of the columns the shared history names in SQLite's words.
TYPES = {"TEXT": "TEXT", "REAL": "DOUBLE PRECISION", "INTEGER": "BIGINT"}
#: SQLSTATEs of a refused sign-in (a wrong password, an unknown user): never worth retrying.
AUTH_STATES = ("28P01", "28000")


def postgres_declared(declared: str) -> str:
    """A column's SQLite declaration in PostgreSQL's types (``TYPES``; 63-bit ids and counts are BIGINT)."""
    kind, _, rest = declared.partition(" ")
    return " ".join(filter(None, (TYPES[kind], rest)))


SCHEMA = (
    "\nCREATE TABLE IF NOT EXISTS tasks (\n"
    + ",\n".join(f"    {name} {postgres_declared(declared)}" for name, declared in COLUMNS)
    + "\n);\n"
    "CREATE INDEX IF NOT EXISTS tasks_by_call ON tasks (target, tool, args_key);\n"
    "CREATE INDEX IF NOT EXISTS tasks_by_notebook ON tasks (target, notebook, status);\n"
    "CREATE TABLE IF NOT EXISTS mtj_schema (version INTEGER NOT NULL);\n" + sweep_schema(postgres_declared)
)


def conninfo_params(url: str) -> dict[str, Any]:
    """libpq's reading of ``url`` (psycopg.ProgrammingError when it refuses it)."""
    return dict(conninfo_to_dict(url))


def is_refused(exc: BaseException) -> bool:
    """Whether ``exc`` is a refused sign-in (a wrong password or user)."""
    if not isinstance(exc, psycopg.Error):
        return False
    if exc.sqlstate in AUTH_STATES:
        return True
    text = str(exc).lower()
    return (
        "password authentication failed" in text
        or "no password supplied" in text
        or "authentication failed" in text
    )


class PostgresDatabase:
    """The task index in the PostgreSQL database ``location`` names (see the module docstring)."""

    blocking = True
    gives_up = False
    errors: tuple[type[BaseException], ...] = (psycopg.Error, OSError)

    def __init__(self, location: IndexLocation) -> None:
        assert location.kind == "postgresql" and location.url is not None
        self.location = location
        self.journal_mode: str | None = None
        self._url = location.url
        self._lock = threading.Lock()
        self._connections: dict[int, psycopg.Connection[Any]] = {}
        self._used: dict[int, float] = {}
        self._migrated = False

    def __repr__(self) -> str:
        return f"PostgresDatabase({self.location.shown!r})"

    def connection(self, timeout_ms: int) -> psycopg.Connection[Any]:
        me = threading.get_ident()
        with self._lock:
            db = self._connections.get(me)
            used = self._used.get(me, 0.0)
        if db is not None and not (db.closed or db.broken) and self._alive(db, used):
            self._used[me] = time.monotonic()
            return db
        if db is not None:
            self._forget(me, db)
        timeout_s = max(MIN_CONNECT_TIMEOUT_S, -(-timeout_ms // 1000))
        db = psycopg.connect(self._url, autocommit=True, connect_timeout=timeout_s, **self._defaults())
        try:
            if not self._migrated:
                migrate(db)
                self._migrated = True
        except BaseException:
            db.close()
            raise
        with self._lock:
            self._connections[me] = db
            self._used[me] = time.monotonic()
        return db

    @staticmethod
    def _alive(db: psycopg.Connection[Any], used: float) -> bool:
        """Whether a connection idle since ``used`` still works (checked only after :data:`CHECK_IDLE_S`)."""
        if time.monotonic() - used < CHECK_IDLE_S:
            return True
        try:
            db.execute("")
        except psycopg.Error:
            return False
        return True

    def _defaults(self) -> dict[str, Any]:
        given = conninfo_to_dict(self._url)
        return {key: value for key, value in CONNECT_DEFAULTS.items() if key not in given}

    def _forget(self, thread: int, db: psycopg.Connection[Any]) -> None:
        with self._lock:
            if self._connections.get(thread) is db:
                del self._connections[thread]
                self._used.pop(thread, None)
        try:
            db.close()
        except psycopg.Error:
            pass

    def transaction(self, db: psycopg.Connection[Any]) -> AbstractContextManager[Any]:
        return db.transaction()

    def execute(self, db: psycopg.Connection[Any], sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor[Any]:
        try:
            return db.execute(placeholders(sql), tuple(params))
        except psycopg.OperationalError:
            if db.broken or db.closed:
                self._forget(threading.get_ident(), db)
            raise

    def is_transient(self, exc: BaseException) -> bool:
        if is_refused(exc):
            return False
        return isinstance(exc, (psycopg.OperationalError, psycopg.errors.TransactionRollback, OSError))

    def describe_error(self, exc: BaseException) -> str:
        """``exc`` naming the host and database (psycopg's words never hold the password; scrubbed anyway)."""
        location = self.location
        text = " ".join(str(exc).split())
        if is_refused(exc):
            return scrub(
                f"the PostgreSQL server at {location.host} refused the sign-in to the database "
                f"{location.database} ({text}): check the user and password of MTJ_INDEX"
            )
        return scrub(f"the database {location.database} at {location.host}: {text}")

    def close(self) -> None:
        with self._lock:
            connections, self._connections = list(self._connections.values()), {}
        for db in connections:
            try:
                db.close()
            except psycopg.Error as exc:
                log.debug("the task index %s: closing a connection failed: %s", self.location.shown, exc)


def placeholders(sql: str) -> pgsql.SQL:
    """``sql`` with the shared ``?`` placeholders as psycopg's ``%s`` (the index's SQL has no ``%`` of its own)."""
    assert "%" not in sql, sql
    return pgsql.SQL(sql.replace("?", "%s"))  # our own SQL, values go as parameters


def migrate(db: psycopg.Connection[Any]) -> None:
    """Create the schema, or bring an older one to :data:`SCHEMA_VERSION` (a newer one is left as it is)."""

    def run(sql: str, params: Sequence[Any] = ()) -> list[Any]:
        cursor = db.execute(placeholders(sql), tuple(params))
        return cursor.fetchall() if cursor.description else []

    with db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        for statement in SCHEMA.split(";"):
            if statement.strip():
                db.execute(pgsql.SQL(statement))  # our own DDL
        rows = run("SELECT version FROM mtj_schema")
        version = int(rows[0][0]) if rows else 0
        if version >= SCHEMA_VERSION:
            return
        for column, kind in (*ADDED_IN_3, *ADDED_IN_4, *ADDED_IN_5, *ADDED_IN_7):
            run(f"ALTER TABLE tasks ADD COLUMN IF NOT EXISTS {column} {TYPES[kind]}")
        for column, kind in ADDED_TO_ITEMS_IN_8:
            run(f"ALTER TABLE sweep_items ADD COLUMN IF NOT EXISTS {column} {TYPES[kind]}")
        if 0 < version < 4:
            outcomes_from_results(run)
        if rows:
            run("UPDATE mtj_schema SET version = ?", (SCHEMA_VERSION,))
        else:
            run("INSERT INTO mtj_schema (version) VALUES (?)", (SCHEMA_VERSION,))
