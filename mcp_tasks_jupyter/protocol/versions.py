"""Protocol versions this client speaks, newest first.

``LATEST``/``SUPPORTED`` are the legacy (stateful) versions, negotiated by ``initialize``;
``MODERN`` are the stateless ones (2026-07-28 on), declared in every request's ``_meta``.
"""

LATEST = "2025-11-25"
SUPPORTED = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")

LATEST_MODERN = "2026-07-28"
MODERN = ("2026-07-28",)

#: Every version, newest first.
ALL = MODERN + SUPPORTED


def is_modern(version: str) -> bool:
    """Whether ``version`` is a stateless (per-request ``_meta``) protocol version."""
    return version in MODERN
