"""A second, real process that holds a SQLite database's write lock (``BEGIN IMMEDIATE``) until told to let go."""

from __future__ import annotations

import select
import sqlite3
import subprocess
import sys
from pathlib import Path
from types import TracebackType
from typing import Any

WAIT = 20  # seconds: a bound on every wait

HOLDER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
db.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()
db.execute("ROLLBACK")
db.close()
print("released", flush=True)
"""


class LockHolder:
    """Holds the write lock of the database at ``path`` from construction until :meth:`release`."""

    def __init__(self, path: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], WAIT)
        line = self.process.stdout.readline() if ready else b""
        if line.strip() != b"locked":
            self.process.kill()
            _, err = self.process.communicate(timeout=WAIT)
            raise AssertionError(f"the lock holder did not take the lock: {line!r} {err.decode()}")

    @property
    def holding(self) -> bool:
        return self.process.poll() is None

    def release(self) -> None:
        """Let go of the lock and wait (blocking, so no event loop callback runs meanwhile) until it has."""
        if not self.holding:
            return
        out, err = self.process.communicate(b"go\n", timeout=WAIT)
        assert self.process.returncode == 0 and out.strip() == b"released", err.decode()

    def __enter__(self) -> LockHolder:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if kind is None:
            self.release()
        else:
            self.process.kill()
            self.process.communicate(timeout=WAIT)


def stored(path: Path, row: int, *columns: str) -> tuple[Any, ...] | None:
    """The ``columns`` of ``row`` as the database file has them, read over a connection of its own."""
    db = sqlite3.connect(path, timeout=WAIT)
    try:
        found = db.execute(f"SELECT {', '.join(columns)} FROM tasks WHERE id = ?", (row,)).fetchone()
        return tuple(found) if found is not None else None
    finally:
        db.close()
