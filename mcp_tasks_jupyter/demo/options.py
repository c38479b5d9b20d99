"""Settings of one demo server process (what the command-line flags set)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

DIALECTS = ("auto", "2025-11-25", "ext", "sep1686")


@dataclass(frozen=True)
class DemoConfig:
    """Pacing, retention, paging and dialect knobs; times are milliseconds.

    A requested task ``ttl`` (2025-11-25) or ``keepAlive`` (sep1686) is clamped to
    ``[MIN_TTL_MS, max_ttl_ms]``; a missing or null one becomes ``default_ttl_ms`` (itself clamped
    into that range); ext tasks always get the default. The advertised poll interval is at least
    ``MIN_POLL_INTERVAL_MS``.

    ``dialect`` "auto" serves each client in the dialect it speaks; any other value serves that
    one dialect only. ``status_notifications`` False: no
    ``notifications/tasks/status`` (2025-11-25), so clients learn of changes only by polling.
    """

    MIN_TTL_MS: ClassVar[int] = 1000
    MIN_POLL_INTERVAL_MS: ClassVar[int] = 100

    poll_interval_ms: int = 500
    default_ttl_ms: int = 600_000
    max_ttl_ms: int = 3_600_000
    tools_page_size: int = 100
    tasks_page_size: int = 50
    dialect: str = "auto"
    status_notifications: bool = True
    #: Each ``subscriptions/listen`` ends gracefully (answered with its result) after this long (None:
    #: only when the server shuts down), as a server that rotates long-lived streams does.
    listen_for_ms: int | None = None

    def __post_init__(self) -> None:
        if self.poll_interval_ms < self.MIN_POLL_INTERVAL_MS:
            raise ValueError(f"poll interval must be >= {self.MIN_POLL_INTERVAL_MS} ms")
        if self.max_ttl_ms < self.MIN_TTL_MS:
            raise ValueError(f"max ttl must be >= {self.MIN_TTL_MS} ms")
        if self.default_ttl_ms <= 0:
            raise ValueError("default ttl must be > 0 ms")
        if self.tools_page_size < 1 or self.tasks_page_size < 1:
            raise ValueError("page sizes must be >= 1")
        if self.listen_for_ms is not None and self.listen_for_ms <= 0:
            raise ValueError("listen-for must be > 0 ms")
        if self.dialect not in DIALECTS:
            raise ValueError(f"dialect must be one of {', '.join(DIALECTS)}")

    def clamp_ttl(self, requested: int | float | None) -> int:
        """The ttl (or sep1686 keepAlive) a new task gets for a requested one (None: the default)."""
        wanted = self.default_ttl_ms if requested is None else requested
        return int(min(max(wanted, self.MIN_TTL_MS), self.max_ttl_ms))

    def serves(self, dialect: str) -> bool:
        """Whether this process answers clients speaking ``dialect``."""
        return self.dialect in ("auto", dialect)
