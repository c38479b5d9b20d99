"""Tasks and results as pandas DataFrames. pandas is optional (the ``pandas`` extra): it is imported
only when a frame is asked for, and its absence is a clear error saying how to install it.

``result_frame(result)`` (``ToolResult.to_dataframe()``, kept in ``tasks/result_frame.py``): the structured
content as a table, when it
is a list of records (mappings) or a mapping holding exactly one such list (``{"rows": [...], "total":
3}``); anything else is a ``UsageError`` saying what the content is.

``tasks_frame(handles)`` (``mcp_tasks_jupyter.to_dataframe``): one row per task, in order, with the
columns :data:`TASK_COLUMNS`, then one column per argument (named after it; ``arg.NAME`` where that
name is already a column; ``app_view``, ``view_calls``, ``started_by_view`` and ``started_by_record`` say
what an MCP Apps view did, ``index/view_record.py``), then, for a result whose structured content is a
mapping, one column per field holding a plain value (text, number, boolean, null; ``result.NAME`` where the
name is taken).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..tasks.result_frame import pandas, result_frame
from ..tasks.status import shown_status
from ..views.labels import arguments_label

if TYPE_CHECKING:
    from ..tasks.handle import TaskHandle
    from ..tasks.results import ToolResult

#: The columns every task row has, in order.
TASK_COLUMNS = (
    "server",
    "tool",
    "label",
    "status",
    "started",
    "finished",
    "duration",
    "error",
    "summary",
    "task_id",
    "cached",
    "app_view",
    "view_calls",
    "started_by_view",
    "started_by_record",
)
#: Characters of a result summary.
SUMMARY_CHARS = 120


def task_row(handle: TaskHandle) -> dict[str, Any]:
    """One task as a row (plain Python values; times as epoch seconds)."""
    error: str | None = None
    summary: str | None = None
    structured: Any = None
    if handle.done():
        failure = handle.exception()
        if failure is not None:
            error = f"{type(failure).__name__}: {failure}"
        else:
            result = handle.result()
            summary = result_summary(result)
            structured = result.structured
            if result.is_error:
                error = f"tool error: {summary or ''}".rstrip(": ")
    row: dict[str, Any] = {
        "server": handle.server,
        "tool": handle.tool,
        "label": arguments_label(handle.arguments),
        "status": shown_status(handle),
        "started": handle.started,
        "finished": handle.finished,
        "duration": handle.elapsed if handle.finished is not None else None,
        "error": error,
        "summary": summary,
        "task_id": handle.task_id,
        "cached": handle.cached,
        # MCP Apps: the task's view and how many calls it made; the view that started this task, and its record
        "app_view": view.get("uri") if (view := handle.app_view) else None,
        "view_calls": len(view.get("calls") or []) + int(view.get("more") or 0) if view else None,
        "started_by_view": started.get("view") if (started := handle.started_by) else None,
        "started_by_record": started.get("record") if started else None,
    }
    for key, value in (handle.arguments or {}).items():
        row[f"arg.{key}" if key in row else key] = value
    if isinstance(structured, Mapping):
        for key, value in structured.items():
            if _scalar(value):  # a list or mapping stays in the result (result.to_dataframe() for a table)
                row[f"result.{key}" if key in row else key] = value
    return row


def tasks_frame(handles: Iterable[TaskHandle]) -> Any:
    """One row per task (see the module docstring); ``started``/``finished`` are UTC timestamps,
    ``duration`` seconds (empty while a task runs)."""
    pd = pandas()
    rows = [task_row(h) for h in handles]
    columns: list[str] = list(TASK_COLUMNS)
    for row in rows:
        columns.extend(k for k in row if k not in columns)
    frame = pd.DataFrame(rows, columns=columns)
    for column in ("started", "finished"):
        frame[column] = pd.to_datetime(frame[column], unit="s", utc=True)
    return frame


def to_dataframe(handles: Iterable[TaskHandle]) -> Any:
    """A pandas DataFrame with one row per task of ``handles`` (handles, or a batch of them): server,
    tool, the arguments' label, status, started, finished, duration, error, a summary of the result,
    each argument as a column, and the result's structured fields that hold plain values. Needs pandas
    (``pip install 'mcp-tasks-jupyter[pandas]'``)."""
    return tasks_frame(handles)


def result_summary(result: ToolResult) -> str | None:
    """One line saying what a result holds: its first text line, else its structured content (cut)."""
    line = next((line for line in result.text.splitlines() if line.strip()), "")
    if not line and result.structured is not None:
        line = json.dumps(result.structured, ensure_ascii=False, sort_keys=True, default=str)
    if not line:
        return None
    return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1] + "…"


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


__all__ = [
    "TASK_COLUMNS",
    "arguments_label",
    "pandas",
    "result_frame",
    "result_summary",
    "task_row",
    "tasks_frame",
    "to_dataframe",
]
