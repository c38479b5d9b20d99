"""The one status vocabulary of a task, as this client knows it (the TypeScript twin is
``labextension/src/status.ts``; a test keeps the two equal).

Servers report ``working``, ``input_required``, ``completed``, ``failed``, ``cancelled`` (and, in the
SEP-1686 draft, ``submitted`` and ``unknown``); this client adds ``expired`` (the server dropped the
task when its ttl ran out), ``lost`` (this client lost the task: the server forgot it, or the
connection is gone) and ``queued`` (a task of ``client.map`` waiting for a free slot: not yet sent).

Two more are what views *show* for a task that ended with a result, never a status a server sends or a
handle holds: ``error`` (the tool reported an error, ``isError``, whatever status the server gave the task)
and ``declined`` (a question of the task was declined or dismissed and the tool reported an error). Both
read as failures; :func:`shown_status` picks the one a view shows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..protocol.task_state import CANCELLED, COMPLETED, FAILED, INPUT_REQUIRED, SUBMITTED, UNKNOWN, WORKING

if TYPE_CHECKING:
    from .handle import TaskHandle

EXPIRED = "expired"
LOST = "lost"
QUEUED = "queued"
#: Shown for a task whose result is a tool error (``isError``).
TOOL_ERROR = "error"
#: Shown for a task whose question was declined (or dismissed) and whose result is a tool error.
DECLINED = "declined"

#: Every status a handle (or a record of one) may have, in the order views list them.
STATUSES = (
    QUEUED,
    WORKING,
    SUBMITTED,
    INPUT_REQUIRED,
    COMPLETED,
    TOOL_ERROR,
    DECLINED,
    FAILED,
    CANCELLED,
    EXPIRED,
    LOST,
    UNKNOWN,
)
#: Statuses after which a task never changes.
FINISHED = frozenset({COMPLETED, TOOL_ERROR, DECLINED, FAILED, CANCELLED, EXPIRED, LOST, UNKNOWN})
#: Statuses shown as failures (the board's filter, notifications, colours).
FAILURES = frozenset({TOOL_ERROR, DECLINED, FAILED, LOST, EXPIRED, UNKNOWN})
#: How each status reads in words.
WORDS = {
    QUEUED: "queued",
    WORKING: "working",
    SUBMITTED: "submitted",
    INPUT_REQUIRED: "needs input",
    COMPLETED: "completed",
    TOOL_ERROR: "tool error",
    DECLINED: "declined",
    FAILED: "failed",
    CANCELLED: "cancelled",
    EXPIRED: "expired",
    LOST: "lost",
    UNKNOWN: "unknown",
}


def in_words(status: str) -> str:
    """``input_required`` → ``needs input``; an unknown status reads as itself."""
    return WORDS.get(status, status)


def shown_status(handle: TaskHandle) -> str:
    """The status a view shows for ``handle``: its own, except that a task that ended with a tool error
    (``isError``, which the ext dialect reports as ``completed``) shows ``error``, or ``declined`` when
    one of its questions was declined or dismissed."""
    status = handle.status
    if status not in (COMPLETED, FAILED) or not handle.done() or handle.exception() is not None:
        return status
    if not handle.result().is_error:
        return status
    if any(action in ("decline", "cancel") for _message, _source, action in handle.answered):
        return DECLINED
    return TOOL_ERROR


__all__ = [
    "DECLINED",
    "EXPIRED",
    "FAILURES",
    "FINISHED",
    "LOST",
    "QUEUED",
    "STATUSES",
    "TOOL_ERROR",
    "WORDS",
    "in_words",
    "shown_status",
]
