"""Sweeps in the task index: a ``client.map`` / ``%mcp_map`` batch recorded so that it outlives its kernel.

A sweep is one row of ``sweeps`` (the tool and server, the limit, a keyed digest of its items in order:
what the same line run again matches on) and one row per item in ``sweep_items`` (schema version 6,
``database.SWEEP_TABLES``): its place, its arguments as the index keeps arguments (secret-looking values
only as a keyed hash, :func:`kept_arguments`), the match key of its full arguments, and its state::

    queued -> going (claimed: its tools/call may be on the wire) -> sent (its task id) -> ended (its record)

Exactly once at the server. The 2025-11-25 wire cannot tell which server task belongs to which item, so a
send is recorded durably *before* it goes out: an item is sent only once a claim on it (``state = going``,
``owner`` = the runner, ``sends + 1``) was committed. Claims are conditional updates (``WHERE state =
'queued' AND owner = ?``) in one transaction (``BEGIN IMMEDIATE`` on SQLite, which serialises writers
across processes; a row lock on PostgreSQL, where a second claimer re-reads the row and finds it taken),
so two runners never both claim an item. After a crash an item found ``going`` (claimed, no task id
recorded) may or may not have reached the server: it is sent once more and its ``note`` says so.

The kernel's loop never waits on the index. Every statement here runs on a thread of the store's own
(one per index, :class:`SweepStore`), with a connection of its own; the loop only awaits the answer
(``asyncio.wrap_future``), so other cells and tasks go on meanwhile. To keep sends from waiting on that
round trip, a runner claims a *window* ahead (``running/sweep.py``): the next items, in one write, up to
``limit`` items claimed and not yet confirmed (sent with their task id recorded, or ended). A slot that
frees sends the next claimed item at once, and the claim of the next window overlaps the sends. The price
is bounded: at most ``limit`` items can be found ``going`` after a crash, so at most ``limit`` items are
sent a second time, each marked. Task ids and ends are written in batches (:data:`MARK_BATCH_S`), as the
task records are.

Owners. Items belong to a runner (one batch in one process: ``owner``), which says it is alive in
``sweep_owners`` every :data:`HEARTBEAT_S`. A runner whose row is older than :data:`LEASE_S`, or whose
process is gone (same host, its pid no longer runs), is dead: a resumer takes its unfinished items over,
in one conditional update (again: never two resumers for one item). A runner following another live
runner's items looks again while it follows (:func:`take_over_dead`): when that one dies, one follower
takes its items over and sends what is left; a runner whose row was taken away hears so from its next
heartbeat and sends nothing more.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import hmac
import json
import logging
import os
import socket
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from ..redact import REDACTED, is_secret_key
from . import closer

if TYPE_CHECKING:
    from .backend import IndexBackend
    from .location import IndexLocation

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Item states, in the order an item goes through them.
QUEUED, GOING, SENT, ENDED = "queued", "going", "sent", "ended"
ITEM_STATES = (QUEUED, GOING, SENT, ENDED)
#: How an item of a resumed sweep came back (``came_back``, what the resumed view counts): ended before,
#: taken from its record; sent before and re-attached (the server still had it); sent again because the
#: server had lost it, or because its send was in flight when its kernel stopped; queued, sent fresh.
CAME_BACK = ("before", "reattached", "lost", "in_doubt", "fresh")


def _seconds(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if value > 0 else default


#: A runner not heard of for this long is taken as dead (``MTJ_SWEEP_LEASE``, seconds; 30 by default), and
#: a live one says so every quarter of it (at most every 5 s).
LEASE_S = _seconds("MTJ_SWEEP_LEASE", 30.0)
HEARTBEAT_S = min(5.0, LEASE_S / 4)
#: Task ids and ends written within this long go in one transaction.
MARK_BATCH_S = 0.05
#: How long a statement on the store's thread may wait for another connection's lock (ms).
BUSY_TIMEOUT_MS = 5000
#: Tries of a statement that met a busy or unreachable database before it is given up (logged).
TRIES = 5
#: Items inserted per statement when a sweep is recorded (SQLite's default limit is 32,766 parameters).
INSERT_CHUNK = 500
#: Characters of a secret's keyed hash kept in an item's arguments.
SECRET_HASH_CHARS = 16
_HOST = socket.gethostname() or None
_PID = os.getpid()
#: The runners alive in this process (an owner of this pid not here is a closed batch's: dead).
_LIVE_OWNERS: set[str] = set()


def new_owner() -> str:
    """A runner's id (one per batch that sends a sweep's items)."""
    owner = uuid.uuid4().hex
    _LIVE_OWNERS.add(owner)
    return owner


def owner_gone(owner: str) -> None:
    _LIVE_OWNERS.discard(owner)


def kept_arguments(arguments: Any, key: bytes) -> Any:
    """``arguments`` as a sweep's item keeps them: a secret-looking key's value (``redact.SECRET_KEY``, at
    any depth) becomes ``<redacted hmac:...>``, a keyed hash under the index's key, so that an item with a
    secret can be matched with the same line again but never read back."""
    if isinstance(arguments, dict):
        return {
            k: _secret_hash(v, key) if is_secret_key(k) else kept_arguments(v, key) for k, v in arguments.items()
        }
    if isinstance(arguments, (list, tuple)):
        return [kept_arguments(v, key) for v in arguments]
    return arguments


def _secret_hash(value: Any, key: bytes) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    digest = hmac.new(key, b"sweep-secret\0" + text.encode(), hashlib.sha256).hexdigest()
    return f"{REDACTED[:-1]} hmac:{digest[:SECRET_HASH_CHARS]}>"


def holds_secret(kept: Any) -> bool:
    """Whether arguments kept by :func:`kept_arguments` had a secret (so they cannot be sent from the record)."""
    if isinstance(kept, dict):
        return any(
            (is_secret_key(k) and isinstance(v, str) and v.startswith(REDACTED[:-1])) or holds_secret(v)
            for k, v in kept.items()
        )
    if isinstance(kept, list):
        return any(holds_secret(v) for v in kept)
    return False


def items_key(target: str, tool: str, keys: Iterable[str], key: bytes) -> str:
    """What a sweep is matched on when its line runs again: its server, tool and items' keys in order."""
    mac = hmac.new(key, f"{target}\0{tool}".encode(), hashlib.sha256)
    for one in keys:
        mac.update(b"\0" + one.encode())
    return mac.hexdigest()


@dataclass(frozen=True)
class SweepRow:
    """One sweep as the index keeps it."""

    id: str
    server_name: str
    target: str
    tool: str
    items_key: str
    total: int
    limit: int
    ttl_ms: int | None
    notebook: str | None
    out_var: str | None
    created_at: float
    updated_at: float
    finished_at: float | None
    username: str | None = None
    hostname: str | None = None
    pid: int | None = None


@dataclass(frozen=True)
class ItemRow:
    """One item of a sweep as the index keeps it (``arguments``: as :func:`kept_arguments` left them)."""

    position: int
    arguments: dict[str, Any]
    args_key: str
    state: str
    owner: str | None
    sends: int
    task_id: str | None
    record: int | None
    status: str | None
    note: str | None
    #: How its latest resume found it (one of :data:`CAME_BACK`; None: never resumed).
    came_back: str | None = None


@dataclass(frozen=True)
class SweepCounts:
    """A sweep with how many of its items are in each state (what ``%mcp_tasks`` and ``mcp-tasks sweeps`` list)."""

    sweep: SweepRow
    counts: dict[str, int]
    sent_again: int


_SWEEP_COLUMNS = (
    "id, server_name, target, tool, items_key, total, item_limit, ttl_ms, notebook, out_var, created_at, "
    "updated_at, finished_at, username, hostname, pid"
)
_ITEM_COLUMNS = "position, arguments, args_key, state, owner, sends, task_id, record, status, note, came_back"


def _sweep(r: Sequence[Any]) -> SweepRow:
    """A row of ``SELECT {_SWEEP_COLUMNS}`` (the dataclass's fields, in order)."""
    return SweepRow(*r)


def _item(r: Sequence[Any]) -> ItemRow:
    return ItemRow(int(r[0]), json.loads(r[1]), r[2], r[3], r[4], int(r[5]), r[6], r[7], r[8], r[9], r[10])


def owner_alive(hostname: str | None, pid: int | None, seen_at: float, owner: str, now: float) -> bool:
    """Whether the runner ``owner`` (last heard of at ``seen_at``) may still send: heard of within
    :data:`LEASE_S`, and, on this host, its process still runs (this process: it is one of ours)."""
    if now - seen_at > LEASE_S:
        return False
    if hostname != _HOST or pid is None:
        return True
    if pid == _PID:
        return owner in _LIVE_OWNERS
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: it runs
        return True
    return True


class SweepStore:
    """The sweeps of one index, written and read on a thread of the store's own (see the module docstring)."""

    def __init__(self, location: IndexLocation, where: str) -> None:
        from .task_index import backend_for

        self.where = where
        self._database: IndexBackend = backend_for(location)
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        closer.ready()
        # Not ``self`` among its arguments: that kept every store, and its thread, alive to the process's end.
        self._finalizer = weakref.finalize(self, closer.close_later, _shut, self._database)

    # -- the thread ------------------------------------------------------------------------------

    def submit(self, job: Callable[..., T], *args: Any) -> concurrent.futures.Future[T]:
        """Run ``job(database, connection, *args)`` on the store's thread, retrying a busy or unreachable
        database (:data:`TRIES`); the future holds its answer or its error."""
        with self._lock:
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="mtj-sweeps")
            return self._pool.submit(self._run, job, *args)

    async def call(self, job: Callable[..., T], *args: Any) -> T:
        """:meth:`submit`, awaited without holding the loop."""
        return await asyncio.wrap_future(self.submit(job, *args))

    def now(self, job: Callable[..., T], *args: Any) -> T:
        """:meth:`submit` and wait (a command line, a read a person asked for)."""
        return self.submit(job, *args).result(timeout=BUSY_TIMEOUT_MS / 1000 * (TRIES + 1))

    def _run(self, job: Callable[..., T], *args: Any) -> T:
        database = self._database
        for attempt in range(TRIES):
            try:
                db = database.connection(BUSY_TIMEOUT_MS)
                return job(database, db, *args)
            except database.errors as exc:
                if attempt + 1 == TRIES or not database.is_transient(exc):
                    raise
                time.sleep(min(0.05 * 2**attempt, 1.0))
        raise AssertionError("unreachable")

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)
        try:
            self._database.close()
        except self._database.errors as exc:
            log.debug("the sweeps of %s: closing failed: %s", self.where, exc)


def _shut(database: IndexBackend) -> None:
    try:
        database.close()
    except Exception:  # at exit, on any thread
        log.debug("the sweeps' database could not be closed")


# -- statements, run on the store's thread (each: database, connection, ...) -------------------------


def record_sweep(
    database: IndexBackend, db: Any, sweep: SweepRow, items: Sequence[tuple[str, str]], owner: str
) -> None:
    """Insert ``sweep`` and its ``items`` ((kept arguments as JSON, args_key), in order), all ``queued`` and
    held by ``owner``, in one transaction."""
    now = time.time()
    with database.transaction(db):
        database.execute(
            db,
            f"INSERT INTO sweeps ({_SWEEP_COLUMNS}) VALUES ({', '.join('?' * 16)})",
            (sweep.id, sweep.server_name, sweep.target, sweep.tool, sweep.items_key, sweep.total, sweep.limit,
             sweep.ttl_ms, sweep.notebook, sweep.out_var, sweep.created_at, sweep.updated_at, sweep.finished_at,
             sweep.username, sweep.hostname, sweep.pid),
        )  # fmt: skip
        _heartbeat(database, db, owner, sweep.id, now)
        for start in range(0, len(items), INSERT_CHUNK):
            chunk = items[start : start + INSERT_CHUNK]
            marks = ", ".join("(?, ?, ?, ?, 'queued', ?, 0, ?)" for _ in chunk)
            params: list[Any] = []
            for offset, (arguments, key) in enumerate(chunk):
                params += (sweep.id, start + offset, arguments, key, owner, now)
            database.execute(
                db,
                "INSERT INTO sweep_items (sweep, position, arguments, args_key, state, owner, sends, updated_at) "
                f"VALUES {marks}",
                params,
            )


def claim(database: IndexBackend, db: Any, sweep: str, owner: str, positions: Sequence[int]) -> list[int]:
    """Claim ``positions`` for sending: those held by ``owner`` (queued, or to be sent again) become ``going``
    (their ``sends`` counted) in one committed transaction; the positions claimed (the others are not ours)."""
    if not positions:
        return []
    claimed: list[int] = []
    now = time.time()
    with database.transaction(db):
        for start in range(0, len(positions), INSERT_CHUNK):
            chunk = positions[start : start + INSERT_CHUNK]
            rows = database.execute(
                db,
                f"UPDATE sweep_items SET state = 'going', sends = sends + 1, updated_at = ? "
                f"WHERE sweep = ? AND owner = ? AND position IN ({', '.join('?' * len(chunk))}) "
                "RETURNING position",
                (now, sweep, owner, *chunk),
            ).fetchall()
            claimed += (int(r[0]) for r in rows)
    return sorted(claimed)


def mark(
    database: IndexBackend, db: Any, sweep: str, owner: str, changes: Sequence[tuple[int, dict[str, Any]]]
) -> None:
    """Write items' new states (``sent`` with the task id and record, ``ended`` with the status), only while
    ``owner`` holds them, in one transaction."""
    now = time.time()
    with database.transaction(db):
        for position, sets in changes:
            columns = ", ".join(f"{column} = ?" for column in sets)
            database.execute(
                db,
                f"UPDATE sweep_items SET {columns}, updated_at = ? WHERE sweep = ? AND position = ? AND owner = ?",
                (*sets.values(), now, sweep, position, owner),
            )


def finish(database: IndexBackend, db: Any, sweep: str, owner: str, finished: bool) -> None:
    """The runner ``owner`` lets go: its row goes, and the sweep is finished when every item ended."""
    now = time.time()
    with database.transaction(db):
        database.execute(db, "DELETE FROM sweep_owners WHERE owner = ?", (owner,))
        if finished:
            database.execute(
                db,
                "UPDATE sweeps SET finished_at = ?, updated_at = ? WHERE id = ? AND finished_at IS NULL "
                "AND NOT EXISTS (SELECT 1 FROM sweep_items WHERE sweep = ? AND state != 'ended')",
                (now, now, sweep, sweep),
            )


def heartbeat(database: IndexBackend, db: Any, owner: str, sweep: str) -> bool:
    """``owner`` is alive; False when its row is gone: another runner took it as dead and took its items
    over (it must send none of them from now on)."""
    with database.transaction(db):
        rows = database.execute(
            db, "UPDATE sweep_owners SET seen_at = ? WHERE owner = ? RETURNING owner", (time.time(), owner)
        ).fetchall()
    return bool(rows)


def _heartbeat(database: IndexBackend, db: Any, owner: str, sweep: str, now: float) -> None:
    database.execute(
        db,
        "INSERT INTO sweep_owners (owner, sweep, hostname, pid, seen_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (owner) DO UPDATE SET seen_at = excluded.seen_at",
        (owner, sweep, _HOST, _PID, now),
    )


def take_over(database: IndexBackend, db: Any, sweep: str, owner: str) -> list[ItemRow]:
    """Make ``owner`` the holder of every item of ``sweep`` whose holder is dead (or none), in one transaction
    (ended ones too: an end whose record was never written is asked again); every item of the sweep, as it
    is now (those another live runner holds keep its id)."""
    now = time.time()
    with database.transaction(db):
        _heartbeat(database, db, owner, sweep, now)
        dead = _dead_holders(database, db, sweep, owner, now)
        for start in range(0, len(dead), INSERT_CHUNK):
            chunk = dead[start : start + INSERT_CHUNK]
            database.execute(
                db,
                f"UPDATE sweep_items SET owner = ? WHERE sweep = ? AND owner IN ({', '.join('?' * len(chunk))})",
                (owner, sweep, *chunk),
            )
            database.execute(
                db, f"DELETE FROM sweep_owners WHERE owner IN ({', '.join('?' * len(chunk))})", tuple(chunk)
            )
        database.execute(
            db,
            "UPDATE sweep_items SET owner = ? WHERE sweep = ? AND state != 'ended' AND owner IS NULL",
            (owner, sweep),
        )
        return items(database, db, sweep)


def _dead_holders(database: IndexBackend, db: Any, sweep: str, owner: str, now: float) -> list[str]:
    """The runners other than ``owner`` holding items of ``sweep`` that are dead (:func:`owner_alive`)."""
    holders = database.execute(
        db,
        "SELECT DISTINCT i.owner, o.hostname, o.pid, o.seen_at FROM sweep_items i "
        "LEFT JOIN sweep_owners o ON o.owner = i.owner WHERE i.sweep = ?",
        (sweep,),
    ).fetchall()
    return [
        holder
        for holder, hostname, pid, seen_at in holders
        if holder is not None
        and holder != owner
        and (seen_at is None or not owner_alive(hostname, pid, seen_at, holder, now))
    ]


def take_over_dead(database: IndexBackend, db: Any, sweep: str, owner: str) -> list[ItemRow]:
    """What a runner following another's items does when that one dies: every item of ``sweep`` held by a
    dead runner becomes ``owner``'s, in one transaction; the items moved, in order (as they were: the
    caller decides what each needs). The holders are judged again inside the transaction and each item
    moves only from the dead holder it had (``WHERE owner IN (dead)``): on SQLite ``BEGIN IMMEDIATE``
    serialises the followers; on PostgreSQL a second follower's update waits for the first's row locks,
    then finds another owner and moves nothing. So two followers never both get an item."""
    if not _dead_holders(database, db, sweep, owner, time.time()):  # the usual answer: no write lock taken
        return []
    moved: list[ItemRow] = []
    with database.transaction(db):
        now = time.time()
        _heartbeat(database, db, owner, sweep, now)
        dead = _dead_holders(database, db, sweep, owner, now)
        for start in range(0, len(dead), INSERT_CHUNK):
            chunk = dead[start : start + INSERT_CHUNK]
            marks = ", ".join("?" * len(chunk))
            rows = database.execute(
                db,
                f"UPDATE sweep_items SET owner = ?, updated_at = ? WHERE sweep = ? AND owner IN ({marks}) "
                f"RETURNING {_ITEM_COLUMNS}",
                (owner, now, sweep, *chunk),
            ).fetchall()
            moved += (_item(r) for r in rows)
            database.execute(db, f"DELETE FROM sweep_owners WHERE owner IN ({marks})", tuple(chunk))
    return sorted(moved, key=lambda row: row.position)


def items(database: IndexBackend, db: Any, sweep: str, since: int = 0) -> list[ItemRow]:
    """The items of ``sweep`` from place ``since`` on, in order."""
    rows = database.execute(
        db,
        f"SELECT {_ITEM_COLUMNS} FROM sweep_items WHERE sweep = ? AND position >= ? ORDER BY position",
        (sweep, since),
    ).fetchall()
    return [_item(r) for r in rows]


def ended_since(database: IndexBackend, db: Any, sweep: str, positions: Sequence[int]) -> list[ItemRow]:
    """Which of ``positions`` (held by other runners) have ended."""
    found: list[ItemRow] = []
    for start in range(0, len(positions), INSERT_CHUNK):
        chunk = positions[start : start + INSERT_CHUNK]
        rows = database.execute(
            db,
            f"SELECT {_ITEM_COLUMNS} FROM sweep_items WHERE sweep = ? AND state = 'ended' "
            f"AND position IN ({', '.join('?' * len(chunk))})",
            (sweep, *chunk),
        ).fetchall()
        found += (_item(r) for r in rows)
    return found


def find(
    database: IndexBackend, db: Any, sweep_id: str | None, target: str, tool: str, key: str | None
) -> SweepRow | None:
    """The sweep named ``sweep_id`` (an id or its start), else the newest unfinished one on ``target`` and
    ``tool`` whose items' key is ``key``."""
    if sweep_id is not None:
        rows = database.execute(
            db, f"SELECT {_SWEEP_COLUMNS} FROM sweeps WHERE id = ? OR id LIKE ? ORDER BY created_at DESC",
            (sweep_id, sweep_id.replace("_", "").replace("%", "") + "_%"),
        ).fetchall()  # fmt: skip
        return _sweep(rows[0]) if len(rows) == 1 else None
    rows = database.execute(
        db,
        f"SELECT {_SWEEP_COLUMNS} FROM sweeps WHERE target = ? AND tool = ? AND items_key = ? "
        "AND finished_at IS NULL ORDER BY created_at DESC LIMIT 1",
        (target, tool, key),
    ).fetchall()
    return _sweep(rows[0]) if rows else None


def containing(database: IndexBackend, db: Any, records: Iterable[int]) -> list[tuple[SweepRow, list[ItemRow]]]:
    """The sweeps any of ``records`` (task records' ids) is an item of, oldest first, each with all its
    items in order (what an export tells of a sweep)."""
    wanted = set(records)
    found = {
        sweep
        for sweep, record in database.execute(
            db, "SELECT sweep, record FROM sweep_items WHERE record IS NOT NULL"
        ).fetchall()
        if record in wanted
    }
    if not found:
        return []
    rows = database.execute(db, f"SELECT {_SWEEP_COLUMNS} FROM sweeps ORDER BY created_at").fetchall()
    return [(s, items(database, db, s.id)) for s in map(_sweep, rows) if s.id in found]


def record_items(
    database: IndexBackend, db: Any, records: Iterable[int]
) -> dict[int, tuple[str, int, str | None, str | None]]:
    """Of each of ``records`` (task records' ids) that is a sweep's item: (the sweep, its place, why it was
    sent again or None, how its latest resume found it or None); a record an item of two sweeps (one resumed
    by a new sweep) is the newest's."""
    wanted = set(records)
    found: dict[int, tuple[str, int, str | None, str | None]] = {}
    for sweep, position, note, came_back, record in database.execute(
        db,
        "SELECT i.sweep, i.position, i.note, i.came_back, i.record FROM sweep_items i JOIN sweeps s "
        "ON s.id = i.sweep WHERE i.record IS NOT NULL ORDER BY s.created_at",
    ).fetchall():
        if record in wanted:
            found[int(record)] = (sweep, int(position), note, came_back)
    return found


def came_back(database: IndexBackend, db: Any, sweep: str, how: dict[str, Sequence[int]]) -> None:
    """Write how a resume found the items of ``sweep``: ``how`` maps each of :data:`CAME_BACK` to the places
    it found so (an item it did not name keeps what it had), in one transaction."""
    with database.transaction(db):
        for kind, positions in how.items():
            assert kind in CAME_BACK, kind
            for start in range(0, len(positions), INSERT_CHUNK):
                chunk = positions[start : start + INSERT_CHUNK]
                marks = ", ".join("?" * len(chunk))
                database.execute(
                    db,
                    f"UPDATE sweep_items SET came_back = ? WHERE sweep = ? AND position IN ({marks})",
                    (kind, sweep, *chunk),
                )


def listing(database: IndexBackend, db: Any, target: str | None = None) -> list[SweepCounts]:
    """Every sweep (on ``target``), newest first, with its items' counts by state."""
    where, params = ("WHERE s.target = ?", (target,)) if target else ("", ())
    sweeps = [
        _sweep(r)
        for r in database.execute(
            db, f"SELECT {', '.join('s.' + c for c in _SWEEP_COLUMNS.split(', '))} FROM sweeps s {where} "
            "ORDER BY s.created_at DESC", params,
        ).fetchall()
    ]  # fmt: skip
    counts: dict[str, dict[str, int]] = {s.id: {} for s in sweeps}
    again: dict[str, int] = {}
    for sweep, state, n, resent in database.execute(
        db,
        "SELECT sweep, state, COUNT(*), SUM(CASE WHEN note IS NOT NULL THEN 1 ELSE 0 END) FROM sweep_items "
        "GROUP BY sweep, state",
    ).fetchall():
        if sweep in counts:
            counts[sweep][state] = int(n)
            again[sweep] = again.get(sweep, 0) + int(resent or 0)
    return [SweepCounts(s, counts[s.id], again.get(s.id, 0)) for s in sweeps]


def page(
    database: IndexBackend, db: Any, sweep_id: str, offset: int, size: int
) -> tuple[SweepCounts, list[ItemRow]] | None:
    """One page of a sweep's items (places ``offset`` to ``offset + size``, in order) with the sweep's
    counts by state: what a board shows of a sweep without reading its 100,000 items (None: no such sweep)."""
    found = find(database, db, sweep_id, "", "", None)
    if found is None:
        return None
    counts: dict[str, int] = {}
    again = 0
    for state, n, resent in database.execute(
        db,
        "SELECT state, COUNT(*), SUM(CASE WHEN note IS NOT NULL THEN 1 ELSE 0 END) FROM sweep_items "
        "WHERE sweep = ? GROUP BY state",
        (found.id,),
    ).fetchall():
        counts[state] = int(n)
        again += int(resent or 0)
    rows = database.execute(
        db,
        f"SELECT {_ITEM_COLUMNS} FROM sweep_items WHERE sweep = ? AND position >= ? AND position < ? "
        "ORDER BY position",
        (found.id, offset, offset + size),
    ).fetchall()
    return SweepCounts(found, counts, again), [_item(r) for r in rows]


__all__ = [
    "CAME_BACK",
    "ENDED",
    "GOING",
    "HEARTBEAT_S",
    "ITEM_STATES",
    "LEASE_S",
    "QUEUED",
    "SENT",
    "ItemRow",
    "SweepCounts",
    "SweepRow",
    "SweepStore",
    "came_back",
    "claim",
    "containing",
    "find",
    "holds_secret",
    "items_key",
    "kept_arguments",
    "listing",
    "new_owner",
    "owner_alive",
    "page",
    "record_items",
    "take_over",
    "take_over_dead",
]
