"""The one internal task model every dialect is translated into. No I/O."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import bounds

WORKING = "working"
INPUT_REQUIRED = "input_required"
COMPLETED = "completed"
FAILED = "failed"
CANCELLED = "cancelled"
SUBMITTED = "submitted"  # sep1686 only
UNKNOWN = "unknown"  # sep1686 only

#: Statuses after which a task never changes again.
TERMINAL = frozenset({COMPLETED, FAILED, CANCELLED, UNKNOWN})
#: Every status a server may report, across dialects.
SERVER_STATUSES = frozenset({WORKING, INPUT_REQUIRED, COMPLETED, FAILED, CANCELLED, SUBMITTED, UNKNOWN})


@dataclass(slots=True)
class TaskState:
    """A snapshot of one task as the server last described it (times as the server's ISO strings)."""

    task_id: str
    status: str
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL


def parse_task(obj: Any, what: str = "task", *, ttl_key: str = "ttl", poll_key: str = "pollInterval") -> TaskState:
    """Validate a wire Task object and return the internal snapshot (raises ValueError naming the field).

    The poll interval and the TTL are clamped to the ranges in ``bounds.py``, the strings cut to its
    lengths: a TaskState holds only values this client can act on and show.
    """
    if type(obj) is dict:
        # A poll's answer in one pass (the common case, about a microsecond): every field of the usual
        # type and already within ``bounds.py``, so that nothing needs cutting. Anything else (an absent
        # or odd field, a long text, a float, a number out of range) is checked field by field, clamped,
        # cut, and what is wrong named, by ``_checked_task``.
        get = obj.get
        task_id, status, message = get("taskId"), get("status"), get("statusMessage")
        created, updated, ttl, poll = get("createdAt"), get("lastUpdatedAt"), get(ttl_key), get(poll_key)
        if (
            type(task_id) is str
            and 0 < len(task_id) <= bounds.MAX_TASK_ID_CHARS
            and type(status) is str
            and status in SERVER_STATUSES
            and (message is None or (type(message) is str and len(message) <= bounds.MAX_STATUS_MESSAGE_CHARS))
            and (created is None or (type(created) is str and len(created) <= bounds.MAX_TIMESTAMP_CHARS))
            and (updated is None or (type(updated) is str and len(updated) <= bounds.MAX_TIMESTAMP_CHARS))
            and (ttl is None or (type(ttl) is int and 0 <= ttl <= bounds.MAX_MS))
            and (poll is None or (type(poll) is int and 0 <= poll <= bounds.MAX_MS))
            and task_id.isprintable()
        ):
            if ttl is not None and ttl > bounds.MAX_TTL_MS:
                ttl = bounds.MAX_TTL_MS
            if poll is not None:
                poll = min(bounds.MAX_POLL_INTERVAL_MS, max(bounds.MIN_POLL_INTERVAL_MS, poll))
            return TaskState(task_id, status, message, created, updated, ttl, poll)
    return _checked_task(obj, what, ttl_key, poll_key)


def _checked_task(obj: Any, what: str, ttl_key: str, poll_key: str) -> TaskState:
    """``parse_task`` field by field: every check, clamp and cut, and the error naming the field."""
    if not isinstance(obj, dict):
        raise ValueError(f"invalid {what}: expected an object")
    task_id = bounds.task_id(obj.get("taskId"), what)
    status = obj.get("status")
    if not isinstance(status, str) or status not in SERVER_STATUSES:
        raise ValueError(f"invalid {what}: unknown status {bounds.quoted(status)}")
    return TaskState(
        task_id=task_id,
        status=status,
        status_message=bounds.text(obj, "statusMessage", what, bounds.MAX_STATUS_MESSAGE_CHARS),
        created_at=bounds.text(obj, "createdAt", what, bounds.MAX_TIMESTAMP_CHARS),
        last_updated_at=bounds.text(obj, "lastUpdatedAt", what, bounds.MAX_TIMESTAMP_CHARS),
        ttl_ms=bounds.ttl_ms(obj, ttl_key, what),
        poll_interval_ms=bounds.poll_interval_ms(obj, poll_key, what),
    )


def tagged_task_id(params: dict[str, Any], key: str) -> str | None:
    """The task id in ``params._meta[key]`` (a related-task tag), if there is one."""
    meta = params.get("_meta")
    if isinstance(meta, dict):
        related = meta.get(key)
        task_id = related.get("taskId") if isinstance(related, dict) else None
        if isinstance(task_id, str):
            return task_id
    return None


#: How the questions handed to handlers (``elicitation_handler``, the notebook's form) name the task
#: that asks, whatever the dialect: the 2025-11-25 related-task tag.
QUESTION_TAG = "io.modelcontextprotocol/related-task"


def tag_question(params: dict[str, Any], task_id: str | None) -> dict[str, Any]:
    """``params`` tagged with ``task_id`` under ``QUESTION_TAG`` (unchanged when already tagged or no id)."""
    if not task_id or tagged_task_id(params, QUESTION_TAG) is not None:
        return params
    meta = params.get("_meta")
    meta = meta if isinstance(meta, dict) else {}
    return {**params, "_meta": {**meta, QUESTION_TAG: {"taskId": task_id}}}


def question_task_id(params: dict[str, Any]) -> str | None:
    """The task a question handed to a handler belongs to (see ``tag_question``)."""
    return tagged_task_id(params, QUESTION_TAG)
