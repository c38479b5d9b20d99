"""The grammar of %mcp_map / %%mcp_map (pure)."""

from __future__ import annotations

import pytest

from mcp_tasks_jupyter.jupyter.magic_args import ArgumentError
from mcp_tasks_jupyter.jupyter.map_args import MAX_ITEMS, check_items, parse_map_line


def test_cell_body_in_json_or_yaml_and_the_options():
    call = parse_map_line(
        "-o out --limit 3 --answers '{\"depth\": 2}' --ttl 5000 --cache demo:research",
        body='[{"topic": "a"}, {"topic": "b", "depth": 1}]',
    )
    assert (call.server, call.tool, call.out, call.limit, call.ttl, call.cache) == (
        "demo",
        "research",
        "out",
        3,
        5000,
        True,
    )
    assert call.answers == {"depth": 2} and call.items == [{"topic": "a"}, {"topic": "b", "depth": 1}]
    yaml = parse_map_line("research", body="- topic: a\n  when: 2025-01-31\n- topic: b\n")
    assert yaml.server is None and yaml.limit == 8
    assert yaml.items == [{"topic": "a", "when": "2025-01-31"}, {"topic": "b"}]


def test_over_takes_the_rest_of_the_line_as_written():
    call = parse_map_line("-o r demo:research --over [{'topic': t} for t in topics if t != '--x']")
    assert call.over == "[{'topic': t} for t in topics if t != '--x']" and call.items is None
    assert parse_map_line("demo:research --over=rows").over == "rows"


@pytest.mark.parametrize(
    ("line", "body", "expected"),
    [
        ("demo:research", None, "where are the arguments"),
        ("demo:research --over", None, "--over needs a Python expression"),
        ("demo:research --over rows", "- {topic: a}", "either in the cell body or with --over"),
        ("demo:research", "{topic: a}", "must be a list of argument mappings"),
        ("demo:research", "", "the cell body is empty"),
        ("demo:research", "[]", "is empty: nothing to run"),
        ("demo:research", "- tides\n", "item 0 must be a mapping"),
        ("demo:research topic=a", "- {topic: a}", "the arguments come from the cell body"),
        ("--limit 0 demo:research", "- {topic: a}", "--limit needs a whole number of tasks >= 1"),
        ("--limit two demo:research", "- {topic: a}", "--limit needs a whole number"),
        ("--answers 3 demo:research", "- {topic: a}", "--answers needs a JSON mapping"),
        ("-o 1x demo:research", "- {topic: a}", "-o needs a Python variable name"),
        ("--wait demo:research", "- {topic: a}", "unknown option '--wait'"),
        ("", "- {topic: a}", "which tool?"),
    ],
)
def test_mistakes_say_what_is_wrong(line, body, expected):
    with pytest.raises(ArgumentError, match="mcp_map") as caught:
        parse_map_line(line, body=body)
    assert expected in str(caught.value)


def test_check_items_bounds_and_converts():
    assert check_items(iter([{"a": (1, 2)}])) == [{"a": [1, 2]}]
    with pytest.raises(ArgumentError, match="got a str"):
        check_items("topic")
    with pytest.raises(ArgumentError, match="JSON cannot carry"):
        check_items([{"a": object()}])
    with pytest.raises(ArgumentError, match=f"more than {MAX_ITEMS}"):
        check_items({"topic": "t"} for _ in range(MAX_ITEMS + 1))


def test_resume_and_restart_are_read():
    assert parse_map_line("demo:research --over xs").resume is None  # the same line again: resume, say so
    call = parse_map_line("-o res --resume --limit 64 demo:research --over xs")
    assert (call.resume, call.limit, call.limit_given, call.out) == (True, 64, True, "res")
    assert parse_map_line("--restart demo:research --over xs").resume is False
    named = parse_map_line("--resume 1a2b3c4d5e6f")
    assert (named.resume, named.tool, named.server, named.limit_given) == ("1a2b3c4d5e6f", "", None, False)
    with pytest.raises(ArgumentError, match="not both"):
        parse_map_line("--resume --restart demo:research --over xs")


def test_mcp_tasks_sweeps_is_read():
    from mcp_tasks_jupyter.jupyter.magic_args import parse_tasks_args

    assert parse_tasks_args("--sweeps").sweeps is True and parse_tasks_args("").sweeps is False
    with pytest.raises(ArgumentError, match="give one of"):
        parse_tasks_args("--sweeps --resume")
