"""The widgets' front ends are the bundles npm builds from labextension/src/widgets (TypeScript) into
``mcp_tasks_jupyter/jupyter/widgets/static``; a checkout never built still imports, and the widget
says how to build it."""

from __future__ import annotations

import re
import shutil
import subprocess

import anywidget
import pytest

from mcp_tasks_jupyter.jupyter.widgets import BoardWidget, TaskWidget, front_end
from mcp_tasks_jupyter.jupyter.widgets.batch_widget import BatchWidget
from mcp_tasks_jupyter.jupyter.widgets.question_form import QuestionWidget


@pytest.mark.parametrize(
    "widget, name",
    [(TaskWidget, "task"), (BoardWidget, "board"), (QuestionWidget, "question"), (BatchWidget, "batch")],
)
def test_each_widget_loads_its_built_bundle(widget, name):
    assert str(widget._esm) == (front_end.STATIC / f"{name}.js").read_text()
    assert str(widget._css) == (front_end.STATIC / f"{name}.css").read_text()
    assert re.search(r"export\s*\{[^}]*\bas default\b", str(widget._esm))  # an ESM module, as anywidget loads


@pytest.mark.loopback
@pytest.mark.timeout(60)
def test_a_missing_bundle_is_a_message_not_an_import_error(tmp_path, monkeypatch):
    monkeypatch.setattr(front_end, "STATIC", tmp_path)
    code = front_end.esm("task")
    assert isinstance(code, str) and "npm run build:prod" in code
    assert front_end.css("task") == ""

    class Unbuilt(anywidget.AnyWidget):
        _esm = code
        _css = front_end.css("task")

    assert Unbuilt._esm == code  # taken as code, not as the name of a file
    if shutil.which("node"):
        module = tmp_path / "unbuilt.mjs"
        module.write_text(code)
        subprocess.run(["node", "--check", str(module)], check=True, timeout=30)
