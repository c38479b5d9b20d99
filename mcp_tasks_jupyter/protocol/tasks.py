"""The one internal task model every dialect is translated into. No I/O."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

WORKING = "working"
INPUT_REQUIRED = "input_required"
COMPLETED = "completed"
FAILED = "failed"
CANCELLED = "cancelled"
SUBMITTED = "submitted"   # sep1686 only
UNKNOWN = "unknown"       # sep1686 only

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


def _opt_ms(obj: dict[str, Any], key: str, what: str) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(f"invalid {what}: '{key}' must be a non-negative number of milliseconds")
    return int(value)


def _opt_str(obj: dict[str, Any], key: str, what: str) -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise ValueError(f"invalid {what}: '{key}' must be a string")


def parse_task(obj: Any, what: str = "task", *, ttl_key: str = "ttl",
               poll_key: str = "pollInterval") -> TaskState:
    """Validate a wire Task object and return the internal snapshot (raises ValueError)."""
    if not isinstance(obj, dict):
        raise ValueError(f"invalid {what}: expected an object")
    task_id = obj.get("taskId")
    if not isinstance(task_id, str) or not task_id:
        raise ValueError(f"invalid {what}: 'taskId' must be a non-empty string")
    status = obj.get("status")
    if status not in SERVER_STATUSES:
        raise ValueError(f"invalid {what}: unknown status {status!r}")
    return TaskState(
        task_id=task_id,
        status=status,
        status_message=_opt_str(obj, "statusMessage", what),
        created_at=_opt_str(obj, "createdAt", what),
        last_updated_at=_opt_str(obj, "lastUpdatedAt", what),
        ttl_ms=_opt_ms(obj, ttl_key, what),
        poll_interval_ms=_opt_ms(obj, poll_key, what),
    )


def tagged_task_id(params: dict[str, Any], key: str) -> str | None:
    """The task id in ``params._meta[key]`` (a related-task tag), if there is one."""
    meta = params.get("_meta")
    if isinstance(meta, dict):
        related = meta.get(key)
        if isinstance(related, dict) and isinstance(related.get("taskId"), str):
            return related["taskId"]
    return None
