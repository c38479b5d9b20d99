"""Settings of one demo server process (what the command-line flags set)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class DemoConfig:
    """Pacing, retention and paging knobs; times are milliseconds.

    A requested task ``ttl`` is clamped to ``[MIN_TTL_MS, max_ttl_ms]``; a missing or null one
    becomes ``default_ttl_ms`` (itself clamped into that range).
    """

    MIN_TTL_MS: ClassVar[int] = 1000

    poll_interval_ms: int = 500
    default_ttl_ms: int = 600_000
    max_ttl_ms: int = 3_600_000
    tools_page_size: int = 100
    tasks_page_size: int = 50
    faults: bool = False

    def __post_init__(self) -> None:
        if self.poll_interval_ms < 0:
            raise ValueError("poll interval must be >= 0 ms")
        if self.max_ttl_ms < self.MIN_TTL_MS:
            raise ValueError(f"max ttl must be >= {self.MIN_TTL_MS} ms")
        if self.default_ttl_ms <= 0:
            raise ValueError("default ttl must be > 0 ms")
        if self.tools_page_size < 1 or self.tasks_page_size < 1:
            raise ValueError("page sizes must be >= 1")

    def clamp_ttl(self, requested: int | float | None) -> int:
        """The ttl a new task gets for a requested one (None: the default)."""
        wanted = self.default_ttl_ms if requested is None else requested
        return int(min(max(wanted, self.MIN_TTL_MS), self.max_ttl_ms))
