"""The grammar of the ``%mcp_*`` magics: words, ``key=value`` arguments, options, cell bodies.

Pure functions (no IPython, no I/O); every mistake raises :class:`ArgumentError` with one line that
says what is wrong and how to write it instead.

Words (``%mcp_task``, ``%mcp_result``, ``%mcp_cancel``, ``%mcp_tasks``, ``%mcp_tools``)
    The line is split at whitespace, except inside brackets ``[] {} ()`` and inside quotes. A quote
    opens a quoted stretch only at the start of a word, right after the word's first ``=``, or inside
    brackets, so ``label=it's`` is the string ``it's`` while ``topic="two words"`` is one word.
    JSON stays intact: ``values=[1, 2, 3]`` and ``opts={"a": [1, 2]}`` are one word each.

Values (``key=value``)
    Parsed as JSON when the text is JSON (``3``, ``2.5``, ``true``, ``null``, ``"a b"``, ``[1,2]``,
    ``{"k": 1}``), else as a Python literal when it looks like one (``['a', 'b']``, ``'a b'``,
    ``True``, ``None``: what ``{expr}`` expands to), else taken as the string as written
    (``topic=tides`` is ``"tides"``; ``key=`` is ``""``).

Expansion (``$var``, ``{expr}``)
    Done per word, after splitting, by the ``expand`` callable the magic passes in (IPython's
    formatter over the user's namespace). A value that already is a JSON object or array is never
    expanded, so ``{"a": 1}`` reaches the tool as written. Because splitting comes first, a
    ``{expr}`` whose text has spaces stays one value.

``%mcp_connect``
    Split like a shell command (``shlex``). Options come first; the first word that is not an
    option is NAME; options may follow NAME; the first word after NAME that does not start with
    ``-`` starts URL_OR_COMMAND, and everything from there on belongs to the command, including
    words that start with ``-``. ``--`` ends the options explicitly.
"""

from __future__ import annotations

import ast
import datetime
import json
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..dialects import DIALECTS
from ..redact import safe_url
from ..tasks.status import STATUSES

#: Names a connection may have (used as ``NAME:`` in ``NAME:TOOL``, so no ``:``).
NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")
KEY_RE = re.compile(r"^[^\s=\"'\[\]{}()\-][^\s=]*$")
HEADER_NAME_RE = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z\-]+$")
ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
TASK_STATUSES = STATUSES
OPENING = "[{("
CLOSING = {"]": "[", "}": "{", ")": "("}

Expand = Callable[[str], str]


class ArgumentError(ValueError):
    """A magic's line or cell body cannot be understood; the message is one line for the user."""


def no_expand(text: str) -> str:
    """The :data:`Expand` that leaves a word as written (no ``$var`` / ``{expr}``)."""
    return text


# -- words and values ----------------------------------------------------------------------------


def split_words(text: str) -> list[str]:
    """Split ``text`` at whitespace outside quotes and brackets; words keep their quotes as written."""
    words: list[str] = []
    buf: list[str] = []
    quote: str | None = None
    escaped = False
    stack: list[str] = []
    for ch in text:
        if quote is not None:
            buf.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
            continue
        if ch in "\"'" and (stack or not buf or _at_value_start(buf)):
            quote = ch
            buf.append(ch)
            continue
        if ch in OPENING:
            stack.append(ch)
        elif ch in CLOSING and stack and stack[-1] == CLOSING[ch]:
            stack.pop()
        if ch.isspace() and not stack:
            if buf:
                words.append("".join(buf))
                buf = []
            continue
        buf.append(ch)
    word = "".join(buf)
    if quote is not None:
        raise ArgumentError(f"unclosed {quote} in {word!r}: close the quote, or quote the whole value")
    if stack:
        raise ArgumentError(
            f"unclosed {stack[-1]!r} in {word!r}: close it, or put the value in quotes, "
            f'e.g. key="{word.partition("=")[2] or word}"'
        )
    if word:
        words.append(word)
    return words


def _at_value_start(buf: list[str]) -> bool:
    return buf[-1] == "=" and "=" not in buf[:-1]


def parse_value(raw: str) -> Any:
    """The value of ``key=raw``: JSON if it parses, else a Python literal if it is one, else the string."""
    try:
        return json.loads(raw)
    except ValueError:
        pass
    if raw[:1] in "[{('" or raw in ("True", "False", "None"):
        try:
            value = _jsonable(ast.literal_eval(raw))
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            pass
        else:
            return value
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        return re.sub(r'\\(["\\])', r"\1", raw[1:-1])
    return raw


def _jsonable(value: Any) -> Any:
    """``value`` with tuples as lists; TypeError when it has something JSON cannot carry."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError("keys must be strings")
        return {k: _jsonable(v) for k, v in value.items()}
    raise TypeError(f"{type(value).__name__} is not JSON")


def _is_json_container(raw: str) -> bool:
    if raw[:1] not in "[{":
        return False
    try:
        json.loads(raw)
    except ValueError:
        return False
    return True


def _expand_value(raw: str, expand: Expand) -> str:
    return raw if _is_json_container(raw) else expand(raw)


def parse_arguments(words: Sequence[str], *, expand: Expand = no_expand) -> dict[str, Any]:
    """``key=value`` words as a dict of arguments (values as in :func:`parse_value`)."""
    arguments: dict[str, Any] = {}
    for word in words:
        key, eq, raw = word.partition("=")
        if not eq:
            raise ArgumentError(
                f"expected key=value, got {word!r}"
                + (" (options go before NAME:TOOL)" if word.startswith("-") else "")
            )
        if not KEY_RE.match(key):
            raise ArgumentError(f"{key!r} is not an argument name (in {word!r})")
        if key in arguments:
            raise ArgumentError(f"argument {key!r} is given twice")
        arguments[key] = parse_value(_expand_value(raw, expand))
    return arguments


# -- options -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    """One option of a magic: its spellings, where its value goes, whether it takes one."""

    names: tuple[str, ...]
    dest: str
    takes_value: bool
    metavar: str = ""


def take_options(
    words: list[str], options: Sequence[Option], magic: str, expand: Expand
) -> tuple[dict[str, Any], list[str]]:
    """Consume the leading option words; returns (dest -> raw value or True, remaining words)."""
    by_name = {name: option for option in options for name in option.names}
    found: dict[str, Any] = {}
    i = 0
    while i < len(words) and words[i].startswith("-") and words[i] != "-":
        word = words[i]
        if word == "--":
            i += 1
            break
        name, eq, inline = word.partition("=")
        option = by_name.get(name)
        if option is None:
            known = ", ".join(sorted({o.names[-1] for o in options})) or "none"
            raise ArgumentError(f"%{magic}: unknown option {name!r} (options: {known})")
        if option.dest in found:
            raise ArgumentError(f"%{magic}: option {name} is given twice")
        if option.takes_value:
            if eq:
                raw = inline
            elif i + 1 < len(words):
                i += 1
                raw = words[i]
            else:
                raise ArgumentError(f"%{magic}: option {name} needs a value ({option.metavar})")
            found[option.dest] = _expand_value(raw, expand)
        else:
            if eq:
                raise ArgumentError(f"%{magic}: option {name} takes no value")
            found[option.dest] = True
        i += 1
    return found, words[i:]


def variable_name(raw: str, option: str, magic: str) -> str:
    """``raw`` when it can name a Python variable (``-o NAME``), else an :class:`ArgumentError`."""
    if not raw.isidentifier() or raw in _KEYWORDS:
        raise ArgumentError(f"%{magic}: {option} needs a Python variable name, got {raw!r}")
    return raw


_KEYWORDS = frozenset(__import__("keyword").kwlist)


def positive_int(raw: str, option: str, magic: str) -> int:
    """``raw`` as an int of at least 1, else an :class:`ArgumentError` naming ``option``."""
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ArgumentError(f"%{magic}: {option} needs a whole number of milliseconds > 0, got {raw!r}")
    return value


# -- %mcp_task -----------------------------------------------------------------------------------

TASK_OPTIONS = (
    Option(("-o", "--out"), "out", True, "VAR"),
    Option(("--wait",), "wait", False),
    Option(("--ttl",), "ttl", True, "MS"),
    Option(("--answers",), "answers", True, "JSON mapping"),
    Option(("--cache",), "cache", False),
    Option(("--refresh",), "refresh", False),
    Option(("--compact",), "compact", False),
    Option(("--no-app",), "no_app", False),
)


@dataclass(frozen=True)
class TaskCall:
    """What ``%mcp_task`` / ``%%mcp_task`` asked for."""

    server: str | None
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    out: str | None = None
    wait: bool = False
    ttl: int | None = None
    answers: dict[str, Any] | None = None
    #: Reuse the stored result of an identical earlier completed call (``--cache``).
    cache: bool = False
    #: Show the task on one line (``--compact``).
    compact: bool = False
    #: Draw the plain result, not the tool's MCP Apps view (``--no-app``).
    no_app: bool = False

    @property
    def label(self) -> str:
        """``server:tool`` (or just ``tool``) as the user wrote it, for messages."""
        return f"{self.server}:{self.tool}" if self.server else self.tool


def parse_target(word: str, magic: str = "mcp_task") -> tuple[str | None, str]:
    """``NAME:TOOL`` or ``TOOL`` as (server or None, tool)."""
    if "=" in word:
        raise ArgumentError(f"%{magic}: expected NAME:TOOL (or TOOL) before the arguments, got {word!r}")
    server, colon, tool = word.partition(":")
    if not colon:
        server, tool = "", word
    if colon and not NAME_RE.match(server):
        raise ArgumentError(f"%{magic}: {server!r} is not a server name (in {word!r})")
    if not tool or ":" in tool:
        raise ArgumentError(f"%{magic}: expected NAME:TOOL, got {word!r}")
    return server or None, tool


def parse_task_line(
    line: str, *, body: str | None = None, expand: Expand = no_expand, magic: str = "mcp_task"
) -> TaskCall:
    """Parse ``[options] NAME:TOOL [key=value ...]`` (and, for ``%%mcp_task``, the cell body)."""
    shown = magic if body is None else f"%{magic}"  # messages say %mcp_task or %%mcp_task
    try:
        words = split_words(line)
    except ArgumentError as exc:
        raise ArgumentError(f"%{shown}: {exc}") from None
    found, rest = take_options(words, TASK_OPTIONS, shown, expand)
    if not rest:
        raise ArgumentError(f"%{shown}: which tool? Write %{shown} [options] NAME:TOOL [key=value ...]")
    server, tool = parse_target(expand(rest[0]), shown)
    try:
        arguments = parse_arguments(rest[1:], expand=expand)
    except ArgumentError as exc:
        raise ArgumentError(f"%{shown} {rest[0]}: {exc}") from None
    if body is not None:
        try:
            from_body = parse_cell_body(body)
        except ArgumentError as exc:
            raise ArgumentError(f"%{shown} {rest[0]}: {exc}") from None
        twice = sorted(set(from_body) & set(arguments))
        if twice:
            raise ArgumentError(
                f"%{shown} {rest[0]}: argument(s) {', '.join(twice)} given both on the line and in the cell body"
            )
        arguments = {**from_body, **arguments}
    answers = None
    if "answers" in found:
        answers = parse_value(found["answers"])
        if isinstance(answers, str):  # quoted like a shell word: --answers '{"depth": 2}'
            answers = parse_value(answers)
        if not isinstance(answers, dict):
            raise ArgumentError(
                f"%{shown}: --answers needs a JSON mapping of field names to values, "
                f"e.g. --answers '{{\"depth\": 2}}'"
            )
    return TaskCall(
        server=server,
        tool=tool,
        arguments=arguments,
        out=variable_name(found["out"], "-o", shown) if "out" in found else None,
        wait=bool(found.get("wait")),
        ttl=positive_int(found["ttl"], "--ttl", shown) if "ttl" in found else None,
        answers=answers,
        # --refresh forces a new run (and wins over --cache)
        cache=bool(found.get("cache")) and not found.get("refresh"),
        compact=bool(found.get("compact")),
        no_app=bool(found.get("no_app")),
    )


def parse_cell_body(body: str) -> dict[str, Any]:
    """A ``%%mcp_task`` cell body: a JSON object or a YAML mapping of arguments (empty: none)."""
    if not body.strip():
        return {}
    try:
        value = json.loads(body)
    except ValueError:
        value = load_yaml(body)
    if not isinstance(value, dict):
        kind = "nothing" if value is None else f"a {type(value).__name__}"
        raise ArgumentError(
            f"the cell body must be a mapping of argument names to values "
            f"(JSON object or YAML 'key: value' lines), got {kind}"
        )
    try:
        return {_body_key(k): body_value(v, str(k)) for k, v in value.items()}
    except TypeError as exc:
        raise ArgumentError(f"the cell body has a value JSON cannot carry: {exc}") from None


def load_yaml(body: str) -> Any:
    """A cell body read as YAML (safe loader); a YAML error becomes an :class:`ArgumentError`."""
    import yaml

    try:
        return yaml.safe_load(body)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ArgumentError(f"the cell body is neither JSON nor YAML: {problem}{where}") from None


def _body_key(key: Any) -> str:
    if not isinstance(key, str):
        raise ArgumentError(f"argument names in the cell body must be strings, got {key!r}")
    return key


def body_value(value: Any, where: str) -> Any:
    """A value read from a body made JSON-able (dates as ISO text), at any depth; TypeError naming
    ``where`` for anything JSON cannot hold."""
    if isinstance(value, (datetime.date, datetime.datetime, datetime.time)):
        return value.isoformat()  # YAML reads 2025-01-31 as a date; the tool gets the text back
    if isinstance(value, (list, tuple)):
        return [body_value(v, where) for v in value]
    if isinstance(value, dict):
        return {_body_key(k): body_value(v, where) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"{where!r} is a {type(value).__name__}")


# -- %mcp_connect --------------------------------------------------------------------------------

CONNECT_OPTIONS = (
    Option(("--header", "-H"), "header", True, "NAME=VALUE"),
    Option(("--env", "-e"), "env", True, "NAME=VALUE"),
    Option(("--dialect",), "dialect", True, "|".join(DIALECTS)),
    Option(("--timeout",), "timeout", True, "SECONDS"),
)


@dataclass(frozen=True)
class ConnectArgs:
    """What ``%mcp_connect`` asked for; ``target`` None means: look NAME up in mcp.json."""

    name: str
    target: str | list[str] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    dialect: str | None = None
    timeout: float | None = None

    def __repr__(self) -> str:  # header and env values are secrets: never shown
        target = safe_url(self.target) if isinstance(self.target, str) else self.target
        return (
            f"ConnectArgs(name={self.name!r}, target={target!r}, headers={sorted(self.headers)}, "
            f"env={sorted(self.env)}, dialect={self.dialect!r}, timeout={self.timeout!r})"
        )


def parse_connect_line(line: str) -> ConnectArgs:
    """Parse ``[options] NAME [options] [URL_OR_COMMAND ...]`` (see the module docstring)."""
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise ArgumentError(f"%mcp_connect: {exc} (check the quotes)") from None
    headers: dict[str, str] = {}
    env: dict[str, str] = {}
    values: dict[str, str] = {}
    name: str | None = None
    target: list[str] = []
    i = 0
    options_open = True
    by_name = {n: o for o in CONNECT_OPTIONS for n in o.names}
    while i < len(words):
        word = words[i]
        if options_open and word == "--":
            options_open = False
        elif options_open and word.startswith("-") and word != "-":
            key, eq, inline = word.partition("=")
            option = by_name.get(key)
            if option is None:
                raise ArgumentError(
                    f"%mcp_connect: unknown option {key!r} before the server command "
                    f"(options: --header, --env, --dialect, --timeout; "
                    f"put '--' before a command that starts with '-')"
                )
            if eq:
                raw = inline
            elif i + 1 < len(words):
                i += 1
                raw = words[i]
            else:
                raise ArgumentError(f"%mcp_connect: option {key} needs a value ({option.metavar})")
            if option.dest == "header":
                hname, hvalue = _pair(raw, "--header", HEADER_NAME_RE, ":=")
                headers[hname] = hvalue
            elif option.dest == "env":
                ename, evalue = _pair(raw, "--env", ENV_NAME_RE, "=")
                env[ename] = evalue
            else:
                if option.dest in values:
                    raise ArgumentError(f"%mcp_connect: option {key} is given twice")
                values[option.dest] = raw
        elif name is None:
            name = word
        else:
            target = words[i:]
            break
        i += 1
    if name is None:
        raise ArgumentError(
            "%mcp_connect: which server? Write %mcp_connect NAME URL_OR_COMMAND (or just NAME to use mcp.json)"
        )
    if not NAME_RE.match(name):
        raise ArgumentError(f"%mcp_connect: {name!r} is not a usable name (letters, digits, _ . -; no ':')")
    dialect = values.get("dialect")
    if dialect is not None and dialect not in DIALECTS:
        raise ArgumentError(f"%mcp_connect: unknown dialect {dialect!r} (choose one of {', '.join(DIALECTS)})")
    timeout = None
    if "timeout" in values:
        try:
            timeout = float(values["timeout"])
        except ValueError:
            timeout = -1.0
        if not timeout > 0:
            raise ArgumentError(
                f"%mcp_connect: --timeout needs a number of seconds > 0, got {values['timeout']!r}"
            )
    resolved: str | list[str] | None = None
    if target:
        if target[0].startswith(("http://", "https://")):
            if len(target) > 1:
                raise ArgumentError(
                    f"%mcp_connect {name}: a URL takes no further words "
                    f"(got {' '.join(target[1:])!r}); options go before the URL"
                )
            if env:
                raise ArgumentError(
                    f"%mcp_connect {name}: --env applies to commands (stdio); this target is a URL"
                )
            resolved = target[0]
        else:
            if headers:
                raise ArgumentError(
                    f"%mcp_connect {name}: --header applies to URLs (HTTP); this target is a command"
                )
            resolved = target
    return ConnectArgs(name, resolved, headers, env, dialect, timeout)


def _pair(raw: str, option: str, name_re: re.Pattern[str], separators: str) -> tuple[str, str]:
    """``NAME=VALUE`` (or ``NAME: VALUE`` for headers); the message never shows the value."""
    cut = min((raw.find(s) for s in separators if s in raw), default=-1)
    key = raw[:cut].strip() if cut >= 0 else raw.strip()
    if cut < 0 or not name_re.match(key):
        shown = key if name_re.match(key) else "…"
        raise ArgumentError(
            f"%mcp_connect: {option} needs NAME=VALUE (got a value without a usable name: {shown!r})"
        )
    return key, raw[cut + 1 :].strip()


# -- %mcp_result, %mcp_cancel, %mcp_tasks, %mcp_tools --------------------------------------------

RESULT_OPTIONS = (Option(("-o", "--out"), "out", True, "VAR"),)


@dataclass(frozen=True)
class TaskRef:
    """A task named by ``[NAME:]TASK_ID`` or by a variable holding a TaskHandle."""

    ref: str
    out: str | None = None


def parse_task_ref(line: str, *, magic: str, allow_out: bool, expand: Expand = no_expand) -> TaskRef:
    """Parse ``[-o VAR] TASK_ID_OR_VARIABLE [-o VAR]`` (``-o`` only where ``allow_out``)."""
    words = [expand(w) for w in split_words(line)]
    out: str | None = None
    refs: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word in ("-o", "--out") or word.startswith(("-o=", "--out=")):
            if not allow_out:
                raise ArgumentError(f"%{magic} takes no -o option")
            if out is not None:
                raise ArgumentError(f"%{magic}: option -o is given twice")
            if "=" in word:
                raw = word.partition("=")[2]
            elif i + 1 < len(words):
                i += 1
                raw = words[i]
            else:
                raise ArgumentError(f"%{magic}: option -o needs a value (VAR)")
            out = variable_name(raw, "-o", magic)
        elif word.startswith("-") and len(word) > 1:
            known = " (options: -o VAR)" if allow_out else ""
            raise ArgumentError(f"%{magic}: unknown option {word!r}{known}")
        else:
            refs.append(word)
        i += 1
    if len(refs) != 1:
        what = "nothing" if not refs else " ".join(refs)
        raise ArgumentError(
            f"%{magic}: expected one task id ([NAME:]TASK_ID) or a variable holding a task, got {what}"
        )
    return TaskRef(refs[0], out)


@dataclass(frozen=True)
class TasksArgs:
    """What ``%mcp_tasks`` asked for."""

    server: str | None = None
    status: str | None = None
    resume: bool = False
    clear: bool = False
    #: ``--export PATH``: write the provenance of this notebook's tasks there.
    export: str | None = None
    #: Show the task index's history on the board at first (``--history``).
    history: bool = False
    #: List the task index's sweeps (``client.map`` batches) with their counts (``--sweeps``).
    sweeps: bool = False


def parse_tasks_line(line: str, *, expand: Expand = no_expand) -> tuple[str | None, str | None]:
    """``%mcp_tasks [NAME] [--status S]`` (options before or after NAME) as (server, status)."""
    args = parse_tasks_args(line, expand=expand)
    return args.server, args.status


def parse_tasks_args(line: str, *, expand: Expand = no_expand) -> TasksArgs:
    """``%mcp_tasks [NAME] [--status S] [--history] | --resume | --clear | --export PATH`` (options before
    or after NAME)."""
    words = [expand(w) for w in split_words(line)]
    names = [w for w in words if not w.startswith("-")]
    values: dict[str, str] = {}
    flags = {"--resume": False, "--clear": False, "--history": False, "--sweeps": False}
    i = 0
    while i < len(words):
        word = words[i]
        if word in flags:
            flags[word] = True
        elif word.startswith("-"):
            key, eq, inline = word.partition("=")
            option = {"--status": "--status", "-s": "--status", "--export": "--export"}.get(key)
            if option is None:
                raise ArgumentError(
                    f"%mcp_tasks: unknown option {key!r} "
                    "(options: --status S, --history, --resume, --clear, --export PATH, --sweeps)"
                )
            if eq:
                value = inline
            elif i + 1 < len(words):
                i += 1
                value = words[i]
                names.remove(value)
            else:
                raise ArgumentError(f"%mcp_tasks: {option} needs a value")
            if option == "--status" and value not in TASK_STATUSES:
                raise ArgumentError(f"%mcp_tasks: unknown status {value!r} (one of {', '.join(TASK_STATUSES)})")
            values[option] = value
        i += 1
    if len(names) > 1:
        raise ArgumentError(f"%mcp_tasks: expected at most one server name, got {' '.join(names)}")
    board = "--status" in values or flags["--history"]
    if flags["--resume"] + flags["--clear"] + ("--export" in values) + board + flags["--sweeps"] > 1:
        raise ArgumentError(
            "%mcp_tasks: give one of --status S (with --history), --resume, --clear, --export PATH, --sweeps"
        )
    return TasksArgs(
        names[0] if names else None,
        values.get("--status"),
        flags["--resume"],
        flags["--clear"],
        values.get("--export"),
        flags["--history"],
        flags["--sweeps"],
    )


def parse_server_name(line: str, *, magic: str, expand: Expand = no_expand) -> str | None:
    """An optional single NAME (``%mcp_tools [NAME]``)."""
    words = [expand(w) for w in split_words(line)]
    if len(words) > 1 or (words and words[0].startswith("-")):
        raise ArgumentError(f"%{magic}: expected at most one server name, got {line.strip()!r}")
    return words[0] if words else None


__all__ = [
    "TASK_STATUSES",
    "ArgumentError",
    "ConnectArgs",
    "Expand",
    "Option",
    "TaskCall",
    "TaskRef",
    "TasksArgs",
    "body_value",
    "load_yaml",
    "no_expand",
    "parse_arguments",
    "parse_cell_body",
    "parse_connect_line",
    "parse_server_name",
    "parse_target",
    "parse_task_line",
    "parse_task_ref",
    "parse_tasks_args",
    "parse_tasks_line",
    "parse_value",
    "positive_int",
    "split_words",
    "take_options",
    "variable_name",
]
