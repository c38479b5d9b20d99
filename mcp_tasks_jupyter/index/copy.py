"""Copying one task index into another (a machine's SQLite file into the team's PostgreSQL database).

Each row keeps its id (a random 63-bit number, ``task_index.py``), and is inserted only where that id is
not there yet (``ON CONFLICT (id) DO NOTHING``), in one transaction: copying twice leaves the same rows,
and a row the target already has (copied before, or recorded there since) is left as the target has it.

The result cache's ``args_key`` is a keyed hash under the source's key: a row whose stored arguments are
whole (no value redacted) gets its key made again under the target's (the team's), so that the copied
results are cache hits for the team; a row with a redacted argument cannot be (its secret is not stored):
it keeps its key where both indexes share one, and is copied without one otherwise (it never matches).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..redact import REDACTED
from . import database
from .backend import IndexBackend

#: Every column of the ``tasks`` table, ``id`` first.
COLUMNS = tuple(name for name, _ in database.COLUMNS)
_ARGUMENTS, _ARGS_KEY = COLUMNS.index("arguments"), COLUMNS.index("args_key")


def copy_rows(
    source: IndexBackend,
    target: IndexBackend,
    timeout_ms: int,
    rekey: Callable[[dict[str, Any]], str],
    same_key: bool,
) -> tuple[int, int]:
    """Copy every row of ``source`` into ``target`` (see the module docstring); (copied, already there).
    ``rekey`` gives a whole row's ``args_key`` under the target's key; ``same_key``: both use one key.
    Raises the backends' errors."""
    names = ", ".join(COLUMNS)
    db = source.connection(timeout_ms)
    rows = [
        tuple(row) for row in source.execute(db, f"SELECT {names} FROM tasks ORDER BY recorded_at, id").fetchall()
    ]
    rows = [_rekeyed(row, rekey, same_key) for row in rows]
    marks = ", ".join("?" * len(COLUMNS))
    insert = f"INSERT INTO tasks ({names}) VALUES ({marks}) ON CONFLICT (id) DO NOTHING"
    copied = 0
    db = target.connection(timeout_ms)
    with target.transaction(db):
        for row in rows:
            copied += max(0, target.execute(db, insert, row).rowcount)
    return copied, len(rows) - copied


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
