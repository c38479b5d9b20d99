"""Tab completion in the ``%mcp_*`` magics, through IPython's completer (so a kernel's
``complete_request`` answers with it too, as JupyterLab asks).

What is offered where the cursor is:

- ``%mcp_task`` / ``%%mcp_task`` (first line): options (``--wait``, ``-o`` ...) while the word starts
  with ``-``; then ``NAME:`` of each connection, ``NAME:TOOL`` of its tools once ``NAME:`` is
  typed (all tools when one server is connected); then ``key=`` for each argument of the tool's
  input schema not given yet, and a property's ``enum`` values (or ``true``/``false``) after ``key=``;
- ``%%mcp_task`` body lines: ``key: `` for each argument not given yet;
- ``%mcp_cancel`` / ``%mcp_result``: variables holding a task handle and ``NAME:TASK_ID`` of the tasks
  this kernel knows (running ones only for ``%mcp_cancel``);
- ``%mcp_tools`` / ``%mcp_tasks``: connection names.

Inside these magics nothing else is offered (no Python names). Tools come from the connection's last
``tools/list`` (``Client.cached_tools``); before the first one a background job asks for them, so
the next Tab has them. Completion never waits on a server.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Any

from ..tasks.handle import TaskHandle
from ..tasks.tool_arguments import argument_names
from .magic_args import RESULT_OPTIONS, TASK_OPTIONS

log = logging.getLogger(__name__)

IDENTIFIER = "mcp_tasks_jupyter"
_LINE_MAGIC = re.compile(r"(?:^|[\s=(])%(%?)(mcp_[a-z_]+)(?:\s+(.*))?$")
_BODY_KEY = re.compile(r"^\s*([A-Za-z_][\w.-]*)?$")
_OPTIONS_WITH_VALUE = {name for option in TASK_OPTIONS if option.takes_value for name in option.names}


class Completer:
    """Completions for the ``%mcp_*`` magics of one shell, from one runtime."""

    def __init__(self, runtime: Any, user_ns: dict[str, Any]) -> None:
        self.runtime = runtime
        self.user_ns = user_ns
        self._asked: set[str] = set()

    def complete(self, full_text: str, line: int, column: int) -> tuple[str, list[str]] | None:
        """(the fragment being completed, completions) at line ``line``, column ``column`` of
        ``full_text``; None when the cursor is in no ``%mcp_*`` magic."""
        lines = full_text.split("\n")
        before = lines[line][:column] if line < len(lines) else ""
        if line > 0 and lines[0].startswith("%%mcp_task"):
            return self._body_key(lines[0], lines[1:line], before)
        found = _LINE_MAGIC.search(before)
        if found is None or (found.group(3) is None and not before.endswith(" ")):
            return None
        magic, rest = found.group(2), found.group(3) or ""
        words = rest.split()
        fragment = "" if not rest or rest[-1].isspace() else words.pop()
        if magic == "mcp_task":
            return fragment, self._task(words, fragment)
        if magic in ("mcp_cancel", "mcp_result"):
            return fragment, self._task_refs(magic, words, fragment)
        if magic in ("mcp_tools", "mcp_tasks"):
            options = ["--status", "--history", "--resume", "--clear"] if magic == "mcp_tasks" else []
            choices = [*options] if fragment.startswith("-") else list(self.runtime.connections)
            return fragment, _starting(choices, fragment)
        return None

    # -- %mcp_task -------------------------------------------------------------------------------

    def _task(self, words: list[str], fragment: str) -> list[str]:
        i = 0
        while i < len(words) and words[i].startswith("-"):
            i += 2 if words[i] in _OPTIONS_WITH_VALUE else 1
        if i > len(words):  # the fragment is an option's value
            return []
        if i == len(words):  # the fragment is an option or NAME:TOOL
            if fragment.startswith("-"):
                return _starting([o.names[-1] for o in TASK_OPTIONS] + ["-o"], fragment)
            return self._targets(fragment)
        schema = self._schema(words[i])
        if schema is None:
            return []
        given = {w.partition("=")[0] for w in words[i + 1 :]}
        key, eq, value = fragment.partition("=")
        if eq:
            return [f"{key}={v}" for v in _values(schema, key) if v.startswith(value)]
        return _starting([f"{name}=" for name in argument_names(schema) if name not in given], fragment)

    def _targets(self, fragment: str) -> list[str]:
        names = list(self.runtime.connections)
        server, colon, _tool = fragment.partition(":")
        if colon:
            return _starting([f"{server}:{t}" for t in self._tools(server)], fragment)
        found = _starting([f"{n}:" for n in names], fragment)
        if len(names) == 1:
            found += _starting(self._tools(names[0]), fragment)
        return found

    def _tools(self, server: str) -> list[str]:
        client = self.runtime.clients.get(server)
        if client is None:
            return []
        tools = client.cached_tools
        if tools is None:
            self._ask_for_tools(server, client)
            return []
        return [tool.name for tool in tools]

    def _ask_for_tools(self, server: str, client: Any) -> None:
        if server in self._asked:
            return
        self._asked.add(server)
        try:
            job = self.runtime.spawn(client.list_tools(), name=f"mcp-complete-tools {server}")
        except RuntimeError:  # no running loop (a plain IPython without autoawait)
            self._asked.discard(server)
            return
        job.add_done_callback(lambda _job: self._asked.discard(server))

    def _schema(self, target: str) -> dict[str, Any] | None:
        server, colon, tool = target.partition(":")
        if not colon:
            names = list(self.runtime.clients)
            if len(names) != 1:
                return None
            server, tool = names[0], target
        client = self.runtime.clients.get(server)
        if client is None:
            return None
        if client.cached_tools is None:
            self._ask_for_tools(server, client)
            return None
        for spec in client.cached_tools:
            if spec.name == tool:
                schema: dict[str, Any] = spec.input_schema
                return schema
        return None

    def _body_key(self, first: str, body: list[str], before: str) -> tuple[str, list[str]] | None:
        found = _BODY_KEY.match(before)
        if found is None:
            return None
        fragment = found.group(1) or ""
        words = first[len("%%mcp_task") :].split()
        i = 0
        while i < len(words) and words[i].startswith("-"):
            i += 2 if words[i] in _OPTIONS_WITH_VALUE else 1
        schema = self._schema(words[i]) if i < len(words) else None
        if schema is None:
            return fragment, []
        given = {w.partition("=")[0] for w in words[i + 1 :]}
        given |= {b.split(":", 1)[0].strip() for b in body if ":" in b}
        return fragment, _starting([f"{n}: " for n in argument_names(schema) if n not in given], fragment)

    # -- %mcp_cancel, %mcp_result ----------------------------------------------------------------

    def _task_refs(self, magic: str, words: list[str], fragment: str) -> list[str]:
        if words and words[-1] in ("-o", "--out"):
            return []
        if fragment.startswith("-"):
            return _starting([o.names[0] for o in RESULT_OPTIONS], fragment) if magic == "mcp_result" else []
        running_only = magic == "mcp_cancel"
        variables = [
            name
            for name, value in self.user_ns.items()
            if isinstance(value, TaskHandle) and not name.startswith("_") and not (running_only and value.done())
        ]
        ids = [
            f"{h.server}:{h.task_id}"
            for h in self.runtime.handles
            if h.task_id and not (running_only and h.done())
        ]
        return _starting(sorted(variables), fragment) + _starting(list(dict.fromkeys(reversed(ids))), fragment)


def _starting(choices: Iterable[str], fragment: str) -> list[str]:
    return [c for c in choices if c.startswith(fragment)]


def _values(schema: dict[str, Any], key: str) -> list[str]:
    prop = (schema.get("properties") or {}).get(key)
    if not isinstance(prop, dict):
        return []
    if isinstance(prop.get("enum"), list):
        return [v if isinstance(v, str) and v and " " not in v else _json(v) for v in prop["enum"]]
    if prop.get("type") == "boolean":
        return ["true", "false"]
    return []


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def install(shell: Any, runtime: Any) -> None:
    """Add the matcher to ``shell``'s completer (once)."""
    completer = getattr(shell, "Completer", None)
    if completer is None or any(_ours(m) for m in completer.custom_matchers):
        return
    from IPython.core.completer import SimpleCompletion, context_matcher

    ours = Completer(runtime, shell.user_ns)

    def matcher(context: Any) -> dict[str, Any]:
        try:
            found = ours.complete(context.full_text, context.cursor_line, context.cursor_position)
        except Exception as exc:  # completion must never break typing
            log.debug("completion failed: %s", exc)
            found = None
        if found is None:
            return {"completions": [], "suppress": False}
        fragment, texts = found
        if not texts:
            # Inside our magics nothing else fits; IPython lets a matcher suppress the others only when
            # it offers something, so it offers the fragment itself: a completion that changes nothing.
            texts = [fragment]
        return {
            "completions": [SimpleCompletion(text, type="mcp") for text in texts],
            "matched_fragment": fragment,
            "suppress": True,
            "ordered": True,
        }

    marked = context_matcher(identifier=IDENTIFIER, priority=100)(matcher)  # the v2 matcher API
    completer.custom_matchers.append(marked)


def uninstall(shell: Any) -> None:
    completer = getattr(shell, "Completer", None)
    if completer is not None:
        completer.custom_matchers[:] = [m for m in completer.custom_matchers if not _ours(m)]


def _ours(matcher: Any) -> bool:
    """Whether ``matcher`` is the one ``install`` added (IPython's matchers carry their identifier)."""
    return getattr(matcher, "matcher_identifier", None) == IDENTIFIER


__all__ = ["Completer", "install", "uninstall"]
