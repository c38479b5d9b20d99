"""The magics' grammar (pure parsing, no kernel), and the cell rewrite that awaits magics."""

from __future__ import annotations

from typing import Any

import pytest
from IPython.core.inputtransformer2 import TransformerManager
from IPython.utils.text import DollarFormatter

from mcp_tasks_jupyter.jupyter.magic_args import (
    ArgumentError,
    ConnectArgs,
    TaskCall,
    parse_arguments,
    parse_cell_body,
    parse_connect_line,
    parse_server_name,
    parse_task_line,
    parse_task_ref,
    parse_tasks_line,
    parse_value,
    split_words,
)
from mcp_tasks_jupyter.jupyter.transform import rewrite


def expander(**names: Any) -> Any:
    """IPython's $var / {expr} expansion over ``names`` (what the magic passes in)."""
    formatter = DollarFormatter()

    def expand(text: str) -> str:
        try:
            return formatter.vformat(text, args=[], kwargs=names)
        except Exception:
            return text

    return expand


def error(parse: Any, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(ArgumentError) as caught:
        parse(*args, **kwargs)
    message = str(caught.value)
    assert "\n" not in message
    return message


# -- words and values ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line, words",
    [
        ("a=1 b=2", ["a=1", "b=2"]),
        ('topic="two words" n=3', ['topic="two words"', "n=3"]),
        ("topic='two words'", ["topic='two words'"]),
        ("values=[1, 2, 3] x=y", ["values=[1, 2, 3]", "x=y"]),
        ('opts={"a": [1, 2], "b": "c d"}', ['opts={"a": [1, 2], "b": "c d"}']),
        ('s=["a]b", "c"]', ['s=["a]b", "c"]']),
        ("label=it's fine", ["label=it's", "fine"]),
        ('text="say \\"hi\\""', ['text="say \\"hi\\""']),
        ("  spaced   out  ", ["spaced", "out"]),
        ("label=t{i + 1}", ["label=t{i + 1}"]),
        ("", []),
    ],
)
def test_split_words(line: str, words: list[str]) -> None:
    assert split_words(line) == words


@pytest.mark.parametrize(
    "raw, value",
    [
        ("3", 3),
        ("2.5", 2.5),
        ("-1", -1),
        ("true", True),
        ("false", False),
        ("null", None),
        ('"two words"', "two words"),
        ("[1,2,3]", [1, 2, 3]),
        ('{"a": {"b": [1]}}', {"a": {"b": [1]}}),
        ("tides", "tides"),
        ("", ""),
        ("'two words'", "two words"),
        ("['a', 'b']", ["a", "b"]),
        ("{'k': (1, 2)}", {"k": [1, 2]}),
        ("True", True),
        ("None", None),
        ("it's", "it's"),
        ('"C:\\path"', "C:\\path"),
        ("{1, 2}", "{1, 2}"),
        ("2025-01-31", "2025-01-31"),
        ("1e3", 1000.0),
        ("http://x/y?a=b", "http://x/y?a=b"),
    ],
)
def test_parse_value_is_json_then_python_literal_then_text(raw: str, value: Any) -> None:
    assert parse_value(raw) == value
    assert type(parse_value(raw)) is type(value)


def test_arguments() -> None:
    assert parse_arguments(split_words('topic="two words" values=[1,2,3] n=4 flag=false empty=')) == {
        "topic": "two words",
        "values": [1, 2, 3],
        "n": 4,
        "flag": False,
        "empty": "",
    }
    assert "given twice" in error(parse_arguments, ["a=1", "a=2"])
    assert "expected key=value, got 'loose'" in error(parse_arguments, ["loose"])
    assert "options go before NAME:TOOL" in error(parse_arguments, ["--wait"])
    assert "is not an argument name" in error(parse_arguments, ["=3"])


def test_words_with_unclosed_quotes_or_brackets() -> None:
    assert 'unclosed "' in error(split_words, 'topic="open')
    assert "unclosed '['" in error(split_words, "values=[1, 2")


# -- %mcp_task --------------------------------------------------------------------------------------


def test_task_line_with_and_without_server() -> None:
    assert parse_task_line("demo:slow_compute seconds=2") == TaskCall("demo", "slow_compute", {"seconds": 2})
    call = parse_task_line("slow_compute")
    assert (call.server, call.tool, call.arguments, call.label) == (None, "slow_compute", {}, "slow_compute")
    assert parse_task_line("my-server.v2:tool.name").label == "my-server.v2:tool.name"


@pytest.mark.parametrize(
    "line",
    [
        "-o res --wait --ttl 60000 --answers '{\"depth\": 2}' demo:research topic=tides",
        '--answers={"depth":2} --ttl=60000 --wait -o res demo:research topic=tides',
        "--wait --out=res --answers '{\"depth\": 2}' --ttl 60000 demo:research topic=tides",
    ],
)
def test_task_options_in_any_order_before_the_target(line: str) -> None:
    assert parse_task_line(line) == TaskCall(
        "demo", "research", {"topic": "tides"}, out="res", wait=True, ttl=60000, answers={"depth": 2}
    )


def test_task_expansion_per_word() -> None:
    expand = expander(topic="two words", nums=[1, 2], n=5, server="demo", var="res")
    call = parse_task_line(
        '-o $var {server}:research topic=$topic quoted="$topic" values={nums} count={n} '
        'raw={"a": 1} literal=$$5 label=t{n}',
        expand=expand,
    )
    assert call.server == "demo" and call.out == "res"
    assert call.arguments == {
        "topic": "two words",
        "quoted": "two words",
        "values": [1, 2],
        "count": 5,
        "raw": {"a": 1},
        "literal": "$5",
        "label": "t5",
    }
    # what cannot be expanded stays as written, as in IPython
    assert parse_task_line("demo:t text={missing}", expand=expand).arguments == {"text": "{missing}"}


@pytest.mark.parametrize(
    "line, expected",
    [
        ("", "which tool?"),
        ("-o res", "which tool?"),
        ("seconds=2", "expected NAME:TOOL (or TOOL) before the arguments, got 'seconds=2'"),
        ("demo: x=1", "expected NAME:TOOL, got 'demo:'"),
        ("bad name!:tool", "expected key=value"),
        ("a:b:c", "expected NAME:TOOL, got 'a:b:c'"),
        ("demo:t -o res", "%mcp_task demo:t: expected key=value, got '-o' (options go before NAME:TOOL)"),
        (
            "--bogus demo:t",
            "unknown option '--bogus' (options: --answers, --cache, --compact, --no-app, --out, --refresh, "
            "--ttl, --wait)",
        ),
        ("-o demo:t", "which tool?"),
        ("-o 1x demo:t", "-o needs a Python variable name, got '1x'"),
        ("-o class demo:t", "-o needs a Python variable name, got 'class'"),
        ("--ttl soon demo:t", "--ttl needs a whole number of milliseconds > 0, got 'soon'"),
        ("--ttl 0 demo:t", "--ttl needs a whole number"),
        ("--ttl", "option --ttl needs a value (MS)"),
        ("--wait=yes demo:t", "option --wait takes no value"),
        ("--wait --wait demo:t", "option --wait is given twice"),
        ("--answers [1,2] demo:t", "--answers needs a JSON mapping"),
        ("demo:t a=1 a=2", "argument 'a' is given twice"),
        ('demo:t topic="open', 'unclosed "'),
    ],
)
def test_task_line_errors(line: str, expected: str) -> None:
    message = error(parse_task_line, line)
    assert expected in message
    assert message.startswith("%mcp_task")


# -- %%mcp_task bodies ------------------------------------------------------------------------------


def test_cell_body_json_and_yaml() -> None:
    assert parse_cell_body('{"topic": "tides", "n": 2}') == {"topic": "tides", "n": 2}
    yaml_body = (
        "# arguments\ntopic: two words\nvalues: [1, 2, 3]\nnested:\n  a: true\nwhen: 2025-01-31\nnothing: null\n"
    )
    assert parse_cell_body(yaml_body) == {
        "topic": "two words",
        "values": [1, 2, 3],
        "nested": {"a": True},
        "when": "2025-01-31",
        "nothing": None,
    }
    assert parse_cell_body("  \n") == {}
    call = parse_task_line("--wait demo:make_chart title=T", body="values:\n  - 1\n  - 2\n")
    assert call.arguments == {"values": [1, 2], "title": "T"} and call.wait


@pytest.mark.parametrize(
    "body, expected",
    [
        (
            "- a\n- b\n",
            "must be a mapping of argument names to values (JSON object or YAML 'key: value' lines), got a list",
        ),
        ("just text", "got a str"),
        ("[1, 2]", "got a list"),
        ("42", "got a int"),
        ("~", "got nothing"),
        ("a: [1, 2\n", "neither JSON nor YAML"),
        ("1: x\n", "argument names in the cell body must be strings"),
        ("a: !!binary aGk=\n", "a value JSON cannot carry"),
    ],
)
def test_cell_body_errors(body: str, expected: str) -> None:
    assert expected in error(parse_cell_body, body)
    message = error(parse_task_line, "demo:tool", body=body)
    assert message.startswith("%%mcp_task demo:tool: ")


def test_cell_body_and_line_may_not_repeat_an_argument() -> None:
    assert "argument(s) title given both on the line and in the cell body" in error(
        parse_task_line, "demo:t title=x", body="title: y"
    )


# -- %mcp_connect -----------------------------------------------------------------------------------


def test_connect_command_keeps_its_own_options() -> None:
    args = parse_connect_line(
        "--env A=1 demo -e B=two --dialect 2025-11-25 /usr/bin/python -m server --port 3 --env not-ours"
    )
    assert args == ConnectArgs(
        "demo",
        ["/usr/bin/python", "-m", "server", "--port", "3", "--env", "not-ours"],
        env={"A": "1", "B": "two"},
        dialect="2025-11-25",
    )


def test_connect_url_headers_and_separator() -> None:
    args = parse_connect_line(
        'api --header "Authorization=Bearer a=b" -H "X-Key: k" --timeout 5 https://example.org/mcp'
    )
    assert args.target == "https://example.org/mcp"
    assert args.headers == {"Authorization": "Bearer a=b", "X-Key": "k"} and args.timeout == 5.0
    assert parse_connect_line("demo -- -weird-program --flag").target == ["-weird-program", "--flag"]
    assert parse_connect_line("-- demo prog").target == ["prog"]
    assert parse_connect_line('demo "/path with space/python" -m x').target == [
        "/path with space/python",
        "-m",
        "x",
    ]
    assert parse_connect_line("fromfile") == ConnectArgs("fromfile")
    assert parse_connect_line("fromfile --dialect none").dialect == "none"


def test_connect_args_repr_hides_values() -> None:
    args = parse_connect_line("--header Authorization=Bearer-SECRET x https://h/mcp")
    assert "SECRET" not in repr(args) and "Authorization" in repr(args)
    args = parse_connect_line("--env TOKEN=SECRET2 x prog")
    assert "SECRET2" not in repr(args) and "TOKEN" in repr(args)


@pytest.mark.parametrize(
    "line, expected",
    [
        ("", "which server?"),
        ("--env A=1", "which server?"),
        ("bad:name prog", "'bad:name' is not a usable name"),
        ("demo --bogus prog", "unknown option '--bogus' before the server command"),
        ("demo --dialect", "option --dialect needs a value"),
        ("demo --dialect v9 prog", "unknown dialect 'v9' (choose one of auto, 2025-11-25, "),
        ("demo --timeout 0 prog", "--timeout needs a number of seconds > 0"),
        ("demo --timeout -1 prog", "--timeout needs a number of seconds > 0"),
        ("demo https://h/mcp extra", "a URL takes no further words"),
        ("demo --env A=1 https://h/mcp", "--env applies to commands (stdio)"),
        ("demo --header A=1 prog", "--header applies to URLs (HTTP)"),
        ("demo --header novalue https://h/mcp", "--header needs NAME=VALUE"),
        ("demo --env 1X=y prog", "--env needs NAME=VALUE"),
        ('demo "unclosed prog', "No closing quotation"),
    ],
)
def test_connect_errors(line: str, expected: str) -> None:
    message = error(parse_connect_line, line)
    assert expected in message and message.startswith("%mcp_connect")


def test_connect_errors_never_echo_values() -> None:
    assert "hunter2" not in error(parse_connect_line, "demo --header =hunter2 https://h/mcp")
    assert "hunter2" not in error(parse_connect_line, "demo --env 'bad name=hunter2' prog")


# -- %mcp_result, %mcp_cancel, %mcp_tasks, %mcp_tools ------------------------------------------------


def test_task_refs() -> None:
    assert parse_task_ref("abc123", magic="mcp_result", allow_out=True).ref == "abc123"
    ref = parse_task_ref("-o r demo:abc", magic="mcp_result", allow_out=True)
    assert (ref.ref, ref.out) == ("demo:abc", "r")
    assert parse_task_ref("demo:abc --out=r", magic="mcp_result", allow_out=True).out == "r"
    assert parse_task_ref("{tid}", magic="mcp_result", allow_out=True, expand=expander(tid="X1")).ref == "X1"
    assert "takes no -o option" in error(parse_task_ref, "h -o r", magic="mcp_cancel", allow_out=False)
    assert "expected one task id" in error(parse_task_ref, "", magic="mcp_cancel", allow_out=False)
    assert "got a b" in error(parse_task_ref, "a b", magic="mcp_cancel", allow_out=False)
    assert "unknown option '--all'" in error(parse_task_ref, "--all", magic="mcp_cancel", allow_out=False)
    assert "-o is given twice" in error(parse_task_ref, "-o a -o b x", magic="mcp_result", allow_out=True)


def test_tasks_and_tools_lines() -> None:
    assert parse_tasks_line("") == (None, None)
    assert parse_tasks_line("demo --status completed") == ("demo", "completed")
    assert parse_tasks_line("--status=failed demo") == ("demo", "failed")
    assert parse_tasks_line("-s working") == (None, "working")
    assert "unknown status 'done'" in error(parse_tasks_line, "--status done")
    assert "at most one server name" in error(parse_tasks_line, "a b")
    assert "unknown option '--all'" in error(parse_tasks_line, "--all")
    assert parse_server_name("", magic="mcp_tools") is None
    assert parse_server_name(" demo ", magic="mcp_tools") == "demo"
    assert "at most one server name" in error(parse_server_name, "a b", magic="mcp_tools")


# -- the cell rewrite (transform.py) ---------------------------------------------------------------


def ipython(cell: str) -> str:
    """What IPython's own transformers make of ``cell`` before ours runs."""
    return TransformerManager().transform_cell(cell)


def test_rewrite_awaits_the_magic_calls_of_a_cell() -> None:
    cell = ipython('h = %mcp_task demo:slow_compute label="é ü"\nprint(h)\n%mcp_task demo:echo text=x')
    assert rewrite(cell) == (
        "h = await _mtj_await(get_ipython().run_line_magic('mcp_task', 'demo:slow_compute label=\"é ü\"'), "
        "target='h')\n"
        "print(h)\n"
        "await _mtj_await(get_ipython().run_line_magic('mcp_task', 'demo:echo text=x'), bare=True)\n"
    )
    cell = ipython("%%mcp_task -o r demo:research\ntopic: tides\n")
    assert rewrite(cell).startswith(
        "await _mtj_await(get_ipython().run_cell_magic('mcp_task', '-o r demo:research'"
    )
    loop = ipython("for i in range(3):\n    h = %mcp_task demo:t n={i}\n")
    assert (
        "    h = await _mtj_await(get_ipython().run_line_magic('mcp_task', 'demo:t n={i}'), target='h', many=True)"
        in rewrite(loop)
    )
    # many tasks in one cell: each shows compact (more than COMPACT_AFTER calls, or any in a loop)
    four = ipython("".join(f"h{i} = %mcp_task demo:t n={i}\n" for i in range(4)))
    assert rewrite(four).count(", many=True)") == 4
    three = ipython("".join(f"h{i} = %mcp_task demo:t n={i}\n" for i in range(3)))
    assert "many" not in rewrite(three)
    # only a plain variable is a target
    assert rewrite(ipython("hs[0] = %mcp_task demo:t\n")).endswith("'demo:t'))\n")
    assert rewrite(rewrite(cell)) == rewrite(cell)  # idempotent


@pytest.mark.parametrize(
    "cell",
    [
        "def f():\n    return %mcp_task demo:t\n",
        "async def f():\n    return %mcp_task demo:t\n",
        "f = lambda: get_ipython().run_line_magic('mcp_task', 'x')\n",
        "class C:\n    h = %mcp_task demo:t\n",
        "%mcp_servers\n%mcp_tasks\n",
        "x = await get_ipython().run_line_magic('mcp_task', 'demo:t')\n",
        "%%time\nh = %mcp_task demo:t\n",
        "h = %mcp_task demo:t\nprint((1,)\n",
    ],
)
def test_rewrite_leaves_alone_what_it_must_not_touch(cell: str) -> None:
    source = ipython(cell)
    assert rewrite(source) == source


def test_durable_task_options() -> None:
    from mcp_tasks_jupyter.jupyter.magic_args import TasksArgs, parse_tasks_args

    assert parse_task_line("--cache demo:slow_compute seconds=2").cache is True
    assert parse_task_line("--cache --refresh demo:slow_compute").cache is False
    assert parse_task_line("demo:slow_compute").cache is False
    assert parse_tasks_args("--resume") == TasksArgs(resume=True)
    assert parse_tasks_args("web --clear") == TasksArgs(server="web", clear=True)
    assert "give one of" in error(parse_tasks_args, "--resume --clear")
    assert parse_tasks_args("--export out.jsonl") == TasksArgs(export="out.jsonl")
    assert parse_tasks_args("web --export=runs/p.csv") == TasksArgs(server="web", export="runs/p.csv")
    assert "--export needs a value" in error(parse_tasks_args, "--export")
    assert "give one of" in error(parse_tasks_args, "--export a.jsonl --status completed")
