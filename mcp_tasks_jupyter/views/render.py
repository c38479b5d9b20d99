"""How tasks and results look as text and as static HTML. Pure: no IPython, no widgets, no I/O.

Three views share this module: the ``__repr__`` / ``_repr_mimebundle_`` of ``ToolResult`` and
``TaskHandle``, the static summary a notebook keeps after saving, and the live widget (which sends
:func:`result_preview` as data and draws it in the browser).

* Text forms (:func:`task_text`, :func:`result_text`, :func:`summary_line` with ``timing=False``,
  :func:`summary_text`) are deterministic: no task ids, no times, no durations, no memory addresses,
  so nbval can compare them. Control characters from the server are escaped.
* HTML forms are self-contained (inline styles, no scripts). Every string that came from a server
  (tool names, messages, text, keys, values, mime types, URIs) goes through ``html.escape``.
  Images become ``data:`` URIs only for PNG, JPEG, GIF and WebP with valid base64; links are live
  only for http(s) URIs.
* Every view of a result is bounded, however big the result: a preview (HTML or widget state) fits
  :data:`PREVIEW_BUDGET` bytes, with notes saying how many characters, blocks, rows, keys or
  items were left out; the text forms and the summary show the start of the text and count the
  rest. The result object itself keeps everything. The work is bounded the same way: a preview is
  built piece by piece until its budget is spent, never rendered whole and then cut.
"""

from __future__ import annotations

import base64
import binascii
import html
import itertools
import json
import math
import reprlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import MCPError, TaskError, TaskFailed
from ..protocol.types import AudioContent, EmbeddedResource, ImageContent, ResourceLink, TextContent
from ..tasks import renderers
from ..tasks.status import DECLINED, in_words, shown_status
from .labels import arguments_label
from .markdown import markdown_tree, tree_html

if TYPE_CHECKING:
    from ..tasks.handle import TaskHandle
    from ..tasks.results import ToolResult

#: Characters of result text in the one-line text forms.
TEXT_REPR_CHARS = 200
#: Content kinds listed in the text form (``content=[image/png, text, …]``), the rest counted.
TEXT_REPR_KINDS = 8
#: Most bytes of one result preview: its HTML in UTF-8 (``result_html``, and ``task_html`` as a
#: whole) and its JSON (the widget's ``result`` trait, ASCII) each fit. Everything the preview shows
#: counts at its escaped size (``&lt;`` is 4, ``\u00e9`` is 6), markup too; an image counts its
#: base64 (one bigger than the whole budget is a note instead). Raise it to show bigger images.
PREVIEW_BUDGET = 200_000
#: Content blocks shown in a preview at most; the rest are counted in a note.
PREVIEW_BLOCKS = 200
#: Characters of one text block (or embedded resource's text) shown in a preview at most.
PREVIEW_TEXT_CHARS = 20_000
#: Characters of a link's label or URI, of a status or progress message, of a pending question.
LINK_CHARS = 2_000
MESSAGE_CHARS = 2_000
#: Pending questions listed in the task view.
QUESTIONS_SHOWN = 5
#: Questions asked (and how each was answered) kept in a saved summary; the rest are counted.
ANSWERS_SHOWN = 10
#: Characters of one answer's values in a saved summary (all of them, and each one).
ANSWER_CHARS = 200
ANSWER_VALUE_CHARS = 80
IMAGE_MIMES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
#: Bounds on a structured-content preview.
TREE_ITEMS = 50  # entries shown per object or array
TREE_DEPTH = 6  # nesting levels shown
TREE_STRING = 1_000  # characters per string value
TABLE_ROWS = 200
TABLE_COLUMNS = 30

#: Badge colours (background, text) per status; anything else looks like "unknown".
STATUS_COLOURS: dict[str, tuple[str, str]] = {
    "working": ("#0969da", "#ffffff"),
    "submitted": ("#54aeff", "#0b1f33"),
    "input_required": ("#d4a72c", "#1f1600"),
    "completed": ("#1a7f37", "#ffffff"),
    "error": ("#cf222e", "#ffffff"),
    "declined": ("#cf222e", "#ffffff"),
    "failed": ("#cf222e", "#ffffff"),
    "cancelled": ("#6e7781", "#ffffff"),
    "expired": ("#8250df", "#ffffff"),
    "lost": ("#bc4c00", "#ffffff"),
    "unknown": ("#8c959f", "#1f2328"),
}
RUNNING_LABEL = "running…"

_esc = html.escape
_short_repr = reprlib.Repr()
_short_repr.maxlevel, _short_repr.maxdict, _short_repr.maxlist = 3, 8, 8
_short_repr.maxstring, _short_repr.maxother = 60, 60


# -- plain text ------------------------------------------------------------------------------


def task_text(handle: TaskHandle) -> str:
    """``<TaskHandle research on demo: completed>``: stable, one line (no id, no times). The status is
    the one views show (``error`` for a tool error, see ``status.shown_status``)."""
    return f"<TaskHandle {_label(handle)}: {_plain(shown_status(handle))}>"


def result_text(result: ToolResult) -> str:
    """``ToolResult(text='…', structured={…}, is_error=False)``, text cut to 200 characters
    (``text='…'… (4,999,800 more characters)``).

    ``content=[…]`` lists the block kinds when there is more than text (the first
    :data:`TEXT_REPR_KINDS`, then ``… N more``). Deterministic for a result.
    """
    text, more = _text_head(result.content, TEXT_REPR_CHARS)
    parts = [f"text={text!r}" + (f"… ({more:,} more characters)" if more else "")]
    content = result.content
    if any(not isinstance(b, TextContent) for b in content):
        kinds = [_plain(_short(_kind(b), 40) or "") for b in itertools.islice(content, TEXT_REPR_KINDS)]
        if len(content) > TEXT_REPR_KINDS:
            kinds.append(f"… {len(content) - TEXT_REPR_KINDS:,} more")
        parts.append(f"content=[{', '.join(kinds)}]")
    if result.structured is not None:
        structured, cut = _cut(_plain(_short_repr.repr(result.structured)), TEXT_REPR_CHARS)
        parts.append(f"structured={structured}{'…' if cut else ''}")
    parts.append(f"is_error={result.is_error}")
    return f"ToolResult({', '.join(parts)})"


def summary_line(handle: TaskHandle, *, timing: bool = True) -> str:
    """One line: ``research topic=tides on demo: completed in 2.3 s — <first line of the result>``:
    the task named by its arguments (``labels.arguments_label``, as the live views name it).

    With ``timing=False`` the duration is left out, so the line is stable for the same outcome.
    While the task runs the last part is its status message.
    """
    line = f"{_named(handle)}: {_plain(status_label(handle))}"
    if timing and handle.done():
        line += f" in {format_duration(handle.elapsed)}"
    first = outcome_line(handle)
    return f"{line} — {first}" if first else line


def summary_text(handle: TaskHandle) -> str:
    """The saved summary's text: :func:`summary_line` without timing, then one line per question the
    task asked and how it was answered (``  asked: Which depth? → depth=2 (preset answers)``).
    Deterministic for the same outcome."""
    lines = [summary_line(handle, timing=False)]
    lines.extend(f"  asked: {question} → {answer}" for question, answer in answered(handle))
    more = len(handle.questions) - ANSWERS_SHOWN
    if more > 0:
        lines.append(f"  … {more:,} more questions")
    return "\n".join(lines)


def outcome_line(handle: TaskHandle) -> str:
    """The first line of the outcome (the result, the failure) once done, else of the status message."""
    return _first_line(_headline(handle))


#: How a question was answered, in words (the handle's ``action``).
_ACTIONS = {"accept": "answered", "decline": "declined", "cancel": "dismissed"}
#: Who answered it (the handle's ``source``).
_SOURCES = {
    "answers": "preset answers",
    "handler": "handler",
    "person": "in the form",
    "no handler": "no one to ask",
}


def answered(handle: TaskHandle) -> list[tuple[str, str]]:
    """The first :data:`ANSWERS_SHOWN` questions the task asked, each with how it was answered, as
    plain one-line text (``("Which depth?", "depth=2 (preset answers)")``): the values given as a
    label (secret-looking keys redacted, registered secrets scrubbed), the action's word when no
    values went back (``declined (in the form)``)."""
    shown = []
    for entry in handle.questions[:ANSWERS_SHOWN]:
        question = _first_line(str(entry.get("question") or "")) or "(a question)"
        action, source = str(entry.get("action") or ""), str(entry.get("source") or "")
        content = entry.get("content")
        if isinstance(content, dict) and content and action == "accept":
            words = arguments_label(content, ANSWER_CHARS, value_chars=ANSWER_VALUE_CHARS)
        elif content not in (None, {}) and action == "accept":
            words = _cut_words(json.dumps(content, ensure_ascii=False, default=str), ANSWER_CHARS)
        else:
            words = _ACTIONS.get(action, action or "no answer")
        by = _SOURCES.get(source, source)
        shown.append((question, _plain(f"{words} ({by})" if by else words)))
    return shown


def _cut_words(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def status_label(handle: TaskHandle) -> str:
    """The status in words (``needs input``, ``tool error`` for a result with ``isError`` whatever
    status the server gave it, ``declined``), marked when cached or reconnecting."""
    words = in_words(shown_status(handle))
    if getattr(handle, "cached", False):
        return f"{words} (cached)"
    if handle.reconnecting:
        return f"{words}, reconnecting…"
    return words


def tool_error_text(handle: TaskHandle) -> str | None:
    """The first line of a finished task's result when it is a tool error (``isError``), else None."""
    if not handle.done() or handle.exception() is not None or not handle.result().is_error:
        return None
    text, _ = _text_head(handle.result().content, _HEADLINE_CHARS)
    return _first_line(text) or "the tool reported an error"


#: What a task's views say in place of its status message while its server is being reconnected.
RECONNECTING = "reconnecting to the server…"


def status_message(handle: TaskHandle) -> str | None:
    """The task's status message as shown: ``RECONNECTING`` while its server is being reconnected."""
    return RECONNECTING if handle.reconnecting else handle.status_message


def running_line(handle: TaskHandle) -> str:
    """The static summary's text before the task ends: ``slow_compute label=t3 on demo: running…``."""
    return f"{_named(handle)}: {RUNNING_LABEL}"


def failure_message(handle: TaskHandle) -> str | None:
    """The server's words for why a finished task did not produce a result (None if it did), and,
    for a task started with ``-o VAR``, that VAR stays unbound (the next cell would meet a NameError)."""
    exc = handle.exception()
    if exc is None:
        return None
    words = _failure_words(exc)
    if handle.out_var:
        words += f"\n{handle.out_var} stays unbound: the task ended without a result"
    return words


def _failure_words(exc: BaseException) -> str:
    if isinstance(exc, TaskFailed):
        # The task's last status message, and the JSON-RPC error's own message when it says more.
        words = [exc.status_message] if exc.status_message else []
        error_message = (exc.error or {}).get("message")
        if isinstance(error_message, str) and error_message and error_message not in words:
            words.append(error_message)
        if words:
            return "\n".join(words)
    if isinstance(exc, TaskError):
        return _without_task_label(exc)
    if isinstance(exc, MCPError):
        return exc.detail  # without the "[server]" prefix
    return f"{type(exc).__name__}: {exc}"


def format_duration(seconds: float) -> str:
    """``0.4 s``, ``12.3 s``, ``4 min 05 s``, ``2 h 03 min``."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"


# -- a JSON-able preview of a result (the HTML below and the widget both draw it) -------------


def result_preview(result: ToolResult, *, budget: int | None = None) -> dict[str, Any]:
    """A bounded, JSON-able description of ``result`` for display.

    ``{"is_error", "blocks": [...], "structured": None | {"kind": "table"|"tree", ...}}``; a block is
    ``{"kind": "text", "text", "cut"}``, ``{"kind": "image", "mime", "data"}`` (allowed mime, valid
    base64), ``{"kind": "link", "label", "uri", "href"}`` (href only for http(s)),
    ``{"kind": "resource", "uri", "text", "cut"}`` or ``{"kind": "note", "text"}``.
    Values are the server's own strings: whoever draws them must escape them.

    The preview fits ``budget`` bytes (default :data:`PREVIEW_BUDGET`) both as the HTML of
    :func:`preview_html` and as JSON: blocks are taken in order while they fit (and at most
    :data:`PREVIEW_BLOCKS` of them), the rest are counted in a last note ("… N more blocks not
    shown"); a quarter of the budget is kept for the structured content. It is built piece by
    piece, so a huge result costs no more work than a preview that fills the budget.
    """
    budget = PREVIEW_BUDGET if budget is None else budget
    colour = _ERROR_COLOUR if result.is_error else ""
    room = _Room(budget - _FRAME_COST)
    reserve = room.left // 4 if result.structured is not None else 0
    room.left -= reserve + _TAIL_NOTE_COST
    capacity = room.left
    content = result.content
    blocks: list[dict[str, Any]] = []
    costs: list[int] = []
    for block in content:
        if len(blocks) >= PREVIEW_BLOCKS:
            break
        entry = _block_preview(block, room.left, capacity)
        cost = 0 if entry is None else _block_cost(entry, colour)
        if entry is None or not room.take(cost):
            break
        blocks.append(entry)
        costs.append(cost)
    room.left += _TAIL_NOTE_COST
    if len(blocks) < len(content):
        tail = _note(_more_blocks_text(content, len(blocks)))
        while not room.take(_block_cost(tail, colour)) and blocks:  # give way to the note
            blocks.pop()
            room.left += costs.pop()
            tail = _note(_more_blocks_text(content, len(blocks)))
        blocks.append(tail)
    room.left += reserve
    return {"is_error": result.is_error, "blocks": blocks, "structured": _structured(result.structured, room)}


def structured_preview(value: Any, *, budget: int | None = None) -> dict[str, Any] | None:
    """A table for a list of flat objects, else a bounded tree; its HTML and its JSON fit ``budget``
    bytes (default :data:`PREVIEW_BUDGET`). A tree node is ``{"t": "o"|"a", "items", "more"}`` for
    objects (items are ``[key, node]``) and arrays, ``{"t": "v", "v", "cut"}`` for scalars,
    ``{"t": "cut", "n"}`` past the depth limit: at most :data:`TREE_ITEMS` entries per object or
    array, :data:`TREE_DEPTH` levels, :data:`TREE_STRING` characters per key or string, entries
    taken depth first while they fit, the rest counted in ``more``."""
    return _structured(value, _Room(PREVIEW_BUDGET if budget is None else budget))


def _structured(value: Any, room: _Room) -> dict[str, Any] | None:
    if value is None:
        return None
    if _is_flat_table(value):
        return _table(value, room)
    records = _records_in_object(value)
    if records is not None:
        key, fields = records
        return _table(value[key], room, caption=key, fields=fields)
    room.take(_TREE_FRAME_COST)
    return {"kind": "tree", "node": _tree(value, 0, room, None) or _cut_node(value)}


class _Room:
    """What is left of a preview's budget, in bytes (of HTML and of JSON, whichever is more)."""

    __slots__ = ("left",)

    def __init__(self, left: int) -> None:
        self.left = left

    def take(self, cost: int) -> bool:
        """Spend ``cost`` if it fits (True), else spend nothing (False)."""
        if cost > self.left:
            return False
        self.left -= cost
        return True


def _block_preview(block: Any, room: int, capacity: int) -> dict[str, Any] | None:
    """One block's preview, its text cut to fit ``room``; None when it cannot be shown in the room
    left. ``capacity`` is the room all blocks had: an image bigger than that becomes a note."""
    if isinstance(block, TextContent):
        text = _fit(block.text[:PREVIEW_TEXT_CHARS], room - _TEXT_BLOCK_COST)
        if not text and block.text:
            return None
        plain = {"kind": "text", "text": text, "cut": len(block.text) - len(text)}
        tree = markdown_tree(text)
        if tree is None:
            return plain
        rendered = {"kind": "markdown", "text": text, "tree": tree, "cut": plain["cut"]}
        # Markup costs room: markdown that does not fit is shown as the text it is.
        return rendered if _block_cost(rendered, "") <= room else plain
    if isinstance(block, ImageContent):
        return _image(block.mime_type, block.data, room, capacity)
    if isinstance(block, AudioContent):
        return _note(f"audio ({_short(block.mime_type)}) not shown")
    if isinstance(block, ResourceLink):
        uri = _short(block.uri, LINK_CHARS)
        href = uri if _is_http(block.uri) and uri == block.uri else None  # a cut URI is no link
        return {"kind": "link", "label": _short(block.title or block.name, LINK_CHARS), "uri": uri, "href": href}
    if isinstance(block, EmbeddedResource):
        res = block.resource
        uri = _short(res.uri, LINK_CHARS)
        head = {"kind": "resource", "uri": uri, "text": "", "cut": _BIG, "mime": _short(res.mime_type)}
        text = _fit((res.text or "")[:PREVIEW_TEXT_CHARS], room - _block_cost(head, ""))
        if res.text and not text:
            return None
        return {**head, "text": text if res.text else None, "cut": len(res.text or "") - len(text)}
    return _note(f"content of type {_short(block.type)} not shown")


def _image(mime: str, data: str, room: int, capacity: int) -> dict[str, Any] | None:
    """An image block if it is an allowed type with valid base64 and fits ``room``; a note if it
    can never be shown (a type not allowed, invalid base64, bigger than ``capacity``); None if it
    only lacks room now. Its base64 is checked only once it fits."""
    if mime not in IMAGE_MIMES:
        return _note(f"image ({_short(mime)}) not shown")
    if len(data) + _IMAGE_BLOCK_COST > capacity:
        return _note(
            f"image ({mime}, {len(data) * 3 // 4:,} bytes) too large to show: a preview holds "
            f"{PREVIEW_BUDGET:,} bytes (render.PREVIEW_BUDGET)"
        )
    if len(data) + _IMAGE_BLOCK_COST > room:
        return None
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return _note(f"image ({mime}) with invalid base64 data not shown")
    return {"kind": "image", "mime": mime, "data": data}


def _more_blocks_text(content: list[Any], shown: int) -> str:
    """``… 9,800 more blocks not shown: text ×9,700 (1,234,567 characters), image/png ×100``."""
    counts: dict[str, int] = {}  # the first few other kinds; blocks of any further kind are "other"
    texts = chars = other = 0
    for block in itertools.islice(content, shown, None):
        if isinstance(block, TextContent):
            texts += 1
            chars += len(block.text)
            continue
        kind = _short(_kind(block), 40) or "?"
        if kind in counts or len(counts) < 4:
            counts[kind] = counts.get(kind, 0) + 1
        else:
            other += 1
    kinds = [f"text ×{texts:,} ({chars:,} characters)"] if texts else []
    kinds += [f"{kind} ×{count:,}" for kind, count in counts.items()]
    if other:
        kinds.append(f"other ×{other:,}")
    n = len(content) - shown
    return f"… {n:,} more block{'s' if n != 1 else ''} not shown: {', '.join(kinds)}"


def _records_in_object(value: Any) -> tuple[Any, dict[Any, Any]] | None:
    """``(key, other entries)`` when ``value`` is an object with one list of flat records under
    ``key`` and scalars under every other key (at most :data:`TREE_ITEMS` of them), else None."""
    if not isinstance(value, dict) or len(value) > TREE_ITEMS + 1:
        return None
    tables = [k for k, v in value.items() if isinstance(v, list)]
    if len(tables) != 1 or not _is_flat_table(value[tables[0]]):
        return None
    fields = {k: v for k, v in value.items() if k != tables[0]}
    if any(isinstance(v, (dict, list)) for v in fields.values()):
        return None
    return tables[0], fields


def _table(
    rows: list[dict[str, Any]], room: _Room, *, caption: Any = None, fields: dict[Any, Any] | None = None
) -> dict[str, Any]:
    """A table of the first rows and columns that fit ``room`` (the columns of the first
    :data:`TABLE_ROWS` rows: no other row can be shown). ``caption`` names the key the rows were
    under; ``fields`` are the scalars beside them (``[[key, text]]``, shown above the table)."""
    shown_caption = None
    shown_fields: list[list[str]] = []
    if caption is not None:
        shown_caption = _fit(str(caption)[:TREE_STRING], room.left // 4)
        room.take(_CAPTION_COST + _text_len(shown_caption))
        for key, field in (fields or {}).items():
            pair = [_fit(str(key)[:TREE_STRING], room.left // 8), _cell(field)]
            if not room.take(_FIELD_COST + _text_len(pair[0]) + _text_len(pair[1])):
                break
            shown_fields.append(pair)
    names: dict[Any, None] = {}
    for row in itertools.islice(rows, TABLE_ROWS):
        for name in row:
            names.setdefault(name)
    room.take(_TABLE_FRAME_COST)
    keys: list[Any] = []
    columns: list[str] = []
    for name in itertools.islice(names, TABLE_COLUMNS):
        label = _fit(str(name)[:TREE_STRING], room.left - _HEAD_CELL_COST)
        if not room.take(_HEAD_CELL_COST + _text_len(label)):
            break
        keys.append(name)
        columns.append(label)
    shown: list[list[str]] = []
    for row in itertools.islice(rows, TABLE_ROWS):
        cells = [_cell(row.get(key)) for key in keys]
        if not room.take(_ROW_COST + sum(_CELL_COST + _text_len(cell) for cell in cells)):
            break
        shown.append(cells)
    return {
        "kind": "table",
        "columns": columns,
        "rows": shown,
        "more_rows": len(rows) - len(shown),
        "more_columns": len(names) - len(columns),
        "caption": shown_caption,
        "fields": shown_fields,
    }


def _tree(value: Any, depth: int, room: _Room, key: str | None) -> dict[str, Any] | None:
    """The node of ``value`` (labelled ``key``) that fits ``room``, None if not even its smallest form does."""
    if isinstance(value, (dict, list, tuple)):
        if depth >= TREE_DEPTH:
            node = _cut_node(value)
            return node if room.take(_node_cost(node, key)) else None
        is_object = isinstance(value, dict)
        node = {"t": "o" if is_object else "a", "items": [], "more": 0}
        if not room.take(_node_cost({**node, "more": _BIG}, key)):
            return None
        items: list[Any] = node["items"]
        entries = value.items() if isinstance(value, dict) else enumerate(value)
        for name, child_value in itertools.islice(entries, TREE_ITEMS):
            label = _key_label(name, room.left // 2) if is_object else f"[{name}]"
            child = _tree(child_value, depth + 1, room, label)
            if child is None:
                break
            items.append([label, child] if is_object else child)
        node["more"] = len(value) - len(items)
        return node
    scalar = _scalar(value)
    if isinstance(scalar, str):
        empty = {"t": "v", "v": "", "cut": _BIG}
        text = _fit(scalar[:TREE_STRING], room.left - _node_cost(empty, key), _leaf_len)
        node = {"t": "v", "v": text, "cut": len(scalar) - len(text)}
    else:
        node = {"t": "v", "v": scalar, "cut": 0}
    return node if room.take(_node_cost(node, key)) else None


def _cut_node(value: Any) -> dict[str, Any]:
    """The smallest node for ``value`` (when a budget is too small for anything else)."""
    if isinstance(value, (dict, list, tuple)):
        return {"t": "cut", "kind": "object" if isinstance(value, dict) else "array", "n": len(value)}
    scalar = _scalar(value)
    if isinstance(scalar, str):
        return {"t": "v", "v": "", "cut": len(scalar)}
    return {"t": "v", "v": scalar, "cut": 0}


def _key_label(key: Any, room: int) -> str:
    """An object key as a label: at most TREE_STRING characters (and ``room``), "…" when cut."""
    key = key if isinstance(key, str) else str(key)
    label = _fit(key[:TREE_STRING], room)
    return label if len(label) == len(key) else label + "…"


# -- HTML --------------------------------------------------------------------------------------

# JupyterLab's theme variables where there are some (the light theme's colours elsewhere): a summary
# shown in a dark JupyterLab (an untrusted notebook) has no white boxes.
_BOX = (
    "font-family:var(--jp-ui-font-family,system-ui,-apple-system,'Segoe UI',sans-serif);font-size:13px;"
    "line-height:1.4;border:1px solid var(--jp-border-color1,#d0d7de);border-radius:6px;padding:6px 10px;"
    "margin:2px 0;max-width:100%"
)
_PRE = (
    "white-space:pre-wrap;word-break:break-word;margin:4px 0;padding:4px 6px;"
    "background:var(--jp-layout-color2,#f6f8fa);border-radius:4px;max-height:24em;overflow:auto;font-size:12px"
)
_MUTED = "color:var(--jp-ui-font-color2,#57606a)"
# A compact summary: one line, as the live compact view (no box: thirty of them read as a list).
_LINE = (
    "font-family:var(--jp-ui-font-family,system-ui,-apple-system,'Segoe UI',sans-serif);font-size:13px;"
    "line-height:20px;padding:1px 4px;max-width:100%"
)
_ONE_LINE = "white-space:nowrap;overflow:hidden;text-overflow:ellipsis"
_CELL = "border:1px solid var(--jp-border-color1,#d0d7de);padding:2px 6px;text-align:left;vertical-align:top"


def status_badge_html(status: str) -> str:
    """A coloured pill with the status in words (``needs input``, ``tool error``)."""
    bg, fg = STATUS_COLOURS.get(status, STATUS_COLOURS["unknown"])
    return (
        f'<span class="mtj-badge" style="background:{bg};color:{fg};border-radius:10px;'
        f'padding:1px 8px;font-size:12px;font-weight:600">{_esc(in_words(status))}</span>'
    )


def task_html(handle: TaskHandle) -> str:
    """A self-contained box: status badge, tool and server, duration, status message, progress
    (while running), and the result preview or the failure message (when done)."""
    done = handle.done()
    head = f"{status_badge_html(shown_status(handle))} {_label_html(handle)}"
    took = format_duration(handle.elapsed)
    head += (
        f' <span style="{_MUTED}">· <span class="mtj-duration">'
        f"{'took ' if done else 'running for '}{took}</span></span>"
    )
    parts = [f"<div>{head}</div>"]
    if handle.status_message:
        text, cut = _cut(handle.status_message, MESSAGE_CHARS)
        parts.append(f'<div style="{_MUTED}">{_esc(text)}{"…" if cut else ""}</div>')
    if not done and handle.progress is not None:
        parts.append(_progress_html(handle))
    if handle.pending_input:
        questions = pending_questions(handle)
        for question in questions[:QUESTIONS_SHOWN]:
            text, cut = _cut(question, MESSAGE_CHARS)
            parts.append(f"<div>waiting for input: {_esc(text)}{'…' if cut else ''}</div>")
        if len(questions) > QUESTIONS_SHOWN:
            parts.append(f'<div style="{_MUTED}">… {len(questions) - QUESTIONS_SHOWN:,} more questions</div>')
    if done:
        failure = failure_message(handle)
        if failure is not None:
            colour = "var(--jp-ui-font-color2,#57606a)" if handle.status == "cancelled" else "#cf222e"
            text, cut = _cut(failure, PREVIEW_TEXT_CHARS)
            parts.append(f'<pre style="{_PRE};color:{colour}">{_esc(text)}</pre>{_cut_note(cut)}')
        else:
            # The whole box fits the budget: the result gets what the head left.
            used = _TASK_BOX_COST + sum(_utf8_len(part) for part in parts)
            parts.append(
                result_html(handle.result(), boxed=False, budget=PREVIEW_BUDGET - used, status=handle.status)
            )
    return f'<div class="mtj-task" style="{_BOX}">{"".join(parts)}</div>'


def running_html(handle: TaskHandle, *, compact: bool = False) -> str:
    """The static summary before the task ends (one line with ``compact``, as the live view was)."""
    if compact:
        return compact_summary_html(handle)
    return (
        f'<div class="mtj-task" style="{_BOX}"><span style="{_MUTED}">{RUNNING_LABEL}</span> '
        f"{_label_html(handle)}</div>"
    )


def summary_html(handle: TaskHandle) -> str:
    """The static summary of a task as one box: badge (the status in words), tool with its arguments'
    label (as the live views name it) and server, duration, the questions asked and how each was
    answered, then the failure message (whole up to a limit) or the result preview (rendered markdown,
    tables, images; bounded by :data:`PREVIEW_BUDGET`). It is what places without a kernel show in
    place of the live widget (a saved notebook on GitHub, nbconvert HTML)."""
    done = handle.done()
    took = (
        (f' <span style="{_MUTED}">· <span class="mtj-duration">{format_duration(handle.elapsed)}</span></span>')
        if done
        else ""
    )
    parts = [f"<div>{status_badge_html(shown_status(handle))} {_label_html(handle)}{took}</div>"]
    parts.append(_answered_html(handle))
    failure = failure_message(handle) if done else None
    if failure is not None:
        text, cut = _cut(failure, 2_000)
        colour = "var(--jp-ui-font-color2,#57606a)" if handle.status == "cancelled" else "#cf222e"
        parts.append(f'<pre style="{_PRE};color:{colour}">{_esc(text)}</pre>{_cut_note(cut)}')
    elif done:
        used = _SUMMARY_BOX_COST + sum(_utf8_len(part) for part in parts)
        parts.append(result_html(handle.result(), boxed=False, budget=PREVIEW_BUDGET - used, status=handle.status))
    else:
        first = _first_line(_headline(handle))
        if first:
            parts.append(f'<div style="{_MUTED}">{_esc(first)}</div>')
    return f'<div class="mtj-summary" style="{_BOX}">{"".join(parts)}</div>'


def compact_summary_html(handle: TaskHandle) -> str:
    """The static summary of a task the live view showed on one line (``show_task(compact=True)``):
    one line as well, badge (or "running…"), tool and its arguments' label, the first line of the
    outcome (or of the status message), the duration once done; the questions asked and their
    answers below it, small. Thirty of them saved from a loop stay thirty lines, each telling its
    task apart."""
    done = handle.done()
    badge = status_badge_html(shown_status(handle)) if done else f'<span style="{_MUTED}">{RUNNING_LABEL}</span>'
    first = outcome_line(handle)
    failed = done and (handle.exception() is not None or handle.result().is_error)
    colour = "#cf222e" if failed and handle.status != "cancelled" else "var(--jp-ui-font-color2,#57606a)"
    message = f' <span class="mtj-compact-message" style="color:{colour}">{_esc(first)}</span>' if first else ""
    took = (
        f' <span style="{_MUTED}">· <span class="mtj-duration">{format_duration(handle.elapsed)}</span></span>'
        if done
        else ""
    )
    return (
        f'<div class="mtj-compact-summary" style="{_LINE}"><div style="{_ONE_LINE}">{badge} '
        f"{_label_html(handle, server=False)}{message}{took}</div>{_answered_html(handle)}</div>"
    )


def _answered_html(handle: TaskHandle) -> str:
    """The questions the task asked and how each was answered (see :func:`answered`), or ""."""
    rows = [
        f'<div><span style="{_MUTED}">asked</span> {_esc(question)} '
        f'<span style="{_MUTED}">→</span> <span class="mtj-answer">{_esc(answer)}</span></div>'
        for question, answer in answered(handle)
    ]
    more = len(handle.questions) - ANSWERS_SHOWN
    if more > 0:
        rows.append(f'<div style="{_MUTED}">… {more:,} more questions</div>')
    return f'<div class="mtj-answered" style="font-size:12px">{"".join(rows)}</div>' if rows else ""


#: Rows of a board's static table at most (the rest are counted).
BOARD_ROWS = 500


def board_html(rows: list[dict[str, Any]], *, title: str | None = None) -> str:
    """A board's rows (``view.board_row``) as a static table: what places without a kernel show in
    place of the live board (a saved notebook, nbconvert HTML). A history row (``live`` False) is
    marked "history: ORIGIN" beside its tool. The status is a badge in words, the
    duration in ``<span class="mtj-duration">`` (for an nbval sanitize pattern); at most
    :data:`BOARD_ROWS` rows, the rest counted."""
    head = "".join(
        f'<th style="{_CELL}">{name}</th>'
        for name in ("status", "tool", "arguments", "server", "took", "message", "task id")
    )
    body = []
    for row in rows[:BOARD_ROWS]:
        started, finished = row.get("started"), row.get("finished")
        took = (
            f'<span class="mtj-duration">{format_duration(finished - started)}</span>'
            if isinstance(started, (int, float)) and isinstance(finished, (int, float))
            else f'<span style="{_MUTED}">{"running" if row.get("live") else ""}</span>'
        )
        message, cut = _cut(str(row.get("message") or ""), 200)
        cells = (
            status_badge_html(str(row.get("status", "unknown"))),
            f"<b>{_esc(str(row.get('tool') or '?'))}</b>{_history_mark(row)}",
            _esc(str(row.get("args") or "")),
            _esc(str(row.get("server") or "")),
            took,
            _esc(_first_line(message) + ("…" if cut else "")),
            f'<code style="font-size:11px">{_esc(str(row.get("task_id") or ""))}</code>',
        )
        body.append("<tr>" + "".join(f'<td style="{_CELL}">{cell}</td>' for cell in cells) + "</tr>")
    more = len(rows) - BOARD_ROWS
    note = f'<div style="{_MUTED}">{more:,} more tasks not shown</div>' if more > 0 else ""
    caption = f'<div style="font-weight:600">{_esc(title)}</div>' if title else ""
    if not rows:
        return f'<div class="mtj-board-summary" style="{_BOX}">{caption}<div style="{_MUTED}">no tasks</div></div>'
    return (
        f'<div class="mtj-board-summary" style="{_BOX}">{caption}<div style="overflow:auto">'
        f'<table style="border-collapse:collapse;font-size:12px;margin:4px 0"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>{note}</div>"
    )


def _history_mark(row: dict[str, Any]) -> str:
    """A history row (``live`` False: an earlier kernel, another notebook, the server's list) says
    so in the saved table, as the live board's history toggle does."""
    if row.get("live", True):
        return ""
    origin = str(row.get("origin") or "")
    return f' <span class="mtj-history" style="{_MUTED}">history{": " + _esc(origin) if origin else ""}</span>'


def result_html(
    result: ToolResult, *, boxed: bool = True, budget: int | None = None, status: str | None = None
) -> str:
    """The result preview as HTML: text preformatted, allowed images inline, resource links,
    structured content as a table (list of flat objects) or a collapsible tree. At most ``budget``
    bytes (default :data:`PREVIEW_BUDGET`), with notes on what was left out. ``status``: the task's,
    which says how a tool error reads (:func:`error_title`)."""
    return preview_html(result_preview(result, budget=budget), boxed=boxed, status=status)


def error_title(status: str | None) -> str:
    """What heads a result that is a tool error: a declined question is no malfunction (the widget's
    ``errorTitle`` in ``preview.ts`` says the same)."""
    if status == DECLINED:
        return "the question was declined, and the tool stopped"
    return "the tool reported an error"


def preview_html(preview: dict[str, Any], *, boxed: bool = True, status: str | None = None) -> str:
    """HTML for a :func:`result_preview` dict."""
    parts: list[str] = []
    if preview["is_error"]:
        # Words, not a second badge: the box the preview sits in has the status badge already.
        parts.append(f'<div style="font-weight:600;color:#cf222e">{error_title(status)}</div>')
    colour = _ERROR_COLOUR if preview["is_error"] else ""
    parts.extend(_block_html(block, colour) for block in preview["blocks"])
    structured = preview["structured"]
    if structured is not None:
        parts.append(_structured_html(structured))
    body = "".join(parts) or f'<div style="{_MUTED}">(no content)</div>'
    return f'<div class="mtj-result" style="{_BOX}">{body}</div>' if boxed else body


def _block_html(block: dict[str, Any], colour: str) -> str:
    kind = block["kind"]
    if kind == "text":
        return f'<pre style="{_PRE}{colour}">{_esc(block["text"])}</pre>{_cut_note(block["cut"])}'
    if kind == "markdown":
        return f'<div class="mtj-md">{tree_html(block["tree"])}</div>{_cut_note(block["cut"])}'
    if kind == "image":  # an allowed mime type and valid base64: nothing to escape in the URI
        return (
            f'<div><img alt="{_esc(block["mime"])} image" style="max-width:100%" '
            f'src="data:{block["mime"]};base64,{block["data"]}"></div>'
        )
    if kind == "link":
        label, uri = _esc(block["label"]), _esc(block["uri"])
        if block["href"]:
            return (
                f'<div>link: <a href="{_esc(block["href"])}" target="_blank" '
                f'rel="noopener noreferrer">{label}</a> <code>{uri}</code></div>'
            )
        return f"<div>link: {label} <code>{uri}</code></div>"
    if kind == "resource":
        head = f"<div>resource <code>{_esc(block['uri'])}</code></div>"
        if block["text"] is None:
            return head
        return f'{head}<pre style="{_PRE}">{_esc(block["text"])}</pre>{_cut_note(block["cut"])}'
    return f'<div style="{_MUTED}">{_esc(block["text"])}</div>'


def pending_questions(handle: TaskHandle) -> list[str]:
    """What each pending server request asks, as text (elicitation message or the method)."""
    questions = []
    for request in handle.pending_input.values():
        params = request.get("params") if isinstance(request, dict) else None
        message = params.get("message") if isinstance(params, dict) else None
        questions.append(message if isinstance(message, str) else str(request.get("method", "a request")))
    return questions


# -- helpers -----------------------------------------------------------------------------------


def _without_task_label(exc: TaskError) -> str:
    """A task error's own words, without the "tool task <id>: " its message starts with."""
    label = f"task {exc.task_id}" if exc.task_id else "task"
    if exc.tool:
        label = f"{exc.tool} {label}"
    return exc.detail.removeprefix(f"{label}: ")


def _label(handle: TaskHandle) -> str:
    return f"{_plain(handle.tool or '(unknown tool)')} on {_plain(handle.server)}"


def _named(handle: TaskHandle) -> str:
    """``slow_compute label=t3 seconds=40 on demo``: the tool, its arguments' label, the server."""
    label = arguments_label(handle.arguments)
    tool = _plain(handle.tool or "(unknown tool)")
    return f"{tool} {_plain(label)} on {_plain(handle.server)}" if label else f"{tool} on {_plain(handle.server)}"


def _label_html(handle: TaskHandle, *, server: bool = True) -> str:
    label = arguments_label(handle.arguments)
    args = f' <span class="mtj-args" style="{_MUTED}">{_esc(label)}</span>' if label else ""
    on = f'<span style="{_MUTED}">on</span>'
    where = f' {on} <span class="mtj-server">{_esc(handle.server)}</span>' if server else ""
    return f'<b class="mtj-tool">{_esc(handle.tool or "(unknown tool)")}</b>{args}{where}'


def _progress_html(handle: TaskHandle) -> str:
    progress = handle.progress
    assert progress is not None
    fraction = progress.fraction
    total = f"/{progress.total:g}" if progress.total else ""
    text = f"{progress.progress:g}{total}" + (f" ({fraction:.0%})" if fraction is not None else "")
    if progress.message:
        text += f" {progress.message}"
    bar = ""
    if fraction is not None:
        bar = (
            f'<div style="display:inline-block;width:160px;height:8px;background:#eaeef2;'
            f'border-radius:4px;vertical-align:middle;margin-right:6px"><div style="width:'
            f'{fraction * 100:.1f}%;height:8px;background:#0969da;border-radius:4px"></div></div>'
        )
    return f"<div>{bar}<span>{_esc(text)}</span></div>"


def _structured_html(structured: dict[str, Any]) -> str:
    if structured["kind"] == "table":
        head = "".join(f'<th style="{_CELL}">{_esc(c)}</th>' for c in structured["columns"])
        rows = "".join(
            "<tr>" + "".join(f'<td style="{_CELL}">{_esc(v)}</td>' for v in row) + "</tr>"
            for row in structured["rows"]
        )
        notes = []
        if structured["more_rows"]:
            notes.append(f"{structured['more_rows']:,} more rows not shown")
        if structured["more_columns"]:
            notes.append(f"{structured['more_columns']:,} more columns not shown")
        note = f'<div style="{_MUTED}">{"; ".join(notes)}</div>' if notes else ""
        above = ""
        if structured.get("fields"):
            above = "".join(
                f'<span style="margin-right:1em"><b>{_esc(k)}</b>: {_esc(v)}</span>'
                for k, v in structured["fields"]
            )
            above = f'<div style="font-size:12px">{above}</div>'
        caption = structured.get("caption")
        title = f'<caption style="text-align:left;font-weight:600">{_esc(caption)}</caption>' if caption else ""
        return (
            f'{above}<div style="overflow:auto;max-height:30em"><table style="border-collapse:collapse;'
            f'font-size:12px;margin:4px 0">{title}<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'
            f"</div>{note}"
        )
    return (
        f'<details open><summary style="cursor:pointer">structured content</summary>'
        f'<div style="margin-left:1em;font-size:12px">{_tree_html(structured["node"])}</div></details>'
    )


def _tree_html(node: dict[str, Any], key: str | None = None) -> str:
    name = f"<b>{_esc(key)}</b>: " if key is not None else ""
    kind = node["t"]
    if kind == "v":
        return f"<div>{name}<code>{_esc(_json_text(node['v']))}</code>{_cut_note(node['cut'])}</div>"
    if kind == "cut":
        return (
            f'<div>{name}<span style="{_MUTED}">{_size(node["kind"], node["n"])} (too deep to show)</span></div>'
        )
    if kind == "o":
        children = "".join(_tree_html(child, k) for k, child in node["items"])
        size = _size("object", len(node["items"]) + node["more"])
    else:
        children = "".join(_tree_html(child, f"[{i}]") for i, child in enumerate(node["items"]))
        size = _size("array", len(node["items"]) + node["more"])
    more = f'<div style="{_MUTED}">… {node["more"]:,} more not shown</div>' if node["more"] else ""
    return (
        f'<details><summary style="cursor:pointer">{name}<span style="{_MUTED}">{size}</span></summary>'
        f'<div style="margin-left:1.2em">{children}{more}</div></details>'
    )


def _size(kind: str, n: int) -> str:
    return f"{{{n} keys}}" if kind == "object" else f"[{n} items]"


def _cut_note(cut: int) -> str:
    return f'<div style="{_MUTED}">… {cut:,} more characters not shown</div>' if cut else ""


def _note(text: str) -> dict[str, Any]:
    return {"kind": "note", "text": text}


def _kind(block: Any) -> str:
    mime = getattr(block, "mime_type", None)
    return mime if block.type in ("image", "audio") and isinstance(mime, str) else block.type


def _is_http(uri: str) -> bool:
    return uri.lower().startswith(("http://", "https://"))


def _is_flat_table(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(
            isinstance(row, dict) and all(not isinstance(v, (dict, list)) for v in row.values()) for row in value
        )
    )


def _scalar(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    return str(value)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else _json_text(_scalar(value))
    return _cut(text, TREE_STRING)[0]


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _cut(text: str, limit: int) -> tuple[str, int]:
    limit = max(0, limit)
    return (text, 0) if len(text) <= limit else (text[:limit], len(text) - limit)


def _plain(text: str) -> str:
    """Escape control characters (newlines, ANSI escapes) so a one-line form stays one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _first_line(text: str | None) -> str:
    if not text:
        return ""
    for line in text.splitlines():
        if line.strip():
            line, cut = _cut(line.strip(), 120)
            return _plain(line) + ("…" if cut else "")
    return ""


def _headline(handle: TaskHandle) -> str | None:
    if not handle.done():
        return handle.status_message
    failure = failure_message(handle)
    if failure is not None:
        return failure
    result = handle.result()
    text, _ = _text_head(result.content, _HEADLINE_CHARS)
    if text.strip():
        return text
    kinds = [_short(_kind(b), 40) or "?" for b in itertools.islice(result.content, TEXT_REPR_KINDS + 1)]
    return f"[{', '.join(kinds)}]" if kinds else None


#: Characters of a result's text searched for its first line (the summary shows at most 120).
_HEADLINE_CHARS = 4_096


def _text_head(content: list[Any], limit: int) -> tuple[str, int]:
    """The first ``limit`` characters of the text blocks joined by newlines (``ToolResult.text``),
    and how many characters more that text has; without joining it all."""
    parts: list[str] = []
    size = total = 0
    first = True
    for block in content:
        if not isinstance(block, TextContent):
            continue
        if not first:  # the newline between two blocks
            total += 1
            if size < limit:
                parts.append("\n")
                size += 1
        first = False
        total += len(block.text)
        if size < limit:
            piece = block.text[: limit - size]
            parts.append(piece)
            size += len(piece)
    head = "".join(parts)
    return head, total - len(head)


# -- what pieces of a preview cost (bytes of HTML or of JSON, whichever is more) --------------


def _text_len(text: str) -> int:
    """The bytes of ``text`` escaped in HTML (UTF-8), or as a JSON string (without its quotes),
    whichever is more: at least one per character."""
    return max(_utf8_len(_esc(text)), len(json.dumps(text)) - 2)


def _leaf_len(text: str) -> int:
    """The bytes of a tree's string value: drawn as JSON text and escaped in HTML, or sent as JSON."""
    return max(_utf8_len(_esc(_json_text(text))), len(json.dumps(text)))


def _utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _fit(text: str, room: int, measure: Callable[[str], int] = _text_len) -> str:
    """The longest start of ``text`` whose ``measure`` is at most ``room``.

    ``measure`` adds up character by character, each counting at least 1: so dropping the
    overshoot's worth of characters from the end always fits, and two measurements suffice.
    """
    if room <= 0:
        return ""
    piece = text[:room]
    over = measure(piece) - room
    while over > 0 and piece:
        piece = piece[: max(0, len(piece) - over)]
        over = measure(piece) - room
    return piece


def _short(text: str | None, limit: int = 100) -> str | None:
    """A server's string shown inside our own words (a mime type, a block type): cut to ``limit``."""
    return text if text is None or len(text) <= limit else text[:limit] + "…"


def _block_cost(block: dict[str, Any], colour: str) -> int:
    """What a preview block costs: its HTML, or its JSON and the separator in the list."""
    return max(_utf8_len(_block_html(block, colour)), len(json.dumps(block)) + 2)


def _node_cost(node: dict[str, Any], key: str | None) -> int:
    """What a tree node costs without its children: its HTML (label included), or its JSON entry."""
    return max(_utf8_len(_tree_html(node, key)), len(json.dumps([key, node])) + 2)


_BIG = 10**15  # a count as long as any real one, for measuring the notes that carry one
_ERROR_COLOUR = ";color:#cf222e"
_FRAME_COST = max(
    len(preview_html({"is_error": True, "blocks": [], "structured": None})),
    len(json.dumps({"is_error": True, "blocks": [], "structured": None})),
)
_TASK_BOX_COST = len(f'<div class="mtj-task" style="{_BOX}"></div>')
_SUMMARY_BOX_COST = len(f'<div class="mtj-summary" style="{_BOX}"></div>')
_TEXT_BLOCK_COST = _block_cost({"kind": "text", "text": "", "cut": _BIG}, _ERROR_COLOUR)
_IMAGE_BLOCK_COST = max(_block_cost({"kind": "image", "mime": mime, "data": ""}, "") for mime in IMAGE_MIMES)
_TAIL_NOTE_COST = 600  # kept for the "… N more blocks" note (blocks give way if it needs more)
_LEAF = {"t": "v", "v": 0, "cut": 0}
_TREE_FRAME_COST = len(_structured_html({"kind": "tree", "node": _LEAF})) - len(_tree_html(_LEAF))
_TABLE_FRAME_COST = max(
    len(_structured_html({"kind": "table", "columns": [], "rows": [], "more_rows": _BIG, "more_columns": _BIG})),
    len(
        json.dumps(
            {"kind": "table", "columns": [], "rows": [], "more_rows": _BIG, "more_columns": _BIG}
            | {"caption": None, "fields": []}
        )
    ),
)
_CAPTION_COST = max(len('<caption style="text-align:left;font-weight:600"></caption>'), 16)
_FIELD_COST = max(len('<span style="margin-right:1em"><b></b>: </span>'), 10) + 40
_HEAD_CELL_COST = max(len(f'<th style="{_CELL}"></th>'), 4)  # plus the label; JSON: quotes and ", "
_CELL_COST = max(len(f'<td style="{_CELL}"></td>'), 4)
_ROW_COST = max(len("<tr></tr>"), 4)


# The handle's and the result's repr and notebook display draw with these (tasks/ never imports views/).
renderers.install(task_text=task_text, task_html=task_html, result_text=result_text, result_html=result_html)
