"""What the live views send: a task handle turned into small JSON-able trait values.

Nothing here talks to the front end; the widgets decide when to send. Results are converted once
(when the task ends) and log lines only when new ones arrived, so a flush costs little.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from ...views import view
from ...views.preview import result_preview
from ...views.text import MESSAGE_CHARS, QUESTIONS_SHOWN
from ...views.view import estimated_end, record_view, view_of

if TYPE_CHECKING:
    from ...tasks.handle import TaskHandle

#: Log lines a task widget shows (the newest).
LOG_LINES_SHOWN = 50
LOG_LINE_CHARS = 500
ERROR_CHARS = 20_000


class TaskTraits:
    """Builds the trait values of one task widget from its handle, caching what is costly."""

    def __init__(self, handle: TaskHandle) -> None:
        self.handle = handle
        self._log_key: tuple[int, int] | None = None
        self._log_lines: list[str] = []
        self._created_key: str | None = None
        self._created: float | None = None
        self._preview: dict[str, Any] | None = None
        self._error: str | None = None
        self._finished_seen = False
        # (when seen, fraction) of the first and the latest progress with a known total: the ETA's rate.
        self._progress_seen: Any = None
        self._progress_first: tuple[float, float] | None = None
        self._progress_latest: tuple[float, float] | None = None

    def traits(self) -> dict[str, Any]:
        """The current value of every synced trait that follows the handle."""
        h = self.handle
        seen = view_of(h)
        done = seen.done
        if done and not self._finished_seen:
            self._finished_seen = True
            error = seen.failure
            self._error = error if error is None or len(error) <= ERROR_CHARS else error[:ERROR_CHARS] + "…"
            # Bounded (preview.PREVIEW_BUDGET characters of JSON): this is what the browser is sent.
            self._preview = result_preview(seen.result) if seen.result is not None else None
        return {
            "tool": seen.tool,
            "server": seen.server,
            "status": seen.status,
            "status_message": _cut(seen.message or "", MESSAGE_CHARS),
            "progress": None if h.progress is None else [seen.progress, seen.total, seen.progress_message],
            "started": seen.started,
            "finished": seen.finished,
            "created": self._created_epoch(),
            "ttl_ms": h.ttl_ms,
            "task_id": seen.task_id or "",
            "eta": None if done or seen.needs_input else self._eta(),
            "poll_interval_ms": h.poll_interval_ms,
            "done": done,
            "error": self._error or "",
            "result": self._preview,
            "logs": self._logs(),
            "log_count": len(h.logs),
            "pending": [_cut(q, MESSAGE_CHARS) for q in seen.questions[:QUESTIONS_SHOWN]],
        }

    def _eta(self) -> float | None:
        progress = self.handle.progress
        if progress is not self._progress_seen:  # a new notification: note when it came
            self._progress_seen = progress
            fraction = None if progress is None else progress.fraction
            if fraction is not None:
                self._progress_latest = (time.time(), fraction)
                if self._progress_first is None:
                    self._progress_first = self._progress_latest
        if self._progress_latest is None:
            return None
        first = None if self._progress_first is self._progress_latest else self._progress_first
        return estimated_end(self.handle.started, first, self._progress_latest)

    def _created_epoch(self) -> float | None:
        created_at = self.handle.created_at
        if created_at != self._created_key:
            self._created_key, self._created = created_at, view.epoch(created_at)
        return self._created

    def _logs(self) -> list[str]:
        logs = self.handle.logs
        key = (len(logs), id(logs[-1]) if logs else 0)
        if key != self._log_key:
            self._log_key = key
            start = max(0, len(logs) - LOG_LINES_SHOWN)
            self._log_lines = [format_log(logs[i]) for i in range(start, len(logs))]
        return self._log_lines


def changed_fields(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Of ``new``, the fields whose value differs from ``old``'s (one ``old`` lacks counts as changed):
    what the board's rows and the side panel's entries send after the first time."""
    return {name: value for name, value in new.items() if name not in old or old[name] != value}


def board_row(key: int, handle: TaskHandle) -> dict[str, Any]:
    """One board row of a followed handle (``view.board_row``: named fields; ``live`` True)."""
    return view.board_row(key, view_of(handle))


def static_board_row(
    key: int,
    *,
    tool: str | None,
    server: str,
    status: str,
    message: str | None,
    task_id: str | None,
    created_at: str | None = None,
    updated_at: str | None = None,
    arguments: dict[str, Any] | None = None,
    started: float | None = None,
    finished: float | None = None,
) -> dict[str, Any]:
    """A board row of a task known only from the task index or the server's ``tasks/list``: its
    last known status, never ticking (``live`` False); ``started``/``finished`` as ``record_view``."""
    return view.board_row(
        key,
        record_view(
            tool=tool,
            server=server,
            status=status,
            message=message,
            task_id=task_id,
            created_at=created_at,
            updated_at=updated_at,
            arguments=arguments,
            started=started,
            finished=finished,
        ),
    )


def format_log(params: dict[str, Any]) -> str:
    """``info demo: text`` from a ``notifications/message`` params object."""
    level = params.get("level", "info")
    logger = params.get("logger")
    data = params.get("data")
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    head = f"{level} {logger}" if isinstance(logger, str) else str(level)
    line = f"{head}: {text}"
    return line if len(line) <= LOG_LINE_CHARS else line[:LOG_LINE_CHARS] + "…"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
