"""Markdown a tool returned, as a small tree of allowed elements: the static HTML draws it here
(escaped), the widget draws it as DOM from the same JSON (``preview.ts``). Pure: no I/O.

A text block counts as markdown when it has block or inline markup (a heading, a list, a table, a
fence, a quote, emphasis, a link, code); anything else stays preformatted text. Raw HTML in the text
is shown as text, never as markup; links are live only for http(s); images become links (a preview
fetches nothing).

A node is a string (text) or ``{"t": TAG, "c": [nodes]}`` with ``href`` on a live ``a``, ``start`` on
an ``ol`` that does not start at 1. ``TAGS`` are all the tags there are.
"""

from __future__ import annotations

import html
import re
from functools import cache
from typing import Any

#: Every element a tree may hold.
TAGS = frozenset(
    {"h1", "h2", "h3", "h4", "h5", "h6", "p", "ul", "ol", "li", "pre", "code", "em", "strong", "del", "a"}
    | {"br", "hr", "blockquote", "table", "thead", "tbody", "tr", "th", "td"}
)
#: Nesting levels kept; deeper content is flattened to its text.
MAX_DEPTH = 16

# Cheap test before parsing: text without any of these is never markdown.
_HINT = re.compile(
    r"(?m)^\s{0,3}(?:#{1,6}\s|[-*+]\s+\S|\d{1,9}[.)]\s+\S|>|```|~~~|\|.*\|)|\*\*|__|~~|\[[^\]\n]+\]\(|`[^`\n]+`"
)
_BLOCK = {"paragraph": "p", "block_quote": "blockquote", "table_head": "thead", "table_body": "tbody"}
_INLINE = {"emphasis": "em", "strong": "strong", "strikethrough": "del"}


def markdown_tree(text: str) -> list[Any] | None:
    """The tree of ``text`` if it reads as markdown (see the module docstring), else None."""
    if not _HINT.search(text):
        return None
    tokens = _parser()(text)
    if not isinstance(tokens, list) or all(_plain_paragraph(t) for t in tokens):
        return None
    return _nodes(tokens, 0)


def tree_html(nodes: list[Any]) -> str:
    """HTML of a tree; every text is escaped, every tag one of ``TAGS``."""
    return "".join(_html(node) for node in nodes)


def tree_text(nodes: list[Any]) -> str:
    """The text of a tree, without markup."""
    return "".join(node if isinstance(node, str) else tree_text(node["c"]) for node in nodes)


@cache
def _parser() -> Any:
    import mistune  # only when a result looks like markdown

    return mistune.create_markdown(renderer=None, plugins=["table", "strikethrough"])


def _plain_paragraph(token: dict[str, Any]) -> bool:
    if token.get("type") == "blank_line":
        return True
    return token.get("type") == "paragraph" and all(
        child.get("type") in ("text", "softbreak") for child in token.get("children", ())
    )


def _nodes(tokens: list[dict[str, Any]], depth: int) -> list[Any]:
    out: list[Any] = []
    for token in tokens:
        if token.get("type") == "block_text":  # a tight list item's text: its inline nodes, no paragraph
            found = _nodes(token.get("children") or [], depth + 1)
        else:
            node = _node(token, depth)
            found = [] if node is None else [node]
        for node in found:
            if isinstance(node, str) and out and isinstance(out[-1], str):
                out[-1] += node  # adjacent text is one string
            else:
                out.append(node)
    return out


def _node(token: dict[str, Any], depth: int) -> Any:
    kind = token.get("type")
    children = token.get("children") or []
    attrs = token.get("attrs") or {}
    if kind in ("text", "inline_html", "block_html"):
        return str(token.get("raw", ""))
    if kind == "softbreak":
        return "\n"
    if kind == "blank_line":
        return None
    if depth >= MAX_DEPTH:
        return _flat(token)
    if kind == "linebreak":
        return {"t": "br", "c": []}
    if kind == "thematic_break":
        return {"t": "hr", "c": []}
    if kind == "codespan":
        return {"t": "code", "c": [str(token.get("raw", ""))]}
    if kind == "block_code":
        return {"t": "pre", "c": [{"t": "code", "c": [str(token.get("raw", ""))]}]}
    if kind == "heading":
        level = attrs.get("level")
        tag = f"h{level}" if level in (1, 2, 3, 4, 5, 6) else "p"
        return {"t": tag, "c": _nodes(children, depth + 1)}
    if kind == "list":
        node: dict[str, Any] = {"t": "ol" if attrs.get("ordered") else "ul", "c": _nodes(children, depth + 1)}
        start = attrs.get("start")
        if node["t"] == "ol" and isinstance(start, int) and start != 1:
            node["start"] = start
        return node
    if kind == "list_item":
        return {"t": "li", "c": _nodes(children, depth + 1)}
    if kind in ("link", "image"):
        url = attrs.get("url")
        node = {"t": "a", "c": _nodes(children, depth + 1) or [str(url or "")]}
        if isinstance(url, str) and re.match(r"https?://", url, re.I):
            node["href"] = url
        return node
    if kind == "table":
        return {"t": "table", "c": _nodes(children, depth + 1)}
    if kind == "table_head":  # mistune gives the head's cells without a row
        return {"t": "thead", "c": [{"t": "tr", "c": _nodes(children, depth + 2)}]}
    if kind == "table_row":
        return {"t": "tr", "c": _nodes(children, depth + 1)}
    if kind == "table_cell":
        return {"t": "th" if attrs.get("head") else "td", "c": _nodes(children, depth + 1)}
    other = _BLOCK.get(str(kind)) or _INLINE.get(str(kind))
    if other is not None:
        return {"t": other, "c": _nodes(children, depth + 1)}
    return _flat(token) or None  # a kind this tree does not know: its text


def _flat(token: dict[str, Any]) -> str:
    raw = token.get("raw")
    if isinstance(raw, str):
        return raw
    return "".join(_flat(child) for child in token.get("children") or [])


def _html(node: Any) -> str:
    if isinstance(node, str):
        return html.escape(node)
    tag = node["t"]
    if tag not in TAGS:
        return tree_html(node["c"])
    if tag in ("br", "hr"):
        return f"<{tag}>"
    attrs = ""
    if tag == "a":
        href = node.get("href")
        if not href:
            return tree_html(node["c"])
        attrs = f' href="{html.escape(href)}" target="_blank" rel="noopener noreferrer"'
    elif tag == "ol" and isinstance(node.get("start"), int):
        attrs = f' start="{node["start"]}"'
    elif tag in ("th", "td"):
        attrs = f' style="{_CELL}"'
    elif tag == "table":
        attrs = ' style="border-collapse:collapse;margin:4px 0"'
    elif tag == "pre":
        attrs = f' style="{_PRE}"'
    elif tag in _HEADING_SIZES:
        attrs = f' style="margin:0.4em 0 0.2em;font-size:{_HEADING_SIZES[tag]};line-height:1.25"'
    elif tag in ("p", "ul", "ol"):
        attrs = ' style="margin:0.3em 0"'
    return f"<{tag}{attrs}>{tree_html(node['c'])}</{tag}>"


# A result's headings sit inside a task's box: sized as the widget draws them, not as a page's.
_HEADING_SIZES = {"h1": "1.3em", "h2": "1.15em", "h3": "1em", "h4": "1em", "h5": "1em", "h6": "1em"}
_CELL = "border:1px solid var(--jp-border-color1,#d0d7de);padding:2px 6px;text-align:left"
_PRE = (
    "white-space:pre-wrap;margin:4px 0;padding:4px 6px;background:var(--jp-layout-color2,#f6f8fa);"
    "border-radius:4px;font-size:12px"
)

__all__ = ["MAX_DEPTH", "TAGS", "markdown_tree", "tree_html", "tree_text"]
