"""The one status vocabulary of a task, as this client knows it (the TypeScript twin is
``labextension/src/status.ts``; a test keeps the two equal).

Servers report ``working``, ``input_required``, ``completed``, ``failed``, ``cancelled`` (and, in the
SEP-1686 draft, ``submitted`` and ``unknown``); this client adds ``expired`` (the server dropped the
task when its ttl ran out), ``lost`` (this client lost the task: the server forgot it, or the
connection is gone) and ``queued`` (a task of ``client.map`` waiting for a free slot: not yet sent).

Two more are outcomes of a task that ended with a result, never a status a server sends: ``error`` (the
tool reported an error, ``isError``, whatever status the server gave the task) and ``declined`` (a question
of the task was declined or dismissed and the tool reported an error). Both read as failures. A handle's
``status`` says them once it ended (:func:`tool_error_outcome` decides which), its ``server_status`` keeps
the server's own word.
"""

from __future__ import annotations

from collections.abc import Sequence
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


def tool_error_outcome(answered: Sequence[tuple[str, str, str]]) -> str:
    """How a task whose result is a tool error (``isError``) ended: ``declined`` when one of its questions
    was declined or dismissed (``answered``: (message, source, action) of each), else ``error``. The one
    place this is decided: the handle's ``status`` holds it, and the views and the index read that."""
    if any(action in ("decline", "cancel") for _message, _source, action in answered):
        return DECLINED
    return TOOL_ERROR


def lost_words(error: BaseException) -> str | None:
    """How a task that this client can no longer follow ended, in plain words, with the server's own
    words in brackets (None for any other error): what the handle's status message, its views and its
    record say instead of the last headline the task had."""
    from ..errors import MCPError, TaskExpired, TaskLost, TaskNotFound

    detail = error.detail if isinstance(error, MCPError) else str(error)
    if isinstance(error, TaskExpired):
        return f"the server dropped the task when its ttl ran out ({detail})"
    if isinstance(error, TaskNotFound):
        return f"the server no longer knows this task ({detail})"
    if isinstance(error, TaskLost):
        return detail
    return None


def shown_status(handle: TaskHandle) -> str:
    """The status a view shows for ``handle``: its :attr:`~.TaskHandle.status` (the outcome once it ended)."""
    return handle.status


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
    "lost_words",
    "shown_status",
    "tool_error_outcome",
]
