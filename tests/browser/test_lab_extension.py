"""The JupyterLab extension in a real browser (Debian's chromium through Playwright) against a real
JupyterLab, kernel and demo server: the quick-start notebook runs, its task widget updates, the
sidebar lists the tasks, Cancel in the sidebar cancels a task on the server, the status bar counts
running tasks, and a task that ends while its cell is out of sight raises a notification whose
action jumps back to the cell.

The steps build on each other (one page, one kernel), so they are one test. Each step saves a
screenshot to ``build/screenshots/`` (kept after the run, for people to look at).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import nbformat
import pytest
from playwright.sync_api import Page, expect

from tests.browser.lab import Lab, notebook_page, running_lab
from tests.support.paths import REPO_ROOT

QUICKSTART = REPO_ROOT / "notebooks" / "01-quickstart.ipynb"
SHOTS = REPO_ROOT / "build" / "screenshots"
STEP = 60_000  # ms: a bound on each wait in the page (a loaded 2-core machine), never a speed claim

pytestmark = pytest.mark.timeout(600)
expect.set_options(timeout=STEP)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    root = tmp_path_factory.mktemp("lab-root")
    notebook = nbformat.read(QUICKSTART, as_version=4)
    for cell in notebook.cells:  # start from a notebook never run, as a new user would
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nbformat.write(notebook, root / "quickstart.ipynb")
    with running_lab(root, tmp_path_factory.mktemp("lab-home")) as server:
        yield server


@pytest.fixture(scope="module")
def page(lab: Lab) -> Iterator[Page]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    for old in [*SHOTS.glob("[0-9][0-9]-*.png"), *SHOTS.glob("failed-*.png")]:  # this module's only
        old.unlink()
    with notebook_page(lab, "quickstart.ipynb", STEP) as page:
        yield page


def shot(page: Page, name: str) -> None:
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def run_menu(page: Page, menu: str, item: str) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{menu}$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{item}$")).click()


def add_cell_and_run(page: Page, code: str) -> None:
    """A new code cell at the end of the notebook with ``code``, run (Shift+Enter)."""
    notebook = page.locator(".jp-NotebookPanel:visible .jp-Notebook")
    notebook.locator(".jp-Cell").last.click()
    page.keyboard.press("Escape")
    page.keyboard.press("b")
    editor = notebook.locator(".jp-Cell").last.locator(".cm-content")
    editor.click()
    page.keyboard.insert_text(code)
    page.keyboard.press("Shift+Enter")


def sidebar_row(page: Page, tool: str) -> Locator:  # noqa: F821 - playwright's type
    return page.locator(".mtj-sidebar .mtj-task-row").filter(
        has=page.locator(".mtj-task-tool", has_text=re.compile(f"^{re.escape(tool)}( |$)"))
    )


def test_quickstart_widget_sidebar_cancel_and_notification(page: Page) -> None:
    # 1. the notebook opens with a kernel
    expect(page.locator(".jp-StatusBar-TextItem", has_text="Python 3 (ipykernel) | Idle")).to_be_visible()
    shot(page, "01-notebook-opened")

    # 2. run the quick start: the research task's widget goes from working to completed
    run_menu(page, "Run", "Run All Cells")
    widget = page.locator(".jp-Notebook .mtj-task").first
    badge = widget.locator(".mtj-badge")
    expect(badge).to_have_text(re.compile("working|submitted"))
    expect(widget.locator(".mtj-tool")).to_contain_text("research")
    shot(page, "02-task-widget-working")
    expect(badge).to_have_text(re.compile("completed"))
    expect(page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")).to_be_attached()
    expect(page.locator(".jp-OutputArea-output", has_text="(True, 'tides', True)")).to_be_visible()
    shot(page, "03-task-widget-completed")

    # 3. the sidebar lists this kernel's tasks
    page.locator(".lm-TabBar-tab[data-id='mcp-tasks-jupyter:sidebar']").click()
    sidebar = page.locator(".mtj-sidebar")
    expect(sidebar).to_be_visible()
    research = sidebar_row(page, "research")
    expect(research.locator(".mtj-task-status")).to_have_text("completed")
    expect(research.locator(".mtj-task-server")).to_have_text("demo")
    expect(sidebar_row(page, "make_chart").locator(".mtj-task-status")).to_have_text("completed")
    shot(page, "04-sidebar-lists-the-tasks")

    # 4. Cancel in the sidebar cancels a long task on the server; the status bar counted it
    add_cell_and_run(page, "long = %mcp_task demo:slow_compute seconds=120")
    long_row = sidebar_row(page, "slow_compute")
    expect(long_row.locator(".mtj-task-status")).to_have_text("working")
    expect(page.locator(".mtj-statusbar")).to_contain_text("1 running")
    shot(page, "05-sidebar-long-task-running")
    # a running row's Cancel is a small button on its status line, not JupyterLab's 32 px one: a side panel
    # of running tasks shows as many as one of ended tasks, nearly (issue 30: entries were ~85 px tall)
    cancel_box = long_row.locator(".mtj-task-cancel").bounding_box()
    assert cancel_box is not None and cancel_box["height"] <= 22, cancel_box
    long_row.locator(".mtj-task-cancel").click()
    expect(long_row.locator(".mtj-task-status")).to_have_text("cancelled")
    add_cell_and_run(
        page,
        "from mcp_tasks_jupyter.jupyter.runtime import get_runtime\n"
        "state = await get_runtime().client('demo').dialect.get(long.task_id)\n"
        "print('on the server:', state.status, '/ here:', long.status)",
    )
    expect(
        page.locator(".jp-OutputArea-output", has_text="on the server: cancelled / here: cancelled")
    ).to_be_visible()
    expect(page.locator(".mtj-statusbar")).not_to_contain_text("1 running")
    shot(page, "06-cancelled-from-the-sidebar")

    # 5. a task that completes while its notebook is out of sight raises a notification
    # (its label is markup, which a server may send: shown as text, never as HTML)
    # (long enough that hiding the notebook on a loaded machine comes before it ends: a task that ends
    # while its cell is in sight raises no notification, which is right, and would fail this step)
    add_cell_and_run(page, 'later = %mcp_task demo:slow_compute seconds=12 label="<b>later</b>"')
    later_row = sidebar_row(page, "slow_compute").first
    expect(later_row.locator(".mtj-task-status")).to_have_text("working")
    page.get_by_role("main").get_by_role("button", name="New Launcher").click()  # hides the notebook
    expect(page.locator(".jp-Launcher:visible")).to_be_visible()
    expect(later_row.locator(".mtj-task-status")).to_have_text("working", timeout=1000)
    toast = page.locator(".Toastify__toast", has_text="MCP task").filter(has_text="slow_compute")
    expect(toast).to_contain_text("completed")
    page.wait_for_timeout(1000)  # for the picture only: the toast slides in
    shot(page, "07-completion-notification")
    expect(later_row.locator(".mtj-task-message")).to_contain_text("<b>later</b>: done")
    assert later_row.locator("b").count() == 0 and toast.locator("b").count() == 0
    toast.get_by_role("button", name="Show").click()
    expect(page.locator(".jp-NotebookPanel:visible")).to_be_visible()
    shot(page, "08-back-at-the-cell")
