"""Objects change their own state: no code of the package reaches into another object's underscores,
imports another module's underscore names, or writes a task handle's state (its ``TaskControl``,
``tasks/control.py``, is the one way in). Read from the source (ast), so a new reach fails here."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest

from mcp_tasks_jupyter.session.session import Session
from mcp_tasks_jupyter.tasks.handle import HandleControls, TaskHandle

PACKAGE = Path(__file__).resolve().parents[1] / "mcp_tasks_jupyter"

#: The reaches allowed, each with its reason: (file relative to the package, attribute).
ALLOWED: dict[tuple[str, str], str] = {
    # namedtuple's public API is underscored so that it cannot clash with a field's name
    ("demo/auth_server.py", "_replace"): "urllib's SplitResult is a namedtuple: _replace is its public API",
    # the handle makes its control and keeps it out of its users' sight; this one function hands it to the
    # parts that drive a task (the lifecycle, the pollers, the dialects, the runtime)
    ("tasks/control.py", "_control"): "control_of is the one door to a handle's TaskControl",
}
#: Underscored names that are public by convention: the dunders, and IPython's display and traceback hooks
#: (``_repr_html_`` ..., ``_render_traceback_``: what IPython asks an object or an exception for).
CONVENTION = ("__", "_repr_", "_render_traceback_")


def _own(node: ast.expr) -> bool:
    """Whether ``node`` is the object itself: ``self``, ``cls`` or ``super()``."""
    if isinstance(node, ast.Name):
        return node.id in ("self", "cls")
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def _reaches() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                name = node.attr
                if not name.startswith("_") or name.startswith(CONVENTION) or _own(node.value):
                    continue
                if (where, name) in ALLOWED:
                    continue
                found.append(f"{where}:{node.lineno}: .{name}")
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        if (where, alias.name) in ALLOWED:
                            continue
                        found.append(f"{where}:{node.lineno}: imports {alias.name} from {node.module}")
    return found


def test_no_code_reaches_into_another_objects_underscores() -> None:
    assert _reaches() == []


def test_the_allowance_names_reaches_that_exist() -> None:
    """An allowance whose reach is gone is dropped (at most 3 in all, each with its reason)."""
    assert len(ALLOWED) <= 3
    for (where, name), reason in ALLOWED.items():
        assert reason and name in (PACKAGE / where).read_text(), (where, name)


#: What changes a list, dict or deque in place.
MUTATORS = frozenset(
    {
        "append",
        "appendleft",
        "extend",
        "insert",
        "pop",
        "popleft",
        "popitem",
        "remove",
        "clear",
        "update",
        "setdefault",
    }
)


def _handle_fields() -> set[str]:
    """A TaskHandle's properties and the containers it keeps (``logs``, ``pending_input``, ...: set on
    ``self`` in ``__init__``, public and not underscored)."""
    fields = {name for name, value in vars(TaskHandle).items() if isinstance(value, property)}
    tree = ast.parse((PACKAGE / "tasks" / "handle.py").read_text())
    handle = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "TaskHandle")
    init = next(n for n in handle.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    for node in ast.walk(init):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Attribute) and _own(target.value) and not target.attr.startswith("_"):
                    fields.add(target.attr)
    return fields


def _of_a_handle(node: ast.expr, fields: set[str]) -> bool:
    """Whether ``node`` is ``<handle>.<field>`` (a handle goes by ``handle``, ``h``, ``task`` or ``item``)."""
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in ("handle", "h", "task", "item")
        and node.attr in fields
    )


def _writes_to_handles() -> list[str]:
    """Writes of a handle's state outside tasks/handle.py: ``<x>.<field> = ...`` (also augmented,
    ``del``, an item of it: ``handle.pending_input[key] = ...``) and in-place changes of the
    containers it keeps (``handle.pending_input.clear()``)."""
    fields = _handle_fields()
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        if where == "tasks/handle.py" or where.startswith("demo/"):
            continue  # the demo server never holds a TaskHandle (its tasks are its own records)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[ast.expr] = []
            if isinstance(node, (ast.Assign, ast.Delete)):
                targets = [t for target in node.targets for t in _flat(target)]
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            for target in targets:
                while isinstance(target, ast.Subscript):
                    target = target.value
                if _of_a_handle(target, fields):
                    found.append(f"{where}:{node.lineno}: {ast.unparse(target)} written")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in MUTATORS
                and _of_a_handle(node.func.value, fields)
            ):
                found.append(f"{where}:{node.lineno}: {ast.unparse(node.func)}()")
    return found


def _flat(target: ast.expr) -> list[ast.expr]:
    if isinstance(target, (ast.Tuple, ast.List)):
        return [t for element in target.elts for t in _flat(element)]
    return [target]


def test_no_module_writes_a_handles_state() -> None:
    assert _writes_to_handles() == []


async def _no_op(_handle: TaskHandle) -> None:
    return None


@pytest.mark.parametrize(
    "field", sorted(name for name, value in vars(TaskHandle).items() if isinstance(value, property))
)
def test_a_stray_write_to_a_handle_fails_loudly(field: str) -> None:
    async def make() -> TaskHandle:
        controls = HandleControls(_no_op, lambda: False)
        return TaskHandle("demo", "tool", {}, runs_as_task=True, progress_token="t", controls=controls)

    handle = asyncio.run(make())
    with pytest.raises(AttributeError):
        setattr(handle, field, None)


def _settable(name: str) -> bool:
    """A property of ``Session`` with a setter: a method written as an assignment (``name``)."""
    prop = getattr(Session, name, None)
    return isinstance(prop, property) and prop.fset is not None


def _session_writes() -> list[str]:
    """Assignments outside ``session/`` to a session's attribute (``x.session.name = ...``) or into one
    of its tables (``session.handlers[m] = ...``), and appends to its lists: what a session takes, it
    takes through a method (``server_requests.on_request``, ``when_lost``, ``mirror_param_headers``...)."""

    def is_session(node: ast.expr) -> bool:
        return (isinstance(node, ast.Name) and node.id == "session") or (
            isinstance(node, ast.Attribute) and node.attr == "session"
        )

    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        if where.startswith(("session/", "demo/")):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("append", "extend", "update", "setdefault")
                and isinstance(node.func.value, ast.Attribute)
                and is_session(node.func.value.value)
            ):
                found.append(f"{where}:{node.lineno}: session.{node.func.value.attr}.{node.func.attr}(...)")
            for target in targets:
                if isinstance(target, ast.Subscript):
                    target = target.value  # session.table[key] = ... writes the table
                if isinstance(target, ast.Attribute) and is_session(target.value) and not _settable(target.attr):
                    found.append(f"{where}:{node.lineno}: session.{target.attr} = ...")
    return found


def test_nobody_writes_a_sessions_fields_they_register_through_its_methods() -> None:
    """The dialects, the lifecycle and the client register handlers and listeners with the session's
    methods; none writes its dicts and lists (issue 31: the session's parts each keep their own)."""
    assert _session_writes() == []
