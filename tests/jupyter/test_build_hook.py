"""labextension/build_hook.py decides when ``pip install``/``pip wheel`` runs the npm build: whenever an
output (the JupyterLab extension, a widget bundle) is missing or older than a source, never from an
unpacked sdist that carries its outputs."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from tests.support.paths import REPO_ROOT

_spec = importlib.util.spec_from_file_location("build_hook", REPO_ROOT / "labextension" / "build_hook.py")
assert _spec is not None and _spec.loader is not None
build_hook = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_hook)


def tree(root: Path) -> None:
    """Sources, then every output one second later."""
    for name in ("src/widgets/task.ts", "package.json", "schema/notifications.json"):
        path = root / "labextension" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
        os.utime(path, (1000, 1000))
    for name in build_hook.OUTPUTS:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
        os.utime(path, (1001, 1001))


def test_current_outputs_need_no_build(tmp_path):
    tree(tmp_path)
    assert build_hook.why_build(tmp_path) is None


def test_a_missing_widget_bundle_needs_a_build(tmp_path):
    tree(tmp_path)
    (tmp_path / "mcp_tasks_jupyter/jupyter/widgets/static/board.css").unlink()
    assert build_hook.why_build(tmp_path) == "missing: mcp_tasks_jupyter/jupyter/widgets/static/board.css"


def test_a_source_newer_than_one_output_needs_a_build(tmp_path):
    tree(tmp_path)
    os.utime(tmp_path / "mcp_tasks_jupyter/jupyter/widgets/static/task.js", (999, 999))  # one stale bundle
    assert build_hook.why_build(tmp_path) == "labextension/src/widgets/task.ts is newer than the outputs"


def test_an_unpacked_sdist_uses_its_outputs_but_not_missing_ones(tmp_path):
    tree(tmp_path)
    (tmp_path / "PKG-INFO").write_text("Metadata-Version: 2.4\n")
    os.utime(tmp_path / "labextension/src/widgets/task.ts", (2000, 2000))
    assert build_hook.why_build(tmp_path) is None
    (tmp_path / "mcp_tasks_jupyter/labextension/static/style.js").unlink()
    assert build_hook.why_build(tmp_path).startswith("missing:")


def test_the_outputs_are_the_ensured_targets_of_pyproject():
    import tomllib

    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    hook = config["tool"]["hatch"]["build"]["hooks"]["jupyter-builder"]
    assert hook["build-function"] == "labextension.build_hook.build"
    assert sorted(hook["ensured-targets"]) == sorted(build_hook.OUTPUTS)
