"""What installing the package brings: its runtime dependencies are exactly what it imports, and no web
server (the demo's HTTP mode has the ``demo-http`` extra). Read from pyproject.toml and the sources."""

from __future__ import annotations

import re
import sys
import tomllib
from importlib import metadata

import pytest

from tests.test_layers import IMPORTS, PACKAGE, ROOT, _top

pytestmark = pytest.mark.unit

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
#: The only modules that may import the demo-http extra's packages: the demo's HTTP transport and its
#: OAuth routes (``--auth``).
HTTP_DEMO = {f"{PACKAGE}.demo.http_server", f"{PACKAGE}.demo.auth_http"}
#: The only module that imports the postgres extra's driver (a task index on PostgreSQL).
POSTGRES = {f"{PACKAGE}.index.postgres"}
#: The only module that imports the crate extra's library (an RO-Crate export).
CRATE = {f"{PACKAGE}.exports.crate"}
#: The only module that imports the Jupyter server (the server extension's routes, loaded only by a
#: Jupyter server, which brings them; the kernel side imports only ``serverext/relay.py``).
SERVER_EXTENSION = {f"{PACKAGE}.serverext.handlers"}
#: Listed though not imported by the package, each for a reason given in pyproject.toml.
LISTED_FOR_OTHERS = {"ipywidgets"}


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _distributions(module: str) -> set[str]:
    return {d.lower().replace("_", "-") for d in metadata.packages_distributions().get(module, [])}


def third_party(importers: set[str] | None = None) -> dict[str, set[str]]:
    """Top-level third-party modules the package imports -> the modules importing them."""
    found: dict[str, set[str]] = {}
    for i in IMPORTS:
        top = _top(i.target)
        if (
            top != PACKAGE
            and top not in sys.stdlib_module_names
            and (importers is None or i.importer in importers)
        ):
            found.setdefault(top, set()).add(i.importer)
    return found


def test_no_web_server_in_the_runtime_dependencies() -> None:
    runtime = {_name(r) for r in PROJECT["dependencies"]}
    assert not runtime & {"starlette", "uvicorn", "httptools"}, runtime
    # httptools: uvicorn's C parser, which it picks by itself when installed (nothing imports it by name)
    assert {_name(r) for r in PROJECT["optional-dependencies"]["demo-http"]} == {
        "starlette",
        "uvicorn",
        "httptools",
    }
    assert "mcp-tasks-jupyter[demo-http]" in PROJECT["optional-dependencies"]["test"]  # tests use the HTTP demo


def test_only_the_http_demo_imports_the_web_server() -> None:
    users = third_party()
    for module in ("starlette", "uvicorn"):
        assert users.get(module, set()) <= HTTP_DEMO, users.get(module)
    assert users["starlette"] == HTTP_DEMO and users["uvicorn"] == {f"{PACKAGE}.demo.http_server"}


def test_only_the_postgresql_backend_imports_its_driver_from_the_postgres_extra() -> None:
    assert third_party()["psycopg"] == POSTGRES
    assert {_name(r) for r in PROJECT["optional-dependencies"]["postgres"]} == {"psycopg"}
    assert "mcp-tasks-jupyter[postgres]" in PROJECT["optional-dependencies"]["test"]  # its tests run


def test_only_the_crate_export_imports_rocrate_from_the_crate_extra() -> None:
    assert third_party()["rocrate"] == CRATE
    assert {_name(r) for r in PROJECT["optional-dependencies"]["crate"]} == {"rocrate"}
    assert "mcp-tasks-jupyter[crate]" in PROJECT["optional-dependencies"]["test"]  # its tests run


def test_only_the_server_extension_imports_the_jupyter_server() -> None:
    users = third_party()
    assert users["jupyter_server"] == SERVER_EXTENSION and users["tornado"] == SERVER_EXTENSION


def test_every_import_is_a_runtime_dependency_and_every_dependency_is_imported() -> None:
    runtime = {_name(r) for r in PROJECT["dependencies"]}
    imported = {
        module: _distributions(module)
        for module in third_party()
        if module not in ("starlette", "uvicorn", "psycopg", "rocrate", "jupyter_server", "tornado")
    }
    unlisted = {module: dists for module, dists in imported.items() if not dists & runtime}
    assert not unlisted, f"imported but not in [project.dependencies]: {unlisted}"
    provided = set().union(*imported.values())
    unused = runtime - provided - LISTED_FOR_OTHERS
    assert not unused, f"in [project.dependencies] but never imported: {unused}"


def test_the_package_says_it_is_typed() -> None:
    assert (ROOT / PACKAGE / "py.typed").is_file()
