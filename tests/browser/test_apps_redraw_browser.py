"""A saved MCP Apps view drawn again with one click (issue 32 item 6), in chromium against a real JupyterLab:
the notebook is saved after its app task, its kernel shut down and the page reloaded; the saved output shows
the summary and note with a "Draw the view again" button (``labextension/src/appredraw.ts``), which says
what to do without a kernel, and, with a new kernel that has no connection to the server, says to connect
first; once connected, the click draws the view from the task's record (the recorded arguments and result)
under the note, in its sandboxed frame. The record then holds what the drawn-again view called.

And Notebook 7 in the dark theme: the views drawn there, light and dark (``build/screenshots/apps-nb7-*.png``,
copied by hand to ``docs/images/``).
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from mcp_tasks_jupyter.index.task_index import TaskIndex
from tests.browser.lab import notebook_page, running_lab, write_notebook
from tests.browser.test_apps_browser import CHANGE_THEME, cell, run_cell, view
from tests.browser.test_lab_extension import SHOTS, STEP, run_menu
from tests.support.peers import basic_apps_stdio_argv

pytestmark = pytest.mark.timeout(600)
expect.set_options(timeout=STEP)

CELLS = [
    "%load_ext mcp_tasks_jupyter",
    "%mcp_connect demo {sys.executable} -m mcp_tasks_jupyter.demo --poll-interval 200",
    "chart = %mcp_task demo:live_chart label=saved points=12 interval=0.05",
]
START_KERNEL = "() => window.jupyterapp.shell.currentWidget.sessionContext.changeKernel({name: 'python3'})"


def test_a_saved_view_is_drawn_again_with_one_click(tmp_path_factory: pytest.TempPathFactory) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    root, home = tmp_path_factory.mktemp("redraw-root"), tmp_path_factory.mktemp("redraw-home")
    with running_lab(root, home) as lab:
        write_notebook(root / "redraw.ipynb", CELLS)
        with notebook_page(lab, "redraw.ipynb", STEP, size=(1300, 1000)) as page:
            expect(page.locator(".jp-StatusBar-TextItem", has_text="Python 3 (ipykernel) | Idle")).to_be_visible()
            for n in range(3):
                run_cell(page, n)
            expect(cell(page, 2).locator(".mtj-task .mtj-badge")).to_have_text("completed")
            expect(view(page, 2).locator("#status")).to_have_text("done: 12 points")
            page.keyboard.press("Control+s")
            expect(page.locator(".jp-mod-dirty")).to_have_count(0)

            # reopened: the new kernel lacks the view's widget, so the summary, the note and the button show;
            # no view runs by itself
            run_menu(page, "Kernel", "Shut Down Kernel")
            expect(page.locator(".jp-StatusBar-TextItem", has_text="No Kernel")).to_be_visible()
            page.reload()
            saved = cell(page, 2)
            expect(saved.locator(".mtj-summary .mtj-badge")).to_have_text("completed")
            expect(page.locator("iframe.mtj-app-iframe")).to_have_count(0)
            again = saved.get_by_role("button", name="Draw the view again")
            expect(again).to_be_visible()
            said = saved.locator(".mtj-app-redraw-said")
            saved.scroll_into_view_if_needed()
            saved.screenshot(path=str(SHOTS / "apps-08-saved-with-button.png"))

            # a kernel, but no connection to the server: it says to connect first
            expect(page.locator(".jp-StatusBar-TextItem", has_text="Python 3 (ipykernel) | Idle")).to_be_visible()
            again.click()
            expect(said).to_contain_text("this kernel has no connection to the server 'demo'")
            expect(said).to_contain_text("connect to it first")
            expect(page.locator("iframe.mtj-app-iframe")).to_have_count(0)

            # no kernel at all: it says to start one
            run_menu(page, "Kernel", "Shut Down Kernel")
            expect(page.locator(".jp-StatusBar-TextItem", has_text="No Kernel")).to_be_visible()
            again.click()
            expect(said).to_contain_text("No kernel: start one")
            expect(page.locator("iframe.mtj-app-iframe")).to_have_count(0)
            page.evaluate(START_KERNEL)
            expect(page.locator(".jp-StatusBar-TextItem", has_text="Python 3 (ipykernel) | Idle")).to_be_visible()

            # connected: one click draws the view from the record, its arguments and result
            run_cell(page, 0)
            run_cell(page, 1)
            expect(cell(page, 1).locator(".jp-InputArea-prompt")).to_have_text(re.compile(r"\[\d+\]"))
            page.wait_for_timeout(500)
            clicked = time.time()
            again.click()
            drawn = saved.locator(".mtj-app-redrawn iframe.mtj-app-iframe")
            expect(drawn).to_have_count(1)
            assert drawn.get_attribute("sandbox") == "allow-scripts"
            frame = saved.frame_locator(".mtj-app-redrawn iframe.mtj-app-iframe")
            expect(frame.locator("#status")).to_have_text("done: 12 points")
            expect(saved.locator(".mtj-app-redraw")).to_have_attribute("data-mtj-redraw", "drawn")
            saved.scroll_into_view_if_needed()
            saved.screenshot(path=str(SHOTS / "apps-07-drawn-again.png"))
            page.wait_for_timeout(1000)  # the record's write of the drawn-again view's calls (batched)
            # nothing was added to the notebook's cells
            assert page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell").count() == len(CELLS)

    records = TaskIndex(home / "tasks.sqlite3").records()
    (charted,) = [r for r in records if r.tool == "live_chart"]
    assert charted.app_view is not None and charted.app_view.uri == "ui://demo/live-chart.html"
    # the drawn-again view called back like any other (its poll of chart_points), kept in the same record
    later = [(c["method"], c.get("name"), c["outcome"]) for c in charted.app_view.calls if c["at"] >= clicked]
    assert ("tools/call", "chart_points", "answered") in later, charted.app_view.calls


def test_app_views_in_notebook_7_light_and_dark(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Notebook 7: the reference server's get-time view and the demo's live chart, light, then dark (the
    theme reaches the views: host-context-changed)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    root = tmp_path_factory.mktemp("apps-nb7-dark-root")
    basic = " ".join(basic_apps_stdio_argv())
    cells = [
        "%load_ext mcp_tasks_jupyter",
        f"%mcp_connect basic {basic}\n"
        f"%mcp_connect demo {sys.executable} -m mcp_tasks_jupyter.demo --poll-interval 200",
        "t = %mcp_task basic:get-time",
        "chart = %mcp_task demo:live_chart label=nb7 points=60 interval=0.05",
    ]
    with running_lab(root, tmp_path_factory.mktemp("apps-nb7-dark-home"), app="notebook") as server:
        write_notebook(root / "apps7dark.ipynb", cells)
        with notebook_page(server, "apps7dark.ipynb", STEP, size=(1100, 1000)) as page:
            expect(cell(page, 3)).to_be_visible()
            page.wait_for_timeout(1000)  # the kernel starts behind the page; a cell run before waits for it
            for n in range(4):
                run_cell(page, n)
            basic_view, chart = view(page, 2), view(page, 3)
            expect(basic_view.locator("#server-time")).to_have_text(re.compile(r"^\d{4}-\d\d-\d\dT"))
            expect(chart.locator("#status")).to_have_text("done: 60 points")
            page.evaluate("() => document.activeElement && document.activeElement.blur()")
            for n, name in ((2, "get-time"), (3, "live-chart")):
                cell(page, n).scroll_into_view_if_needed()
                cell(page, n).screenshot(path=str(SHOTS / f"apps-nb7-{name}-light.png"))
            page.evaluate(CHANGE_THEME, "JupyterLab Dark")
            expect(page.locator("body[data-jp-theme-light='false']")).to_have_count(1)
            expect(basic_view.locator("html[data-theme='dark']")).to_have_count(1)
            expect(chart.locator("body.dark")).to_have_count(1)
            page.wait_for_timeout(300)
            for n, name in ((2, "get-time"), (3, "live-chart")):
                cell(page, n).scroll_into_view_if_needed()
                cell(page, n).screenshot(path=str(SHOTS / f"apps-nb7-{name}-dark.png"))
            page.evaluate(CHANGE_THEME, "JupyterLab Light")
    assert Path(SHOTS / "apps-nb7-live-chart-dark.png").stat().st_size > 0
