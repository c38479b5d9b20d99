"""The task index's SQLite file: opening it (journal mode, schema, migrations) with a busy timeout per use.

:class:`IndexDatabase` is the SQLite backend of the one index interface (``backend.py``); ``postgres.py``
is the other. The schema's history (:data:`SCHEMA_VERSION`, the columns each version added, how version 4
re-derived old rows' outcomes) is told here once and followed by both.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from ..tasks.status import tool_error_outcome
from . import journal as index_journal
from .location import IndexLocation

log = logging.getLogger(__name__)

#: 1: the first schema. 2: ``args_key`` is an HMAC under the installation key (key.py); the plain
#: SHA-256 digests of version 1 are blanked, so those rows no longer match the cache. 3: provenance
#: (the server's software and version, start and finish times, the questions and their answers, the
#: error): added as empty columns to older rows. 4: ``status`` is the task's outcome as this client
#: saw it (a tool error is ``error``, or ``declined`` when a question was declined, never ``completed``;
#: see ``tasks/status.py``) and ``server_status`` the server's own last word; who started the task
#: (``username``, ``hostname``, ``pid``). Older rows are re-derived from their stored result. 5: the person
#: (``author``: JSON text with ``name`` and, when given, ``orcid`` and ``affiliation``; ``index/author.py``),
#: empty for older rows and wherever nobody named themselves (the login name stays the only word on who);
#: the headless run a task came from (``notebook_run``: JSON text with ``runner``, ``input`` and papermill's
#: ``output``; ``index/notebook_run.py``).
#: 6: sweeps (``client.map`` / ``%mcp_map`` batches, ``sweeps.py``) and their items, so that a sweep
#: outlives its kernel: the tables :data:`SWEEP_TABLES`, made by the schema (``CREATE ... IF NOT EXISTS``)
#: beside ``tasks``, which they leave as it is.
#: 7: MCP Apps views (``view_record.py``): ``app_view`` (JSON text: the view's resource URI and what it
#: called, bounded, arguments redacted) on a task that drew one, ``started_by`` (JSON text: the view, its
#: tool and the record of its task) on a task a view started; empty for older rows.
#: 8: how each item of a resumed sweep came back (``sweep_items.came_back``, :data:`ADDED_TO_ITEMS_IN_8`: one
#: of ``sweeps.CAME_BACK``, as its latest resume found it; empty for an item never resumed).
SCHEMA_VERSION = 8

#: Every column of the ``tasks`` table, ``id`` first, as SQLite declares it (``postgres.py`` maps the types;
#: ``copy.py`` copies them all).
COLUMNS = (
    ("id", "INTEGER PRIMARY KEY"),
    ("server_name", "TEXT NOT NULL"),
    ("target", "TEXT NOT NULL"),
    ("transport", "TEXT"),
    ("protocol", "TEXT"),
    ("dialect", "TEXT"),
    ("tool", "TEXT NOT NULL"),
    ("arguments", "TEXT NOT NULL"),
    ("args_key", "TEXT NOT NULL"),
    ("task_id", "TEXT"),
    ("notebook", "TEXT"),
    ("out_var", "TEXT"),
    ("created_at", "TEXT"),
    ("ttl_ms", "INTEGER"),
    ("status", "TEXT NOT NULL"),
    ("status_message", "TEXT"),
    ("result", "TEXT"),
    ("recorded_at", "REAL NOT NULL"),
    ("updated_at", "REAL NOT NULL"),
    ("server_software", "TEXT"),
    ("server_version", "TEXT"),
    ("started_at", "REAL"),
    ("finished_at", "REAL"),
    ("questions", "TEXT"),
    ("error", "TEXT"),
    ("server_status", "TEXT"),
    ("username", "TEXT"),
    ("hostname", "TEXT"),
    ("pid", "INTEGER"),
    ("author", "TEXT"),
    ("notebook_run", "TEXT"),
    ("app_view", "TEXT"),
    ("started_by", "TEXT"),
)

#: The columns version 3 added, with their types (ALTER TABLE adds them to an older table).
ADDED_IN_3 = tuple(
    column
    for column in COLUMNS
    if column[0] in ("server_software", "server_version", "started_at", "finished_at", "questions", "error")
)
#: The columns version 4 added.
ADDED_IN_4 = tuple(column for column in COLUMNS if column[0] in ("server_status", "username", "hostname", "pid"))
#: The columns version 5 added.
ADDED_IN_5 = tuple(column for column in COLUMNS if column[0] in ("author", "notebook_run"))
#: The columns version 7 added.
ADDED_IN_7 = tuple(column for column in COLUMNS if column[0] in ("app_view", "started_by"))

#: Version 6: a sweep (one row), its items (one row each, in order, with the state each is in and which
#: runner may send it: ``sweeps.py`` says how they are written and claimed) and the runners that hold items
#: (seen recently: alive). Each table: (name, columns as SQLite declares them, its primary key).
SWEEP_TABLES: tuple[tuple[str, tuple[tuple[str, str], ...], str], ...] = (
    (
        "sweeps",
        (
            ("id", "TEXT NOT NULL"),
            ("server_name", "TEXT NOT NULL"),
            ("target", "TEXT NOT NULL"),
            ("tool", "TEXT NOT NULL"),
            ("items_key", "TEXT NOT NULL"),
            ("total", "INTEGER NOT NULL"),
            ("item_limit", "INTEGER NOT NULL"),
            ("ttl_ms", "INTEGER"),
            ("notebook", "TEXT"),
            ("out_var", "TEXT"),
            ("created_at", "REAL NOT NULL"),
            ("updated_at", "REAL NOT NULL"),
            ("finished_at", "REAL"),
            ("username", "TEXT"),
            ("hostname", "TEXT"),
            ("pid", "INTEGER"),
        ),
        "id",
    ),
    (
        "sweep_items",
        (
            ("sweep", "TEXT NOT NULL"),
            ("position", "INTEGER NOT NULL"),
            ("arguments", "TEXT NOT NULL"),
            ("args_key", "TEXT NOT NULL"),
            ("state", "TEXT NOT NULL"),
            ("owner", "TEXT"),
            ("sends", "INTEGER NOT NULL"),
            ("task_id", "TEXT"),
            ("record", "INTEGER"),
            ("status", "TEXT"),
            ("note", "TEXT"),
            ("updated_at", "REAL NOT NULL"),
            ("came_back", "TEXT"),
        ),
        "sweep, position",
    ),
    (
        "sweep_owners",
        (
            ("owner", "TEXT NOT NULL"),
            ("sweep", "TEXT NOT NULL"),
            ("hostname", "TEXT"),
            ("pid", "INTEGER"),
            ("seen_at", "REAL NOT NULL"),
        ),
        "owner",
    ),
)


#: The columns of ``sweep_items`` version 8 added (ALTER TABLE adds them to a version 6 or 7 table).
ADDED_TO_ITEMS_IN_8 = tuple(column for column in SWEEP_TABLES[1][1] if column[0] == "came_back")


def sweep_schema(declared: Callable[[str], str] = str) -> str:
    """The DDL of :data:`SWEEP_TABLES` (``declared`` turns SQLite's column declarations into a backend's)."""
    tables = "".join(
        f"CREATE TABLE IF NOT EXISTS {name} (\n"
        + ",\n".join(f"    {column} {declared(kind)}" for column, kind in columns)
        + f",\n    PRIMARY KEY ({key})\n);\n"
        for name, columns, key in SWEEP_TABLES
    )
    return tables + (
        "CREATE INDEX IF NOT EXISTS sweeps_by_call ON sweeps (target, tool, items_key);\n"
        "CREATE INDEX IF NOT EXISTS sweep_items_by_state ON sweep_items (sweep, state, owner);\n"
    )


SCHEMA = (
    "CREATE TABLE IF NOT EXISTS tasks (\n"
    + ",\n".join(f"    {name} {declared}" for name, declared in COLUMNS)
    + "\n);\n"
    "CREATE INDEX IF NOT EXISTS tasks_by_call ON tasks (target, tool, args_key);\n"
    "CREATE INDEX IF NOT EXISTS tasks_by_notebook ON tasks (target, notebook, status);\n" + sweep_schema()
)


def is_busy(exc: BaseException) -> bool:
    """Whether ``exc`` says another connection holds a lock (SQLITE_BUSY or SQLITE_LOCKED): worth retrying."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (5, 6)
    text = str(exc).lower()
    return "locked" in text or "busy" in text


class IndexDatabase:
    """One connection to the index file at ``path``, opened on first use; each use says how long it may
    wait for another connection's lock (``timeout_ms``). The SQLite backend (``backend.py``)."""

    blocking = False
    gives_up = True
    errors: tuple[type[BaseException], ...] = (sqlite3.Error, OSError)

    def __init__(self, path: Path) -> None:
        self.path = path
        self.location = IndexLocation("sqlite", str(path), path=path)
        #: ``wal`` or ``delete`` once open (journal.py says which and why).
        self.journal_mode: str | None = None
        self._db: sqlite3.Connection | None = None
        self._timeout_ms = -1

    def connection(self, timeout_ms: int) -> sqlite3.Connection:
        """The open connection, waiting at most ``timeout_ms`` per lock. Raises sqlite3.Error (see
        :func:`is_busy`) or OSError (the directory cannot be made)."""
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=timeout_ms / 1000, isolation_level=None)
            try:
                self.journal_mode = set_journal(db, index_journal.wanted_journal(self.path.parent))
                # WAL is safe with NORMAL; a rollback journal needs FULL not to corrupt on power loss.
                db.execute(f"PRAGMA synchronous = {'NORMAL' if self.journal_mode == 'wal' else 'FULL'}")
                migrate(db)
            except BaseException:
                db.close()
                raise
            self._db, self._timeout_ms = db, timeout_ms
        elif timeout_ms != self._timeout_ms:
            self._db.execute(f"PRAGMA busy_timeout = {int(timeout_ms)}")
            self._timeout_ms = timeout_ms
        return self._db

    def transaction(self, db: sqlite3.Connection) -> AbstractContextManager[None]:
        return transaction(db)

    def execute(self, db: sqlite3.Connection, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        return db.execute(sql, params)

    def is_transient(self, exc: BaseException) -> bool:
        return is_busy(exc)

    def describe_error(self, exc: BaseException) -> str:
        return str(exc)

    def close(self) -> None:
        if self._db is not None:
            db, self._db = self._db, None
            db.close()


def set_journal(db: sqlite3.Connection, wanted: str) -> str:
    """Switch ``db`` to the ``wanted`` journal mode where it can; the mode it then has (lower case).

    WAL falls back to DELETE when SQLite answers with another mode or refuses it (a VFS without shared
    memory). A switch that meets a busy database keeps the file's present mode (the mode belongs to the
    file, so every process uses the same one): a later connection tries again.
    """

    def current() -> str:
        return str(db.execute("PRAGMA journal_mode").fetchone()[0]).lower()

    try:
        answer = str(db.execute(f"PRAGMA journal_mode = {'WAL' if wanted == 'wal' else 'DELETE'}").fetchone()[0])
    except sqlite3.OperationalError as exc:
        if is_busy(exc):
            log.info(
                "the task index could not switch to journal mode %s now (%s): it keeps %s", wanted, exc, current()
            )
            return current()
        log.info("the task index cannot use journal mode %s (%s): it uses a rollback journal", wanted, exc)
        answer = ""
    if wanted == "wal" and answer.lower() != "wal":
        try:
            answer = str(db.execute("PRAGMA journal_mode = DELETE").fetchone()[0])
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
            answer = current()
    return answer.lower()


def migrate(db: sqlite3.Connection) -> None:
    """Create the schema, or bring an older one to :data:`SCHEMA_VERSION` (a newer one is left as it is)."""
    if db.execute("PRAGMA user_version").fetchone()[0] >= SCHEMA_VERSION:
        return  # the common case: no write lock needed
    db.execute("PRAGMA secure_delete = ON")  # the blanked digests are overwritten, not left in free space
    try:
        with transaction(db):
            version = db.execute("PRAGMA user_version").fetchone()[0]  # another process may have done it
            if version >= SCHEMA_VERSION:
                return
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            if version < 2:
                db.execute("UPDATE tasks SET args_key = '' WHERE args_key != ''")
            present = {row[1] for row in db.execute("PRAGMA table_info(tasks)")}
            for column, kind in (*ADDED_IN_3, *ADDED_IN_4, *ADDED_IN_5, *ADDED_IN_7):
                if column not in present:
                    db.execute(f"ALTER TABLE tasks ADD COLUMN {column} {kind}")
            present = {row[1] for row in db.execute("PRAGMA table_info(sweep_items)")}
            for column, kind in ADDED_TO_ITEMS_IN_8:
                if column not in present:
                    db.execute(f"ALTER TABLE sweep_items ADD COLUMN {column} {kind}")
            if version < 4:
                outcomes_from_results(lambda sql, params=(): db.execute(sql, params).fetchall())
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    finally:
        db.execute("PRAGMA secure_delete = OFF")


#: Runs one statement (``?`` placeholders) in a migration's transaction; the rows it returns.
Run = Callable[..., list[Any]]


def outcomes_from_results(run: Run) -> None:
    """Version 4: keep each row's status as the server's (``server_status``), and give a finished row
    whose stored result is a tool error (``isError``) its outcome: ``declined`` when one of its questions
    was declined or dismissed, else ``error`` (a version 3 index recorded those as ``completed``). Both
    backends run it (``run`` executes one statement)."""
    run("UPDATE tasks SET server_status = status WHERE server_status IS NULL")
    rows = run(
        "SELECT id, result, questions FROM tasks WHERE status IN ('completed', 'failed') AND result IS NOT NULL"
    )
    for row, result, questions in rows:
        outcome = outcome_of_stored(result, questions)
        if outcome is not None:
            run("UPDATE tasks SET status = ? WHERE id = ?", (outcome, row))


def outcome_of_stored(result: str, questions: str | None) -> str | None:
    """The outcome a stored result (JSON) shows: ``error``/``declined`` for a tool error, else None."""
    try:
        raw = json.loads(result)
        asked = json.loads(questions) if questions else []
    except ValueError:
        return None
    if not isinstance(raw, dict) or raw.get("isError") is not True:
        return None
    questions_asked = asked if isinstance(asked, list) else []
    answered = [("", "", str(q.get("action"))) for q in questions_asked if isinstance(q, dict)]
    return tool_error_outcome(answered)  # decided where the handle decides it


class transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on error) on an autocommit connection."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: Any, *_: Any) -> None:
        if kind is None:
            try:
                self.db.execute("COMMIT")  # may meet a busy database (a rollback journal waits for readers)
                return
            except sqlite3.Error:
                self._rollback()
                raise
        self._rollback()

    def _rollback(self) -> None:
        if self.db.in_transaction:
            try:
                self.db.execute("ROLLBACK")
            except sqlite3.Error as exc:
                log.debug("rollback failed: %s", exc)
