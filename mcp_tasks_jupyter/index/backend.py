"""The one interface a task index's database offers (SQLite in ``database.py``, PostgreSQL in ``postgres.py``).

The record logic (``task_index.py``), the batched writes (``writes.py``) and the copy between indexes
(``copy.py``) are written once against it, in SQL both databases speak (``?`` placeholders, which a backend
turns into its own; ``INSERT ... ON CONFLICT (id) DO UPDATE``). A backend supplies what differs: its
connection, its schema and migrations, its transactions, which of its errors are worth retrying (a busy
SQLite file, an unreachable server) and whether a write may block the event loop (a network round trip:
then ``writes.py`` writes on a thread of its own).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from .location import IndexLocation


class Rows(Protocol):
    """What a statement returns (a DB-API cursor)."""

    @property
    def rowcount(self) -> int: ...

    def fetchall(self) -> list[Any]: ...

    def fetchone(self) -> Any: ...


class IndexBackend(Protocol):
    """A task index's database: opened on first use (schema made or migrated), closed by :meth:`close`."""

    #: Where it is (``location.shown`` may be shown: no password).
    location: IndexLocation
    #: Whether a statement may wait on the network: then no write runs on an event loop's thread.
    blocking: bool
    #: Whether a change that waited ``writes.GIVE_UP_S`` is given up (a SQLite file busy that long is someone's
    #: forgotten transaction); otherwise it waits until written, the queue's bound or close (an outage).
    gives_up: bool
    #: The errors of the driver (and OSError): a read or write meeting one is logged, never raised.
    errors: tuple[type[BaseException], ...]

    def connection(self, timeout_ms: int) -> Any:
        """The calling thread's open connection, made (and the schema brought up to date) on first use;
        ``timeout_ms`` bounds the wait for a lock or a connection. Raises one of :attr:`errors`."""
        ...

    def transaction(self, db: Any) -> AbstractContextManager[None]:
        """One transaction on ``db``: committed on leaving, rolled back on an error."""
        ...

    def execute(self, db: Any, sql: str, params: Sequence[Any] = ()) -> Rows:
        """Run ``sql`` (``?`` placeholders) with ``params`` on ``db``."""
        ...

    def is_transient(self, exc: BaseException) -> bool:
        """Whether ``exc`` passes by itself (a lock held elsewhere, a server away): the change is kept."""
        ...

    def describe_error(self, exc: BaseException) -> str:
        """``exc`` in words that name the database (never a password)."""
        ...

    def close(self) -> None:
        """Close every connection (the backend opens again on its next use)."""
        ...
