"""A result's preview: a bounded, JSON-able description of what it holds, which the static HTML
(``preview_html.py``) and the live widget (its ``result`` trait, drawn by ``labextension/src/widgets/preview.ts``)
both draw.

Every view of a result is bounded, however big the result: a preview fits :data:`PREVIEW_BUDGET` bytes both as
HTML in UTF-8 and as JSON, with notes saying how many characters, blocks, rows, keys or items were left out;
the result object itself keeps everything. The work is bounded the same way: a preview is built piece by
piece until its budget is spent, never rendered whole and then cut. What a piece costs is measured from
the markup ``preview_html.py`` draws it with (the byte costs at the end of this module), so a change of
markup changes its cost with it.

Values in a preview are the server's own strings: whoever draws them escapes them. Images are kept only
for PNG, JPEG, GIF and WebP with valid base64; a link's ``href`` only for an http(s) URI.
"""

from __future__ import annotations

import base64
import binascii
import html
import itertools
import json
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..protocol.types import AudioContent, EmbeddedResource, ImageContent, ResourceLink, TextContent
from .markdown import markdown_tree
from .plain import cut, json_text, kind_of, short
from .preview_html import ERROR_COLOUR, block_html, node_html, preview_html, structured_html
from .styles import CELL

if TYPE_CHECKING:
    from ..tasks.results import ToolResult

#: Most bytes of one result preview: its HTML in UTF-8 (``html.result_html``, and ``html.task_html`` as a
#: whole) and its JSON (the widget's ``result`` trait, ASCII) each fit. Everything the preview shows
#: counts at its escaped size (``&lt;`` is 4, ``\u00e9`` is 6), markup too; an image counts its
#: base64 (one bigger than the whole budget is a note instead). Raise it to show bigger images.
PREVIEW_BUDGET = 200_000
#: Content blocks shown in a preview at most; the rest are counted in a note.
PREVIEW_BLOCKS = 200
#: Characters of one text block (or embedded resource's text) shown in a preview at most.
PREVIEW_TEXT_CHARS = 20_000
#: Characters of a link's label or URI.
LINK_CHARS = 2_000
IMAGE_MIMES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
#: Bounds on a structured-content preview.
TREE_ITEMS = 50  # entries shown per object or array
TREE_DEPTH = 6  # nesting levels shown
TREE_STRING = 1_000  # characters per string value
TABLE_ROWS = 200
TABLE_COLUMNS = 30


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
    colour = ERROR_COLOUR if result.is_error else ""
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
        return _note(f"audio ({short(block.mime_type)}) not shown")
    if isinstance(block, ResourceLink):
        uri = short(block.uri, LINK_CHARS)
        href = uri if _is_http(block.uri) and uri == block.uri else None  # a cut URI is no link
        return {"kind": "link", "label": short(block.title or block.name, LINK_CHARS), "uri": uri, "href": href}
    if isinstance(block, EmbeddedResource):
        res = block.resource
        uri = short(res.uri, LINK_CHARS)
        head = {"kind": "resource", "uri": uri, "text": "", "cut": _BIG, "mime": short(res.mime_type)}
        text = _fit((res.text or "")[:PREVIEW_TEXT_CHARS], room - _block_cost(head, ""))
        if res.text and not text:
            return None
        return {**head, "text": text if res.text else None, "cut": len(res.text or "") - len(text)}
    return _note(f"content of type {short(block.type)} not shown")


def _image(mime: str, data: str, room: int, capacity: int) -> dict[str, Any] | None:
    """An image block if it is an allowed type with valid base64 and fits ``room``; a note if it
    can never be shown (a type not allowed, invalid base64, bigger than ``capacity``); None if it
    only lacks room now. Its base64 is checked only once it fits."""
    if mime not in IMAGE_MIMES:
        return _note(f"image ({short(mime)}) not shown")
    if len(data) + _IMAGE_BLOCK_COST > capacity:
        return _note(
            f"image ({mime}, {len(data) * 3 // 4:,} bytes) too large to show: a preview holds "
            f"{PREVIEW_BUDGET:,} bytes (preview.PREVIEW_BUDGET)"
        )
    if len(data) + _IMAGE_BLOCK_COST > room:
        return None
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return _note(f"image ({mime}) with invalid base64 data not shown")
    return {"kind": "image", "mime": mime, "data": data}


def _more_blocks_text(content: Sequence[Any], shown: int) -> str:
    """``… 9,800 more blocks not shown: text ×9,700 (1,234,567 characters), image/png ×100``."""
    counts: dict[str, int] = {}  # the first few other kinds; blocks of any further kind are "other"
    texts = chars = other = 0
    for block in itertools.islice(content, shown, None):
        if isinstance(block, TextContent):
            texts += 1
            chars += len(block.text)
            continue
        kind = short(kind_of(block), 40) or "?"
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
    text = value if isinstance(value, str) else json_text(_scalar(value))
    return cut(text, TREE_STRING)[0]


def _text_len(text: str) -> int:
    """The bytes of ``text`` escaped in HTML (UTF-8), or as a JSON string (without its quotes),
    whichever is more: at least one per character."""
    return max(utf8_len(html.escape(text)), len(json.dumps(text)) - 2)


def _leaf_len(text: str) -> int:
    """The bytes of a tree's string value: drawn as JSON text and escaped in HTML, or sent as JSON."""
    return max(utf8_len(html.escape(json_text(text))), len(json.dumps(text)))


def utf8_len(text: str) -> int:
    """The bytes of ``text`` in UTF-8 (lone surrogates counted as they would be sent)."""
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


def _block_cost(block: dict[str, Any], colour: str) -> int:
    """What a preview block costs: its HTML, or its JSON and the separator in the list."""
    return max(utf8_len(block_html(block, colour)), len(json.dumps(block)) + 2)


def _node_cost(node: dict[str, Any], key: str | None) -> int:
    """What a tree node costs without its children: its HTML (label included), or its JSON entry."""
    return max(utf8_len(node_html(node, key)), len(json.dumps([key, node])) + 2)


def _note(text: str) -> dict[str, Any]:
    return {"kind": "note", "text": text}


# -- what pieces of a preview cost (bytes of HTML or of JSON, whichever is more), measured from their markup

_BIG = 10**15  # a count as long as any real one, for measuring the notes that carry one
_FRAME_COST = max(
    len(preview_html({"is_error": True, "blocks": [], "structured": None})),
    len(json.dumps({"is_error": True, "blocks": [], "structured": None})),
)
_TEXT_BLOCK_COST = _block_cost({"kind": "text", "text": "", "cut": _BIG}, ERROR_COLOUR)
_IMAGE_BLOCK_COST = max(_block_cost({"kind": "image", "mime": mime, "data": ""}, "") for mime in IMAGE_MIMES)
_TAIL_NOTE_COST = 600  # kept for the "… N more blocks" note (blocks give way if it needs more)
_LEAF = {"t": "v", "v": 0, "cut": 0}
_TREE_FRAME_COST = len(structured_html({"kind": "tree", "node": _LEAF})) - len(node_html(_LEAF))
_TABLE_FRAME_COST = max(
    len(structured_html({"kind": "table", "columns": [], "rows": [], "more_rows": _BIG, "more_columns": _BIG})),
    len(
        json.dumps(
            {"kind": "table", "columns": [], "rows": [], "more_rows": _BIG, "more_columns": _BIG}
            | {"caption": None, "fields": []}
        )
    ),
)
_CAPTION_COST = max(len('<caption style="text-align:left;font-weight:600"></caption>'), 16)
_FIELD_COST = max(len('<span style="margin-right:1em"><b></b>: </span>'), 10) + 40
_HEAD_CELL_COST = max(len(f'<th style="{CELL}"></th>'), 4)  # plus the label; JSON: quotes and ", "
_CELL_COST = max(len(f'<td style="{CELL}"></td>'), 4)
_ROW_COST = max(len("<tr></tr>"), 4)

__all__ = [
    "IMAGE_MIMES",
    "LINK_CHARS",
    "PREVIEW_BLOCKS",
    "PREVIEW_BUDGET",
    "PREVIEW_TEXT_CHARS",
    "TABLE_COLUMNS",
    "TABLE_ROWS",
    "TREE_DEPTH",
    "TREE_ITEMS",
    "TREE_STRING",
    "result_preview",
    "structured_preview",
    "utf8_len",
]
