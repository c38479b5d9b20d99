"""The package's layer rules, read from its sources with ``ast`` (nothing is imported).

1. Only ``mcp_tasks_jupyter/jupyter/`` imports the notebook stack (IPython, ipywidgets, anywidget,
   traitlets, ipykernel, comm, jupyter_client, jupyter_core).
2. ``mcp_tasks_jupyter/protocol/`` does no I/O: it imports pure stdlib modules, pydantic, and its own
   modules only.
3. Only ``mcp_tasks_jupyter/dialects/`` imports a dialect codec (``protocol/tasks_2025.py``,
   ``tasks_ext.py``, ``tasks_sep1686.py``).
4. No import cycles among the package's modules at import time.
5. The layer table of ``docs/architecture.md`` is the one that holds: every module belongs to one row,
   a row imports only from the rows above it (but for the few late imports listed in ``LATE_IMPORTS``,
   each with its reason), and each row's two import cells (the package's layers; what it imports from
   outside the standard library) say exactly what its modules import, no more and no less.
6. ``docs/architecture.md`` names every module of the package.

Imports under ``if TYPE_CHECKING:`` never run and are left out. Imports inside functions run (later),
so rules 1-3 count them; rule 4 does not (a function-level import is how a cycle is broken).

Plain ``ast`` rather than import-linter: the rules are a few lines each, need no new dependency and no
import of the package (so no IPython start-up), and the allow-lists below sit next to the rules.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "mcp_tasks_jupyter"

NOTEBOOK_STACK = frozenset(
    {
        "IPython",
        "ipywidgets",
        "anywidget",
        "traitlets",
        "ipykernel",
        "comm",
        "jupyter_client",
        "jupyter_core",
    }
)
#: What protocol/ may import from outside itself: pure modules (no files, sockets, processes, threads,
#: clocks or loggers). ``secrets`` only draws random bytes.
PURE = frozenset(
    {
        "__future__",
        "abc",
        "base64",
        "binascii",
        "collections",
        "collections.abc",
        "copy",
        "dataclasses",
        "datetime",
        "decimal",
        "enum",
        "functools",
        "hashlib",
        "hmac",
        "itertools",
        "json",
        "math",
        "numbers",
        "operator",
        "re",
        "secrets",
        "string",
        "types",
        "typing",
        "typing_extensions",
        "unicodedata",
        "uuid",
        "pydantic",
        "pydantic_core",
        "orjson",  # JSON text to values and back, in memory
    }
)
CODECS = frozenset(
    {f"{PACKAGE}.protocol.tasks_2025", f"{PACKAGE}.protocol.tasks_ext", f"{PACKAGE}.protocol.tasks_sep1686"}
)

# Violations allowed: none (the client and the jupyter runtime no longer reach into the codecs: the
# dialects route what their servers send). A pair may never join this list.
CODEC_IMPORTS_ALLOWED: frozenset[tuple[str, str]] = frozenset()

# Import cycles allowed for now (each a strongly connected set of modules); a cycle may shrink or go,
# never grow, and no new one may appear. Empty: the one there was (the package's __init__ importing the
# client, which imports the session, which takes __version__ from the package) went when __init__ began
# to import the client's names on first use.
CYCLES_ALLOWED: list[frozenset[str]] = []


@dataclass(frozen=True)
class Import:
    importer: str
    target: str
    line: int
    at_import_time: bool  # module level (not inside a function)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted((ROOT / PACKAGE).rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(node: ast.AST, in_function: bool = False) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child):
            for other in child.orelse:
                yield from _walk(other, in_function)
            continue
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, in_function
        yield from _walk(
            child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        )


def imports(known: dict[str, Path]) -> list[Import]:
    """Every import in the package, resolved to absolute module names (``from pkg import sub`` to
    ``pkg.sub`` when that is a module of the package)."""
    found = []
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node, in_function in _walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                for alias in node.names:
                    candidate = f"{base}.{alias.name}"
                    targets.append(candidate if candidate in known else base)
            found += [Import(name, target, node.lineno, not in_function) for target in targets]
    return found


def _top(module: str) -> str:
    return module.split(".")[0]


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _where(imp: Import) -> str:
    return f"{imp.importer} (line {imp.line}) imports {imp.target}"


KNOWN = modules()
IMPORTS = imports(KNOWN)


def test_the_sources_are_found() -> None:
    assert f"{PACKAGE}.client" in KNOWN and f"{PACKAGE}.protocol.jsonrpc" in KNOWN
    assert any(
        i.importer == f"{PACKAGE}.session.session" and i.target == f"{PACKAGE}.protocol.jsonrpc" for i in IMPORTS
    )


def test_only_the_jupyter_layer_imports_the_notebook_stack() -> None:
    wrong = [
        _where(i)
        for i in IMPORTS
        if _top(i.target) in NOTEBOOK_STACK and not _inside(i.importer, f"{PACKAGE}.jupyter")
    ]
    assert not wrong, "only mcp_tasks_jupyter/jupyter/ may import IPython & co.:\n" + "\n".join(wrong)


def test_the_protocol_layer_does_no_io() -> None:
    wrong = [
        _where(i)
        for i in IMPORTS
        if _inside(i.importer, f"{PACKAGE}.protocol")
        and not _inside(i.target, f"{PACKAGE}.protocol")
        and i.target not in PURE
        and _top(i.target) not in PURE
    ]
    assert not wrong, (
        "mcp_tasks_jupyter/protocol/ imports only pure modules (add one to PURE only if it "
        "does no I/O):\n" + "\n".join(wrong)
    )


def test_only_the_dialects_import_the_task_codecs() -> None:
    used = {
        (i.importer, i.target): i
        for i in IMPORTS
        if i.target in CODECS and not _inside(i.importer, f"{PACKAGE}.dialects") and i.importer not in CODECS
    }
    new = [_where(i) for pair, i in sorted(used.items()) if pair not in CODEC_IMPORTS_ALLOWED]
    assert not new, "a task codec is for its dialect only (ask the dialect instead):\n" + "\n".join(new)
    gone = sorted(CODEC_IMPORTS_ALLOWED - used.keys())
    assert not gone, f"these imports are gone: take them off CODEC_IMPORTS_ALLOWED: {gone}"


def cycles() -> list[frozenset[str]]:
    """The strongly connected sets of modules (of more than one, or importing itself), at import time."""
    graph: dict[str, set[str]] = {name: set() for name in KNOWN}
    for i in IMPORTS:
        if i.at_import_time and i.target in KNOWN:
            graph[i.importer].add(i.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            members = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                members.add(member)
                if member == node:
                    break
            if len(members) > 1 or node in graph[node]:
                found.append(frozenset(members))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph)))
    try:
        for name in sorted(graph):
            if name not in index:
                visit(name)
    finally:
        sys.setrecursionlimit(limit)
    return found


def test_no_new_import_cycles() -> None:
    new = [sorted(c) for c in cycles() if not any(c <= allowed for allowed in CYCLES_ALLOWED)]
    assert not new, "new import cycles (break them, e.g. by importing where the name is used):\n" + "\n".join(
        " <-> ".join(c) for c in new
    )


def test_the_allowed_cycles_still_exist() -> None:
    """An allow-list entry that no longer matches a cycle should be shrunk or removed."""
    now = cycles()
    stale = [sorted(allowed) for allowed in CYCLES_ALLOWED if allowed not in now]
    assert not stale, f"these cycles changed or are gone: update CYCLES_ALLOWED: {stale}"


# --- The map: docs/architecture.md's layer table, checked row by row in its order ---------------------

MAP = ROOT / "docs" / "architecture.md"
TABLE_START = "<!-- the layer table: tests/test_layers.py reads it -->"

#: Imports from a layer to one below it... the other way round: a lower layer's function that imports a
#: higher one when it is called. Each is a value drawing itself with the views (IPython calls these hooks),
#: never a dependency of the lower layer's logic. A pair may leave this list, never join it lightly.
LATE_IMPORTS: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Layer:
    keys: tuple[str, ...]  # `protocol/` (a folder) or `client.py` (a module of the package's root)
    inside: frozenset[str]  # the keys of the layers it imports
    outside: frozenset[str]  # top-level names beyond the standard library


def _cell_names(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def layer_table() -> list[Layer]:
    text = MAP.read_text(encoding="utf-8")
    assert TABLE_START in text, f"{MAP} lost its layer table marker {TABLE_START!r}"
    rows = []
    for line in text.split(TABLE_START, 1)[1].lstrip().splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        assert len(cells) == 4, f"a layer row has four cells (layer | job | package | outside): {line}"
        rows.append(
            Layer(tuple(_cell_names(cells[0])), frozenset(_cell_names(cells[2])), frozenset(_cell_names(cells[3])))
        )
    return rows


LAYERS = layer_table()


def layer_of(module: str) -> int:
    """The row of the layer a module of the package belongs to."""
    rel = module.removeprefix(PACKAGE).lstrip(".")
    path = rel.replace(".", "/")
    for row, layer in enumerate(LAYERS):
        for key in layer.keys:
            if key.endswith("/") and (path + "/").startswith(key):
                return row
            if key.endswith(".py") and (path or "__init__") == key.removesuffix(".py"):
                return row
            if key == "__init__.py" and not path:
                return row
    raise LookupError(f"{module} belongs to no row of the layer table in {MAP}")


def _key(row: int) -> str:
    return LAYERS[row].keys[0]


def test_every_module_belongs_to_one_layer() -> None:
    homeless = []
    for module in KNOWN:
        try:
            layer_of(module)
        except LookupError as exc:
            homeless.append(str(exc))
    assert not homeless, "\n".join(homeless)
    keys = [key for layer in LAYERS for key in layer.keys]
    assert len(keys) == len(set(keys)), f"a layer named twice: {keys}"


def test_layers_import_only_from_the_rows_above() -> None:
    wrong = []
    for i in IMPORTS:
        if not _inside(i.target, PACKAGE):
            continue
        here, there = layer_of(i.importer), layer_of(i.target)
        if there > here and (i.importer, i.target) not in LATE_IMPORTS:
            wrong.append(f"{_where(i)}: `{_key(here)}` is above `{_key(there)}` in the table")
    assert not wrong, "a layer imports one below it in docs/architecture.md's table:\n" + "\n".join(wrong)
    late = {(i.importer, i.target) for i in IMPORTS if not i.at_import_time}
    gone = sorted(set(LATE_IMPORTS) - late)
    assert not gone, f"these late imports are gone: take them off LATE_IMPORTS: {gone}"


def test_the_table_says_what_each_layer_imports() -> None:
    inside: dict[int, set[str]] = {row: set() for row in range(len(LAYERS))}
    outside: dict[int, set[str]] = {row: set() for row in range(len(LAYERS))}
    for i in IMPORTS:
        here = layer_of(i.importer)
        if _inside(i.target, PACKAGE):
            there = layer_of(i.target)
            if there != here and (i.importer, i.target) not in LATE_IMPORTS:
                inside[here].add(_key(there))
        elif _top(i.target) not in sys.stdlib_module_names and _top(i.target) != "__future__":
            outside[here].add(_top(i.target))
    wrong = []
    for row, layer in enumerate(LAYERS):
        for what, said, found in (
            ("the package's", layer.inside, inside[row]),
            ("outside", layer.outside, outside[row]),
        ):
            if said != found:
                stale, missing = sorted(said - found), sorted(found - said)
                wrong.append(
                    f"`{_key(row)}` ({what} imports): the table says {stale} it does not import; misses {missing}"
                )
    assert not wrong, "docs/architecture.md's layer table and the code disagree:\n" + "\n".join(wrong)


def test_the_map_names_every_module() -> None:
    text = MAP.read_text(encoding="utf-8")
    unnamed = []
    for _module, path in KNOWN.items():
        if path.name == "__init__.py" and not path.read_text(encoding="utf-8").strip():
            continue  # an empty folder marker
        rel = path.relative_to(ROOT / PACKAGE).as_posix()
        if f"`{rel}`" not in text and f"`{path.name}`" not in _folder_section(text, rel):
            unnamed.append(rel)
    assert not unnamed, f"docs/architecture.md does not name these modules: {unnamed}"


def _folder_section(text: str, rel: str) -> str:
    """The lines of the map's module list that describe the folder of ``rel`` (``### `folder/` ``)."""
    folder = rel.rpartition("/")[0] + "/"
    if folder == "/":
        return ""
    heading = f"### `{folder}`"
    if heading not in text:
        return ""
    return text.split(heading, 1)[1].split("\n### ", 1)[0]


def test_no_two_modules_share_a_file_name() -> None:
    """A file name says which module it is: "sign_in.py" names one place, not two (``__init__`` and
    ``__main__`` aside, which Python names)."""
    package = Path(__file__).resolve().parents[1] / "mcp_tasks_jupyter"
    seen: dict[str, list[str]] = {}
    for path in package.rglob("*.py"):
        if path.name not in ("__init__.py", "__main__.py"):
            seen.setdefault(path.name, []).append(str(path.relative_to(package)))
    assert {name: where for name, where in seen.items() if len(where) > 1} == {}


def test_docstrings_and_comments_name_files_that_exist() -> None:
    """A docstring or comment that sends the reader to ``some_file.py`` (or ``folder/file.py``, or a
    front-end ``.ts``) names a file of the repository as it is now, not one from before a move."""
    root = Path(__file__).resolve().parents[1]
    package = root / "mcp_tasks_jupyter"
    skip = (".venv", "node_modules", "peers")
    files = [
        p.relative_to(root).as_posix()
        for pattern in ("*.py", "*.ts")
        for p in root.rglob(pattern)
        if not any(part in skip for part in p.parts)
    ]
    names = {f.rsplit("/", 1)[-1] for f in files}
    stale = []
    for path in sorted(package.rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for ref in re.findall(r"([\w/]+\.(?:py|ts))\b", line):
                known = any(f == ref or f.endswith("/" + ref) for f in files) if "/" in ref else ref in names
                if not known:
                    stale.append(f"{path.relative_to(package)}:{number}: {ref}")
    assert stale == []
