"""The one status vocabulary of a task, as this client knows it (the TypeScript twin is
``labextension/src/status.ts``; a test keeps the two equal).

Servers report ``working``, ``input_required``, ``completed``, ``failed``, ``cancelled`` (and, in the
SEP-1686 draft, ``submitted`` and ``unknown``); this client adds ``expired`` (the server dropped the
task when its ttl ran out), ``lost`` (this client lost the task: the server forgot it, or the
connection is gone) and ``queued`` (a task of ``client.map`` waiting for a free slot: not yet sent).
"""

from __future__ import annotations

from .protocol.tasks import CANCELLED, COMPLETED, FAILED, INPUT_REQUIRED, SUBMITTED, UNKNOWN, WORKING

EXPIRED = "expired"
LOST = "lost"
QUEUED = "queued"

#: Every status a handle (or a record of one) may have, in the order views list them.
STATUSES = (QUEUED, WORKING, SUBMITTED, INPUT_REQUIRED, COMPLETED, FAILED, CANCELLED, EXPIRED, LOST, UNKNOWN)
#: Statuses after which a task never changes.
FINISHED = frozenset({COMPLETED, FAILED, CANCELLED, EXPIRED, LOST, UNKNOWN})
#: Statuses shown as failures (the board's filter, notifications, colours).
FAILURES = frozenset({FAILED, LOST, EXPIRED, UNKNOWN})
#: How each status reads in words.
WORDS = {
    QUEUED: "queued",
    WORKING: "working",
    SUBMITTED: "submitted",
    INPUT_REQUIRED: "needs input",
    COMPLETED: "completed",
    FAILED: "failed",
    CANCELLED: "cancelled",
    EXPIRED: "expired",
    LOST: "lost",
    UNKNOWN: "unknown",
}


def in_words(status: str) -> str:
    """``input_required`` → ``needs input``; an unknown status reads as itself."""
    return WORDS.get(status, status)


__all__ = ["EXPIRED", "FAILURES", "FINISHED", "LOST", "QUEUED", "STATUSES", "WORDS", "in_words"]
