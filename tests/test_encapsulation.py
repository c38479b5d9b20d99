"""Objects change their own state: no code of the package reaches into another object's underscores,
imports another module's underscore names, or writes a task handle's state (``TaskHandle``'s
methods are the one way in). Read from the source (ast), so a new reach fails here."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest

from mcp_tasks_jupyter.tasks.handle import HandleControls, TaskHandle

PACKAGE = Path(__file__).resolve().parents[1] / "mcp_tasks_jupyter"

#: The reaches allowed, each with its reason: (file relative to the package, attribute).
ALLOWED: dict[tuple[str, str], str] = {
    # namedtuple's public API is underscored so that it cannot clash with a field's name
    ("demo/auth_server.py", "_replace"): "urllib's SplitResult is a namedtuple: _replace is its public API",
    # IPython names no public object for its asyncio cell runner; ``is`` against it tells whether
    # cells are awaited on the kernel's own loop (transform.py rewrites them only then).
    ("jupyter/transform.py", "_asyncio_runner"): "IPython's asyncio cell runner has no public name",
}
#: Underscored names that are public by convention (the dunders and IPython's display hooks).
CONVENTION = ("__",)


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
                if name.startswith("_repr_") or (where, name) in ALLOWED:
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


def _writes_to_handles() -> list[str]:
    """Assignments ``<x>.<attr> = ...`` where ``attr`` is a TaskHandle property, outside tasks/handle.py."""
    fields = {name for name, value in vars(TaskHandle).items() if isinstance(value, property)}
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        if where == "tasks/handle.py" or where.startswith("demo/"):
            continue  # the demo server never holds a TaskHandle (its tasks are its own records)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = [t for target in node.targets for t in _flat(target)]
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            for target in targets:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id in ("handle", "h", "task", "item")
                    and target.attr in fields
                ):
                    found.append(f"{where}:{node.lineno}: {target.value.id}.{target.attr} = ...")
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
