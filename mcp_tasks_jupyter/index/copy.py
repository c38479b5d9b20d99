"""Copying one task index into another (a machine's SQLite file into the team's PostgreSQL database).

Each row keeps its id (a random 63-bit number, ``task_index.py``), and is inserted only where that id is
not there yet (``ON CONFLICT (id) DO NOTHING``), in one transaction: copying twice leaves the same rows,
and a row the target already has (copied before, or recorded there since) is left as the target has it.

The result cache's ``args_key`` is a keyed hash under the source's key: a row whose stored arguments are
whole (no value redacted) gets its key made again under the target's (the team's), so that the copied
results are cache hits for the team; a row with a redacted argument cannot be (its secret is not stored):
it keeps its key where both indexes share one, and is copied without one otherwise (it never matches).

Sweeps (``sweeps.py``) go along, in the same transaction: each sweep that the target does not have yet, with
all its items (``ON CONFLICT DO NOTHING`` again; a sweep the target has keeps its items as they are there).
Items refer to their task records by id, which the copy keeps. An item's match key is made again under the
target's key as a record's is, and the sweep's items key from them when every item could be (one with a
secret, kept only as a hash under the source's key, cannot: that sweep is then resumed by its id, with its
items, as ``%mcp_map --resume ID`` does, but not matched by its line). The runners' rows
(``sweep_owners``) are not copied: a runner of the source's is nowhere alive for the target, so a resume
there takes its items over.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..redact import REDACTED
from . import database, sweeps as sweep_store
from .backend import IndexBackend

#: Every column of the ``tasks`` table, ``id`` first.
COLUMNS = tuple(name for name, _ in database.COLUMNS)
_ARGUMENTS, _ARGS_KEY = COLUMNS.index("arguments"), COLUMNS.index("args_key")
#: The columns of ``sweeps`` and ``sweep_items`` (``database.SWEEP_TABLES``).
SWEEP_COLUMNS = tuple(name for name, _ in database.SWEEP_TABLES[0][1])
ITEM_COLUMNS = tuple(name for name, _ in database.SWEEP_TABLES[1][1])


def copy_rows(
    source: IndexBackend,
    target: IndexBackend,
    timeout_ms: int,
    rekey: Callable[[dict[str, Any]], str],
    same_key: bool,
    key: bytes | None = None,
) -> tuple[int, int, int]:
    """Copy every row of ``source`` into ``target``, and its sweeps (see the module docstring); (records
    copied, records already there, sweeps copied). ``rekey`` gives a whole row's ``args_key`` under the
    target's key, ``key`` is that key (a sweep's items key is made again with it; None: kept);
    ``same_key``: both use one key. Raises the backends' errors."""
    names = ", ".join(COLUMNS)
    source_db = source.connection(timeout_ms)
    rows = [
        tuple(row)
        for row in source.execute(source_db, f"SELECT {names} FROM tasks ORDER BY recorded_at, id").fetchall()
    ]
    rows = [_rekeyed(row, rekey, same_key) for row in rows]
    marks = ", ".join("?" * len(COLUMNS))
    insert = f"INSERT INTO tasks ({names}) VALUES ({marks}) ON CONFLICT (id) DO NOTHING"
    copied = 0
    db = target.connection(timeout_ms)
    with target.transaction(db):
        for row in rows:
            copied += max(0, target.execute(db, insert, row).rowcount)
        sweeps = copy_sweeps(source, source_db, target, db, rekey, None if same_key else key)
    return copied, len(rows) - copied, sweeps


def copy_sweeps(
    source: IndexBackend,
    source_db: Any,
    target: IndexBackend,
    db: Any,
    rekey: Callable[[dict[str, Any]], str],
    key: bytes | None,
) -> int:
    """Copy the sweeps of ``source`` that ``target`` does not have, each with its items, within the caller's
    transaction on ``db`` (see the module docstring); how many were copied. ``key``: the target's key when
    it differs from the source's (the items' keys are made again under it), else None."""
    sweep_names, item_names = ", ".join(SWEEP_COLUMNS), ", ".join(ITEM_COLUMNS)
    insert_sweep = (
        f"INSERT INTO sweeps ({sweep_names}) VALUES ({', '.join('?' * len(SWEEP_COLUMNS))}) "
        "ON CONFLICT (id) DO NOTHING"
    )
    sweeps = source.execute(source_db, f"SELECT {sweep_names} FROM sweeps ORDER BY created_at, id").fetchall()
    copied = 0
    for sweep in map(tuple, sweeps):
        items = [
            tuple(item)
            for item in source.execute(
                source_db, f"SELECT {item_names} FROM sweep_items WHERE sweep = ? ORDER BY position", (sweep[0],)
            ).fetchall()
        ]
        if key is not None:
            sweep, items = _sweep_rekeyed(sweep, items, rekey, key)
        if target.execute(db, insert_sweep, sweep).rowcount == 0:
            continue  # the target has it: its items are left as they are there
        copied += 1
        for start in range(0, len(items), sweep_store.INSERT_CHUNK):
            chunk = items[start : start + sweep_store.INSERT_CHUNK]
            marks = ", ".join("(" + ", ".join("?" * len(ITEM_COLUMNS)) + ")" for _ in chunk)
            target.execute(
                db,
                f"INSERT INTO sweep_items ({item_names}) VALUES {marks} ON CONFLICT (sweep, position) DO NOTHING",
                [value for item in chunk for value in item],
            )
    return copied


def _sweep_rekeyed(
    sweep: tuple[Any, ...], items: list[tuple[Any, ...]], rekey: Callable[[dict[str, Any]], str], key: bytes
) -> tuple[tuple[Any, ...], list[tuple[Any, ...]]]:
    """A sweep and its items with their match keys under ``key`` where they can be made again."""
    arguments_at, key_at = ITEM_COLUMNS.index("arguments"), ITEM_COLUMNS.index("args_key")
    keys: list[str] = []
    whole = True
    rekeyed = []
    for item in items:
        try:
            arguments = json.loads(item[arguments_at])
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict) or sweep_store.holds_secret(arguments):
            whole = False
            rekeyed.append(item)
            continue
        keys.append(rekey(arguments))
        rekeyed.append((*item[:key_at], keys[-1], *item[key_at + 1 :]))
    if whole:
        target, tool = sweep[SWEEP_COLUMNS.index("target")], sweep[SWEEP_COLUMNS.index("tool")]
        at = SWEEP_COLUMNS.index("items_key")
        sweep = (*sweep[:at], sweep_store.items_key(target, tool, keys, key), *sweep[at + 1 :])
    return sweep, rekeyed


def _rekeyed(row: tuple[Any, ...], rekey: Callable[[dict[str, Any]], str], same_key: bool) -> tuple[Any, ...]:
    arguments = row[_ARGUMENTS]
    kept = row[_ARGS_KEY] if same_key else ""
    if not isinstance(arguments, str) or json.dumps(REDACTED) in arguments:
        return (*row[:_ARGS_KEY], kept, *row[_ARGS_KEY + 1 :])
    try:
        key = rekey(json.loads(arguments))
    except ValueError:
        key = kept
    return (*row[:_ARGS_KEY], key, *row[_ARGS_KEY + 1 :])
