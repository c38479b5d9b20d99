"""How tasks and results read as text: the one-line repr of a handle and of a result, the summary line, the
saved summary's text with the questions asked and their answers. Pure: no IPython, no widgets, no I/O.

A task is read from its snapshot (``view.TaskView``); a result from the ``ToolResult``. Every form here is
deterministic (``summary_line`` with ``timing=False``): no task ids, no times, no durations, no memory
addresses, so nbval can compare them. Control characters from the server are escaped, and a long text
shows its start and counts the rest.
"""

from __future__ import annotations

import itertools
import json
import reprlib
from typing import TYPE_CHECKING

from ..protocol.types import TextContent
from ..tasks.status import in_words
from .labels import arguments_label
from .plain import HEADLINE_CHARS, cut, first_line, kind_of, plain, short, text_head

if TYPE_CHECKING:
    from ..tasks.results import ToolResult
    from .view import TaskView

#: Characters of result text in the one-line text forms.
TEXT_REPR_CHARS = 200
#: Content kinds listed in the text form (``content=[image/png, text, …]``), the rest counted.
TEXT_REPR_KINDS = 8
#: Characters of a status or progress message, or of a pending question, that a view shows.
MESSAGE_CHARS = 2_000
#: Pending questions listed in the task view.
QUESTIONS_SHOWN = 5
#: Questions asked (and how each was answered) kept in a saved summary; the rest are counted.
ANSWERS_SHOWN = 10
#: Characters of one answer's values in a saved summary (all of them, and each one).
ANSWER_CHARS = 200
ANSWER_VALUE_CHARS = 80
#: What a task's static summary says before it ends.
RUNNING_LABEL = "running…"

_short_repr = reprlib.Repr()
_short_repr.maxlevel, _short_repr.maxdict, _short_repr.maxlist = 3, 8, 8
_short_repr.maxstring, _short_repr.maxother = 60, 60


def task_text(view: TaskView) -> str:
    """``<TaskHandle research on demo: completed>``: stable, one line (no id, no times). The status is
    the one views show (``error`` for a tool error, see ``status.shown_status``)."""
    return f"<TaskHandle {plain(view.tool)} on {plain(view.server)}: {plain(view.status)}>"


def result_text(result: ToolResult) -> str:
    """``ToolResult(text='…', structured={…}, is_error=False)``, text cut to 200 characters
    (``text='…'… (4,999,800 more characters)``).

    ``content=[…]`` lists the block kinds when there is more than text (the first
    :data:`TEXT_REPR_KINDS`, then ``… N more``). Deterministic for a result.
    """
    text, more = text_head(result.content, TEXT_REPR_CHARS)
    parts = [f"text={text!r}" + (f"… ({more:,} more characters)" if more else "")]
    content = result.content
    if any(not isinstance(b, TextContent) for b in content):
        kinds = [plain(short(kind_of(b), 40) or "") for b in itertools.islice(content, TEXT_REPR_KINDS)]
        if len(content) > TEXT_REPR_KINDS:
            kinds.append(f"… {len(content) - TEXT_REPR_KINDS:,} more")
        parts.append(f"content=[{', '.join(kinds)}]")
    if result.structured is not None:
        structured, left_out = cut(plain(_short_repr.repr(result.structured)), TEXT_REPR_CHARS)
        parts.append(f"structured={structured}{'…' if left_out else ''}")
    parts.append(f"is_error={result.is_error}")
    return f"ToolResult({', '.join(parts)})"


def summary_line(view: TaskView, *, timing: bool = True) -> str:
    """One line: ``research topic=tides on demo: completed in 2.3 s — <first line of the result>``:
    the task named by its arguments (``labels.arguments_label``, as the live views name it).

    With ``timing=False`` the duration is left out, so the line is stable for the same outcome.
    While the task runs the last part is its status message.
    """
    line = f"{named(view)}: {plain(status_label(view))}"
    if timing and view.done:
        line += f" in {format_duration(view.elapsed)}"
    first = outcome_line(view)
    return f"{line} — {first}" if first else line


def summary_text(view: TaskView) -> str:
    """The saved summary's text: :func:`summary_line` without timing, then one line per question the
    task asked and how it was answered (``  asked: Which depth? → depth=2 (preset answers)``).
    Deterministic for the same outcome."""
    lines = [summary_line(view, timing=False)]
    lines.extend(f"  asked: {question} → {answer}" for question, answer in answered(view))
    more = len(view.asked) - ANSWERS_SHOWN
    if more > 0:
        lines.append(f"  … {more:,} more questions")
    return "\n".join(lines)


def running_line(view: TaskView) -> str:
    """The static summary's text before the task ends: ``slow_compute label=t3 on demo: running…``."""
    return f"{named(view)}: {RUNNING_LABEL}"


def outcome_line(view: TaskView) -> str:
    """The first line of the outcome (the result, the failure) once done, else of the status message."""
    return first_line(_headline(view))


def named(view: TaskView) -> str:
    """``slow_compute label=t3 seconds=40 on demo``: the tool, its arguments' label, the server."""
    tool, server = plain(view.tool), plain(view.server)
    return f"{tool} {plain(view.label)} on {server}" if view.label else f"{tool} on {server}"


def status_label(view: TaskView) -> str:
    """The status in words (``needs input``, ``tool error`` for a result with ``isError`` whatever
    status the server gave it, ``declined``), marked when cached or reconnecting."""
    words = in_words(view.status)
    if view.cached:
        return f"{words} (cached)"
    if view.reconnecting:
        return f"{words}, reconnecting…"
    return words


#: How a question was answered, in words (the handle's ``action``).
_ACTIONS = {"accept": "answered", "decline": "declined", "cancel": "dismissed"}
#: Who answered it (the handle's ``source``).
_SOURCES = {
    "answers": "preset answers",
    "handler": "handler",
    "person": "in the form",
    "no handler": "no one to ask",
}


def answered(view: TaskView) -> list[tuple[str, str]]:
    """The first :data:`ANSWERS_SHOWN` questions the task asked, each with how it was answered, as
    plain one-line text (``("Which depth?", "depth=2 (preset answers)")``): the values given as a
    label (secret-looking keys redacted, registered secrets scrubbed), the action's word when no
    values went back (``declined (in the form)``)."""
    shown = []
    for entry in view.asked[:ANSWERS_SHOWN]:
        question = first_line(str(entry.get("question") or "")) or "(a question)"
        action, source = str(entry.get("action") or ""), str(entry.get("source") or "")
        content = entry.get("content")
        if isinstance(content, dict) and content and action == "accept":
            words = arguments_label(content, ANSWER_CHARS, value_chars=ANSWER_VALUE_CHARS)
        elif content not in (None, {}) and action == "accept":
            words = _cut_words(json.dumps(content, ensure_ascii=False, default=str), ANSWER_CHARS)
        else:
            words = _ACTIONS.get(action, action or "no answer")
        by = _SOURCES.get(source, source)
        shown.append((question, plain(f"{words} ({by})" if by else words)))
    return shown


def format_duration(seconds: float) -> str:
    """``0.4 s``, ``12.3 s``, ``4 min 05 s``, ``2 h 03 min`` (``labextension/src/format.ts`` says the same)."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"


def _cut_words(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _headline(view: TaskView) -> str | None:
    """The status message while it runs; once done the failure, else the result's text, else its kinds."""
    if not view.done:
        return view.status_message
    if view.failure is not None:
        return view.failure
    result = view.result
    if result is None:
        return None
    text, _ = text_head(result.content, HEADLINE_CHARS)
    if text.strip():
        return text
    kinds = [short(kind_of(b), 40) or "?" for b in itertools.islice(result.content, TEXT_REPR_KINDS + 1)]
    return f"[{', '.join(kinds)}]" if kinds else None


__all__ = [
    "ANSWERS_SHOWN",
    "ANSWER_CHARS",
    "ANSWER_VALUE_CHARS",
    "MESSAGE_CHARS",
    "QUESTIONS_SHOWN",
    "RUNNING_LABEL",
    "TEXT_REPR_CHARS",
    "TEXT_REPR_KINDS",
    "answered",
    "format_duration",
    "named",
    "outcome_line",
    "result_text",
    "running_line",
    "status_label",
    "summary_line",
    "summary_text",
    "task_text",
]
