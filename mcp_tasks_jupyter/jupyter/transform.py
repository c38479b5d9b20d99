"""The input transformer that lets a cell await the magics it runs.

IPython turns ``h = %mcp_task ...`` into ``h = get_ipython().run_line_magic('mcp_task', '...')``
(and ``%%mcp_task`` into ``get_ipython().run_cell_magic('mcp_task', '...', body)``) before the
transformers in ``input_transformers_post`` run. This one finds those calls for the awaiting magics
and wraps them: ``h = await _mtj_await(get_ipython().run_line_magic('mcp_task', '...'))``. The cell
now has a top-level ``await``, so IPython runs it as a coroutine on the kernel's loop: the cell waits
for the magic's work while every background job keeps running.

Only the call is rewritten (by position, so the rest of the cell is byte for byte what IPython
produced). A magic that is a statement of its own gets ``bare=True`` so a value it has already
displayed is not shown twice; one assigned to a plain variable (``r = %mcp_task --wait ...``) gets
``target='r'``, so an interrupted wait still leaves the task's handle in ``r`` (``interrupts.py``).
An ``mcp_task`` call in a loop, or in a cell with more than ``COMPACT_AFTER`` of them, gets
``many=True``: the cell starts many tasks, so each is shown on one line (the compact widget).

Limits: calls inside ``def``, ``lambda``, ``class`` bodies and comprehensions are left alone (an
``await`` there would change what the code means), as are magics run under another cell magic
(``%%time``) or through ``run_line_magic`` with a computed name; there the magic returns a
``Pending`` to ``await``. Nothing is rewritten when ``%autoawait`` is off or its runner is not
asyncio. A cell that does not parse is left for IPython to report.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from typing import Any

from .pending import HELPER_NAME, settle
from .widgets.compact_widget import COMPACT_AFTER

#: The magics whose calls are awaited.
AWAITING_MAGICS = frozenset({"mcp_connect", "mcp_tools", "mcp_task", "mcp_cancel", "mcp_result", "mcp_map"})
_METHODS = ("run_line_magic", "run_cell_magic")
_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


def rewrite(source: str, magics: Iterable[str] = AWAITING_MAGICS, helper: str = HELPER_NAME) -> str:
    """``source`` with every top-level call of one of ``magics`` wrapped in ``await helper(...)``."""
    if not any(method in source for method in _METHODS):
        return source
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    names = frozenset(magics)
    found = list(_magic_calls(tree, names, helper))
    if not found:
        return source
    tasks = sum(1 for call, _bare, _target, _loop in found if _magic_name(call) == "mcp_task")
    data = source.encode("utf-8")
    starts = _line_starts(data)
    edits: list[tuple[int, bytes]] = []
    for call, bare, target, in_loop in found:
        assert call.end_lineno is not None and call.end_col_offset is not None
        begin = starts[call.lineno - 1] + call.col_offset
        end = starts[call.end_lineno - 1] + call.end_col_offset
        tail = ", bare=True" if bare else f", target={target!r}" if target else ""
        if _magic_name(call) == "mcp_task" and (in_loop or tasks > COMPACT_AFTER):
            tail += ", many=True"
        edits.append((end, (tail + ")").encode()))
        edits.append((begin, f"await {helper}(".encode()))
    for offset, text in sorted(edits, key=lambda edit: edit[0], reverse=True):
        data = data[:offset] + text + data[offset:]
    return data.decode("utf-8")


def _line_starts(data: bytes) -> list[int]:
    starts = [0]
    for index, byte in enumerate(data):
        if byte == 0x0A:
            starts.append(index + 1)
    return starts


def _magic_name(call: ast.Call) -> Any:
    first = call.args[0]
    return first.value if isinstance(first, ast.Constant) else None


def _magic_calls(
    tree: ast.AST, names: frozenset[str], helper: str
) -> Iterator[tuple[ast.Call, bool, str | None, bool]]:
    """(call, is a statement of its own, the plain variable it is assigned to, inside a loop) for
    each awaitable magic call outside nested scopes, in source order."""
    found: list[tuple[ast.Call, bool, str | None, bool]] = []
    stack: list[tuple[ast.AST, ast.AST | None, bool]] = [(tree, None, False)]
    while stack:
        node, parent, in_loop = stack.pop()
        if isinstance(node, ast.Call) and _is_magic_call(node, names):
            if not isinstance(parent, ast.Await) and not _is_helper_call(parent, helper):
                target = None
                if isinstance(parent, ast.Assign) and len(parent.targets) == 1:
                    name = parent.targets[0]
                    target = name.id if isinstance(name, ast.Name) else None
                found.append((node, isinstance(parent, ast.Expr), target, in_loop))
            continue
        looping = in_loop or isinstance(node, (ast.For, ast.AsyncFor, ast.While))
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, _SCOPES):
                stack.append((child, node, looping))
    found.sort(key=lambda item: (item[0].lineno, item[0].col_offset))
    yield from found


def _is_magic_call(node: ast.Call, names: frozenset[str]) -> bool:
    func = node.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr in _METHODS
        and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name)
        and func.value.func.id == "get_ipython"
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value in names
    )


def _is_helper_call(node: ast.AST | None, helper: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == helper


class AwaitMagics:
    """The transformer object put in ``shell.input_transformers_post``."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell

    def __call__(self, lines: list[str]) -> list[str]:
        if not self._can_await():
            return lines
        source = "".join(lines)
        rewritten = rewrite(source)
        if rewritten == source:
            return lines
        self.provide_helper()
        return rewritten.splitlines(keepends=True)

    def _can_await(self) -> bool:
        if not getattr(self.shell, "autoawait", False):
            return False
        runner = getattr(self.shell, "loop_runner", None)
        # IPython names its cell runners in ``loop_runner_map`` (what ``%autoawait asyncio`` picks):
        # cells are awaited on the kernel's own loop only with the asyncio one.
        asyncio_runner = getattr(self.shell, "loop_runner_map", {}).get("asyncio", (None,))[0]
        return runner is not None and runner is asyncio_runner

    def provide_helper(self) -> None:
        """Put the helper in the user namespace (again, e.g. after ``%reset``)."""
        if self.shell.user_ns.get(HELPER_NAME) is not settle:
            self.shell.user_ns[HELPER_NAME] = settle
            self.shell.user_ns_hidden[HELPER_NAME] = settle


def install(shell: Any) -> AwaitMagics:
    """Add the transformer to ``shell`` (once) and return it."""
    for transformer in shell.input_transformers_post:
        if isinstance(transformer, AwaitMagics):
            return transformer
    transformer = AwaitMagics(shell)
    shell.input_transformers_post.append(transformer)
    transformer.provide_helper()
    return transformer


def uninstall(shell: Any) -> None:
    """Remove the transformer and the helper from ``shell``."""
    shell.input_transformers_post[:] = [t for t in shell.input_transformers_post if not isinstance(t, AwaitMagics)]
    shell.user_ns.pop(HELPER_NAME, None)
    shell.user_ns_hidden.pop(HELPER_NAME, None)


__all__ = ["AWAITING_MAGICS", "AwaitMagics", "install", "rewrite", "uninstall"]
