"""How tasks look as static HTML: a task's rich display, the summary a notebook keeps after saving (a box,
or one line for a task the live view showed on one line), a board's table, a result. Pure: no IPython, no
widgets, no I/O.

A task is drawn from its snapshot (``view.TaskView``), a result from its preview (``preview.py``, drawn by
``preview_html.py``). The HTML is self-contained (inline styles from ``styles.py``, badge colours from
``colours.py``, no scripts) and every string that came from a server goes through ``html.escape``. A task's
box fits ``preview.PREVIEW_BUDGET`` bytes as a whole: its result gets what the head left.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from ..tasks.status import in_words
from .colours import FAILURE_TEXT, badge_colours
from .plain import cut, first_line
from .preview import PREVIEW_BUDGET, PREVIEW_TEXT_CHARS, result_preview, utf8_len
from .preview_html import cut_note, preview_html
from .styles import BOX, CELL, LINE, MUTED, ONE_LINE, PRE
from .text import (
    ANSWERS_SHOWN,
    MESSAGE_CHARS,
    QUESTIONS_SHOWN,
    RUNNING_LABEL,
    answered,
    format_duration,
    outcome_line,
)

if TYPE_CHECKING:
    from ..tasks.results import ToolResult
    from .view import TaskView

#: Rows of a board's static table at most (the rest are counted).
BOARD_ROWS = 500
#: Characters of a failure's words in a saved summary.
FAILURE_CHARS = 2_000

_esc = html.escape
#: The colour of a failure's words: muted for a cancelled task (no malfunction), else the failure's.
_CANCELLED_TEXT = "var(--jp-ui-font-color2,#57606a)"


def status_badge_html(status: str) -> str:
    """A coloured pill with the status in words (``needs input``, ``tool error``)."""
    bg, fg = badge_colours(status)
    return (
        f'<span class="mtj-badge" style="background:{bg};color:{fg};border-radius:10px;'
        f'padding:1px 8px;font-size:12px;font-weight:600">{_esc(in_words(status))}</span>'
    )


def task_html(view: TaskView) -> str:
    """A self-contained box: status badge, tool and server, duration, status message, progress
    (while running), and the result preview or the failure message (when done)."""
    done = view.done
    head = f"{status_badge_html(view.status)} {_label_html(view)}"
    took = format_duration(view.elapsed)
    head += (
        f' <span style="{MUTED}">· <span class="mtj-duration">'
        f"{'took ' if done else 'running for '}{took}</span></span>"
    )
    parts = [f"<div>{head}</div>"]
    if view.status_message:
        text, left_out = cut(view.status_message, MESSAGE_CHARS)
        parts.append(f'<div style="{MUTED}">{_esc(text)}{"…" if left_out else ""}</div>')
    if not done and view.progress is not None:
        parts.append(_progress_html(view))
    if view.questions:
        for question in view.questions[:QUESTIONS_SHOWN]:
            text, left_out = cut(question, MESSAGE_CHARS)
            parts.append(f"<div>waiting for input: {_esc(text)}{'…' if left_out else ''}</div>")
        if len(view.questions) > QUESTIONS_SHOWN:
            parts.append(f'<div style="{MUTED}">… {len(view.questions) - QUESTIONS_SHOWN:,} more questions</div>')
    ended = _ended_html(view, parts, box_cost=_TASK_BOX_COST, failure_chars=PREVIEW_TEXT_CHARS)
    if ended is not None:
        parts.append(ended)
    return f'<div class="mtj-task" style="{BOX}">{"".join(parts)}</div>'


def running_html(view: TaskView, *, compact: bool = False) -> str:
    """The static summary before the task ends (one line with ``compact``, as the live view was)."""
    if compact:
        return compact_summary_html(view)
    running = f'<span style="{MUTED}">{RUNNING_LABEL}</span>'
    return f'<div class="mtj-task" style="{BOX}">{running} {_label_html(view)}</div>'


def summary_html(view: TaskView) -> str:
    """The static summary of a task as one box: badge (the status in words), tool with its arguments'
    label (as the live views name it) and server, duration, the questions asked and how each was
    answered, then the failure message (whole up to a limit) or the result preview (rendered markdown,
    tables, images; bounded by ``preview.PREVIEW_BUDGET``). It is what places without a kernel show in
    place of the live widget (a saved notebook on GitHub, nbconvert HTML)."""
    took = f' <span style="{MUTED}">· <span class="mtj-duration">{format_duration(view.elapsed)}</span></span>'
    parts = [f"<div>{status_badge_html(view.status)} {_label_html(view)}{took if view.done else ''}</div>"]
    parts.append(_answered_html(view))
    ended = _ended_html(view, parts, box_cost=_SUMMARY_BOX_COST, failure_chars=FAILURE_CHARS)
    if ended is not None:
        parts.append(ended)
    elif first := outcome_line(view):
        parts.append(f'<div style="{MUTED}">{_esc(first)}</div>')
    return f'<div class="mtj-summary" style="{BOX}">{"".join(parts)}</div>'


def compact_summary_html(view: TaskView) -> str:
    """The static summary of a task the live view showed on one line (``show_task(compact=True)``):
    one line as well, badge (or "running…"), tool and its arguments' label, the first line of the
    outcome (or of the status message), the duration once done; the questions asked and their
    answers below it, small. Thirty of them saved from a loop stay thirty lines, each telling its
    task apart."""
    done = view.done
    badge = status_badge_html(view.status) if done else f'<span style="{MUTED}">{RUNNING_LABEL}</span>'
    first = outcome_line(view)
    colour = FAILURE_TEXT if view.failed and view.status != "cancelled" else _CANCELLED_TEXT
    message = f' <span class="mtj-compact-message" style="color:{colour}">{_esc(first)}</span>' if first else ""
    took = (
        f' <span style="{MUTED}">· <span class="mtj-duration">{format_duration(view.elapsed)}</span></span>'
        if done
        else ""
    )
    return (
        f'<div class="mtj-compact-summary" style="{LINE}"><div style="{ONE_LINE}">{badge} '
        f"{_label_html(view, server=False)}{message}{took}</div>{_answered_html(view)}</div>"
    )


def board_html(rows: list[dict[str, Any]], *, title: str | None = None) -> str:
    """A board's rows (``view.board_row``) as a static table: what places without a kernel show in
    place of the live board (a saved notebook, nbconvert HTML). A history row (``live`` False) is
    marked "history: ORIGIN" beside its tool. The status is a badge in words, the
    duration in ``<span class="mtj-duration">`` (for an nbval sanitize pattern); at most
    :data:`BOARD_ROWS` rows, the rest counted."""
    head = "".join(
        f'<th style="{CELL}">{name}</th>'
        for name in ("status", "tool", "arguments", "server", "took", "message", "task id")
    )
    body = []
    for row in rows[:BOARD_ROWS]:
        started, finished = row.get("started"), row.get("finished")
        took = (
            f'<span class="mtj-duration">{format_duration(finished - started)}</span>'
            if isinstance(started, (int, float)) and isinstance(finished, (int, float))
            else f'<span style="{MUTED}">{"running" if row.get("live") else ""}</span>'
        )
        message, left_out = cut(str(row.get("message") or ""), 200)
        cells = (
            status_badge_html(str(row.get("status", "unknown"))),
            f"<b>{_esc(str(row.get('tool') or '?'))}</b>{_history_mark(row)}",
            _esc(str(row.get("args") or "")),
            _esc(str(row.get("server") or "")),
            took,
            _esc(first_line(message) + ("…" if left_out else "")),
            f'<code style="font-size:11px">{_esc(str(row.get("task_id") or ""))}</code>',
        )
        body.append("<tr>" + "".join(f'<td style="{CELL}">{cell}</td>' for cell in cells) + "</tr>")
    more = len(rows) - BOARD_ROWS
    note = f'<div style="{MUTED}">{more:,} more tasks not shown</div>' if more > 0 else ""
    caption = f'<div style="font-weight:600">{_esc(title)}</div>' if title else ""
    if not rows:
        return f'<div class="mtj-board-summary" style="{BOX}">{caption}<div style="{MUTED}">no tasks</div></div>'
    return (
        f'<div class="mtj-board-summary" style="{BOX}">{caption}<div style="overflow:auto">'
        f'<table style="border-collapse:collapse;font-size:12px;margin:4px 0"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>{note}</div>"
    )


def result_html(
    result: ToolResult, *, boxed: bool = True, budget: int | None = None, status: str | None = None
) -> str:
    """The result preview as HTML: text preformatted, allowed images inline, resource links,
    structured content as a table (list of flat objects) or a collapsible tree. At most ``budget``
    bytes (default ``preview.PREVIEW_BUDGET``), with notes on what was left out. ``status``: the task's,
    which says how a tool error reads (``preview_html.error_title``)."""
    return preview_html(result_preview(result, budget=budget), boxed=boxed, status=status)


def _ended_html(view: TaskView, parts: list[str], *, box_cost: int, failure_chars: int) -> str | None:
    """How a finished task ended: the failure's words (cut to ``failure_chars``), else its result preview
    in the room its box (``box_cost`` and the ``parts`` above) leaves of the budget; None while it runs."""
    if view.failure is not None:
        text, left_out = cut(view.failure, failure_chars)
        colour = _CANCELLED_TEXT if view.status == "cancelled" else FAILURE_TEXT
        return f'<pre style="{PRE};color:{colour}">{_esc(text)}</pre>{cut_note(left_out)}'
    if view.result is not None:
        # The whole box fits the budget: the result gets what the head left.
        used = box_cost + sum(utf8_len(part) for part in parts)
        return result_html(view.result, boxed=False, budget=PREVIEW_BUDGET - used, status=view.status)
    return None


def _label_html(view: TaskView, *, server: bool = True) -> str:
    args = f' <span class="mtj-args" style="{MUTED}">{_esc(view.label)}</span>' if view.label else ""
    on = f'<span style="{MUTED}">on</span>'
    where = f' {on} <span class="mtj-server">{_esc(view.server)}</span>' if server else ""
    return f'<b class="mtj-tool">{_esc(view.tool)}</b>{args}{where}'


def _progress_html(view: TaskView) -> str:
    assert view.progress is not None
    fraction = view.fraction
    total = f"/{view.total:g}" if view.total else ""
    text = f"{view.progress:g}{total}" + (f" ({fraction:.0%})" if fraction is not None else "")
    if view.progress_message:
        text += f" {view.progress_message}"
    bar = ""
    if fraction is not None:
        bar = (
            f'<div style="display:inline-block;width:160px;height:8px;background:#eaeef2;'
            f'border-radius:4px;vertical-align:middle;margin-right:6px"><div style="width:'
            f'{fraction * 100:.1f}%;height:8px;background:#0969da;border-radius:4px"></div></div>'
        )
    return f"<div>{bar}<span>{_esc(text)}</span></div>"


def _answered_html(view: TaskView) -> str:
    """The questions the task asked and how each was answered (see ``text.answered``), or ""."""
    rows = [
        f'<div><span style="{MUTED}">asked</span> {_esc(question)} '
        f'<span style="{MUTED}">→</span> <span class="mtj-answer">{_esc(answer)}</span></div>'
        for question, answer in answered(view)
    ]
    more = len(view.asked) - ANSWERS_SHOWN
    if more > 0:
        rows.append(f'<div style="{MUTED}">… {more:,} more questions</div>')
    return f'<div class="mtj-answered" style="font-size:12px">{"".join(rows)}</div>' if rows else ""


def _history_mark(row: dict[str, Any]) -> str:
    """A history row (``live`` False: an earlier kernel, another notebook, the server's list) says
    so in the saved table, as the live board's history toggle does."""
    if row.get("live", True):
        return ""
    origin = str(row.get("origin") or "")
    return f' <span class="mtj-history" style="{MUTED}">history{": " + _esc(origin) if origin else ""}</span>'


_TASK_BOX_COST = len(f'<div class="mtj-task" style="{BOX}"></div>')
_SUMMARY_BOX_COST = len(f'<div class="mtj-summary" style="{BOX}"></div>')

__all__ = [
    "BOARD_ROWS",
    "board_html",
    "compact_summary_html",
    "result_html",
    "running_html",
    "status_badge_html",
    "summary_html",
    "task_html",
]
