"""The grammar of ``%mcp_map`` / ``%%mcp_map`` (pure: no IPython, no I/O; see ``magic_args`` for
the words and values it shares with the other magics)::

    %%mcp_map [-o VAR] [--limit N] [--answers JSON] [--ttl MS] [--cache] NAME:TOOL
    <a JSON or YAML list of argument mappings>

    %mcp_map [-o VAR] [--limit N] [--answers JSON] [--ttl MS] [--cache] NAME:TOOL --over EXPR

    %mcp_map [-o VAR] [--limit N] --resume SWEEP_ID

``EXPR`` is everything after ``--over``, as written: a Python expression the magic evaluates in the
notebook's namespace (``--over [{"topic": t} for t in topics]``). ``--resume`` continues the sweep of the
same items (recorded in the task index) where it stopped, ``--restart`` starts it anew; without either,
the same line run again in a new kernel resumes it and says so.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..running.batch import DEFAULT_LIMIT
from .magic_args import (
    ArgumentError,
    Expand,
    Option,
    body_value,
    load_yaml,
    no_expand,
    parse_target,
    parse_value,
    positive_int,
    split_words,
    take_options,
    variable_name,
)

#: The most tasks one ``%mcp_map`` starts (a typo in ``--over range(...)`` should not start a million;
#: ``client.map`` takes more).
MAX_ITEMS = 100_000

MAP_OPTIONS = (
    Option(("-o", "--out"), "out", True, "VAR"),
    Option(("--limit",), "limit", True, "N"),
    Option(("--answers",), "answers", True, "JSON mapping"),
    Option(("--ttl",), "ttl", True, "MS"),
    Option(("--cache",), "cache", False),
    Option(("--resume",), "resume", False),
    Option(("--restart",), "restart", False),
)
_OVER = re.compile(r"(?:^|\s)--over(?:\s+|=|$)")


@dataclass(frozen=True)
class MapCall:
    """What ``%mcp_map`` / ``%%mcp_map`` asked for: the argument mappings (``items``), or, for the
    line magic, the expression (``over``) that gives them."""

    server: str | None
    tool: str
    items: list[dict[str, Any]] | None = None
    over: str | None = None
    out: str | None = None
    limit: int = DEFAULT_LIMIT
    answers: dict[str, Any] | None = None
    ttl: int | None = None
    cache: bool = False
    #: True: ``--resume``; a sweep's id: ``--resume SWEEP_ID``; None: the default (resume the same items
    #: where a sweep of them stopped, and say so); False: ``--restart``.
    resume: bool | str | None = None
    #: Whether ``--limit`` was given (a resumed sweep otherwise keeps its own).
    limit_given: bool = False

    @property
    def label(self) -> str:
        if self.tool == "":
            return f"sweep {self.resume}"
        return f"{self.server}:{self.tool}" if self.server else self.tool


def parse_map_line(line: str, *, body: str | None = None, expand: Expand = no_expand) -> MapCall:
    """Parse the line (and, for ``%%mcp_map``, the cell body) of ``%mcp_map``."""
    shown = "mcp_map" if body is None else "%mcp_map"
    head, over = _split_over(line)
    try:
        words = split_words(head)
    except ArgumentError as exc:
        raise ArgumentError(f"%{shown}: {exc}") from None
    found, rest = take_options(words, MAP_OPTIONS, shown, expand)
    usage = (
        f"%{shown} [options] NAME:TOOL --over EXPR"
        if body is None
        else f"%{shown} [options] NAME:TOOL, then a list of argument mappings in the cell"
    )
    if found.get("resume") and found.get("restart"):
        raise ArgumentError(f"%{shown}: --resume or --restart, not both")
    if found.get("resume") and len(rest) == 1 and over is None and body is None and ":" not in rest[0]:
        return MapCall(
            server=None,
            tool="",
            out=variable_name(found["out"], "-o", shown) if "out" in found else None,
            limit=_limit(found["limit"], shown) if "limit" in found else DEFAULT_LIMIT,
            answers=_answers(found.get("answers"), shown),
            ttl=positive_int(found["ttl"], "--ttl", shown) if "ttl" in found else None,
            cache=bool(found.get("cache")),
            resume=expand(rest[0]),
            limit_given="limit" in found,
        )
    if not rest:
        raise ArgumentError(f"%{shown}: which tool? Write {usage}")
    if len(rest) > 1:
        raise ArgumentError(
            f"%{shown}: unexpected {' '.join(rest[1:])!r} after {rest[0]}: the arguments come "
            + ("from --over EXPR" if body is None else "from the cell body")
            + " (options go before NAME:TOOL)"
        )
    server, tool = parse_target(expand(rest[0]), shown)
    items: list[dict[str, Any]] | None = None
    if body is None:
        if over is None:
            raise ArgumentError(
                f"%{shown}: where are the arguments? Write {usage}, or use %%mcp_map with a list in the cell"
            )
    else:
        if over is not None:
            raise ArgumentError(f"%{shown}: give the arguments either in the cell body or with --over, not both")
        try:
            items = parse_map_body(body)
        except ArgumentError as exc:
            raise ArgumentError(f"%{shown} {rest[0]}: {exc}") from None
    limit = _limit(found["limit"], shown) if "limit" in found else DEFAULT_LIMIT
    return MapCall(
        server=server,
        tool=tool,
        items=items,
        over=over,
        out=variable_name(found["out"], "-o", shown) if "out" in found else None,
        limit=limit,
        answers=_answers(found.get("answers"), shown),
        ttl=positive_int(found["ttl"], "--ttl", shown) if "ttl" in found else None,
        cache=bool(found.get("cache")),
        resume=True if found.get("resume") else False if found.get("restart") else None,
        limit_given="limit" in found,
    )


def parse_map_body(body: str) -> list[dict[str, Any]]:
    """A ``%%mcp_map`` cell body: a JSON array or YAML list of argument mappings (not empty)."""
    if not body.strip():
        raise ArgumentError("the cell body is empty: give a JSON or YAML list of argument mappings")
    try:
        value = json.loads(body)
    except ValueError:
        value = load_yaml(body)
    if not isinstance(value, list):
        kind = "nothing" if value is None else f"a {type(value).__name__}"
        raise ArgumentError(
            f"the cell body must be a list of argument mappings (a JSON array, or YAML '- key: value' "
            f"items), got {kind}"
        )
    return check_items(value)


def check_items(values: Any) -> list[dict[str, Any]]:
    """``values`` (a list, or what ``--over`` gave) as a list of JSON-able argument mappings."""
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
        raise ArgumentError(f"expected a list of argument mappings, got a {type(values).__name__}")
    items: list[dict[str, Any]] = []
    for place, value in enumerate(values):
        if place >= MAX_ITEMS:
            raise ArgumentError(f"more than {MAX_ITEMS} argument mappings: split the batch")
        if not isinstance(value, dict):
            raise ArgumentError(f"item {place} must be a mapping of arguments, got a {type(value).__name__}")
        try:
            items.append(body_value(value, f"item {place}"))
        except TypeError as exc:
            raise ArgumentError(f"item {place} has a value JSON cannot carry: {exc}") from None
    if not items:
        raise ArgumentError("the list of argument mappings is empty: nothing to run")
    return items


def _split_over(line: str) -> tuple[str, str | None]:
    """(the line before ``--over``, the expression after it as written, or None)."""
    match = _OVER.search(line)
    if match is None:
        return line, None
    expression = line[match.end() :].strip()
    if not expression:
        raise ArgumentError("%mcp_map: --over needs a Python expression (a list of argument mappings)")
    return line[: match.start()], expression


def _limit(raw: str, shown: str) -> int:
    if not raw.isdigit() or int(raw) < 1:
        raise ArgumentError(f"%{shown}: --limit needs a whole number of tasks >= 1, got {raw!r}")
    return int(raw)


def _answers(raw: str | None, shown: str) -> dict[str, Any] | None:
    if raw is None:
        return None
    answers = parse_value(raw)
    if isinstance(answers, str):  # quoted like a shell word: --answers '{"depth": 2}'
        answers = parse_value(answers)
    if not isinstance(answers, dict):
        raise ArgumentError(
            f"%{shown}: --answers needs a JSON mapping of field names to values, e.g. --answers '{{\"depth\": 2}}'"
        )
    return answers


__all__ = ["MAX_ITEMS", "MapCall", "check_items", "parse_map_body", "parse_map_line"]
