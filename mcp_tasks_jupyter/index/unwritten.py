"""Records an index could not write before it closed, kept on disk until the next process opens that index.

While a team's PostgreSQL database is out of reach, the index keeps its records in memory
(``writes.py``); if it is still away when the index closes (the kernel shuts down, a script ends), those
records go to a file of this user's, one per index location (named by a hash of the URL without its
password; directory 0700, file 0600, JSON Lines of ``{"row", "insert", "sets"}``). The next process that
opens the same index (a kernel, ``mcp-tasks list``) takes them in and writes them with its own: inserts
are upserts, so a file taken twice (a process killed after writing, before deleting it) leaves each
record once.

Several processes may close at once and one may be taking the file meanwhile: appends go to
``NAME.jsonl``, and a taker first renames it to ``NAME.PID.RANDOM.taking`` (atomic), reads that, and deletes
it once what it read is written. A ``.taking`` file whose process is gone is taken again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: Under the package's data directory.
FOLDER = "unwritten"
#: A column's name (the names go into SQL: a file edited by hand must not smuggle anything else in).
COLUMN = re.compile(r"[a-z_][a-z0-9_]{0,62}")


@dataclass(frozen=True)
class Unwritten:
    """One row's change that waits in a file: its insert (all columns) and/or the columns to update."""

    row: int
    insert: dict[str, Any] | None
    sets: dict[str, Any]


def file_for(shown: str, data_dir: Path) -> Path:
    """The file that keeps what the index shown as ``shown`` (a URL without its password) could not write."""
    digest = hashlib.sha256(shown.encode()).hexdigest()[:24]
    return data_dir / FOLDER / f"{digest}.jsonl"


def keep(path: Path, changes: list[Unwritten]) -> None:
    """Append ``changes`` to ``path`` (made 0600 in a 0700 directory); raises OSError when it cannot."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as file:
        file.write("".join(json.dumps({"row": c.row, "insert": c.insert, "sets": c.sets}) + "\n" for c in changes))
        file.flush()
        os.fsync(file.fileno())


def take(path: Path) -> tuple[list[Unwritten], list[Path]]:
    """What waits for the index of ``path`` (its file, and files of takers that are gone), oldest first, and
    the files it came from (delete them with :func:`done` once written)."""
    if not path.parent.is_dir():
        return [], []
    sources = [stale for stale in sorted(path.parent.glob(f"{path.stem}.*.taking")) if not _alive(stale)]
    sources.append(path)
    taken = [_rename(source, _taker(path)) for source in sources]
    changes: list[Unwritten] = []
    for file in (p for p in taken if p is not None):
        changes.extend(_read(file))
    return changes, [p for p in taken if p is not None]


def done(files: list[Path]) -> None:
    """Delete the files whose changes are written."""
    for file in files:
        try:
            file.unlink()
        except FileNotFoundError:
            pass


def _taker(path: Path) -> Path:
    """A name of this process's own for a file it takes."""
    return path.with_name(f"{path.stem}.{os.getpid()}.{secrets.token_hex(4)}.taking")


def _alive(taking: Path) -> bool:
    """Whether the process named in ``NAME.PID.taking`` still runs (on this host: the files are a user's own)."""
    try:
        pid = int(taking.name.split(".")[1])
        os.kill(pid, 0)
    except (ValueError, IndexError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


def _rename(source: Path, target: Path) -> Path | None:
    try:
        source.replace(target)
    except FileNotFoundError:  # none kept, or another process took it first
        return None
    return target


def _read(path: Path) -> list[Unwritten]:
    changes: list[Unwritten] = []
    with path.open(encoding="utf-8") as file:
        for number, line in enumerate(file, 1):
            try:
                entry = json.loads(line)
                insert, sets = entry["insert"], entry["sets"]
                if not isinstance(insert, (dict, type(None))) or not isinstance(sets, dict):
                    raise ValueError("insert and sets must be objects")
                if not all(COLUMN.fullmatch(str(column)) for column in [*(insert or {}), *sets]):
                    raise ValueError("a column's name is not a name")
                changes.append(Unwritten(int(entry["row"]), insert, sets))
            except (ValueError, KeyError, TypeError) as exc:  # a line cut short by a crash
                log.warning("%s line %d is not a kept record (%s): skipped", path, number, exc)
    return changes
