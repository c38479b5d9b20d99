"""The view defects of issue 20 (item 5), in Debian's chromium against a real JupyterLab, kernel and
demo server: one colour per status in every view (a cancelled task reads the same in its widget, the
board and the side panel), the side panel names tasks by tool and arguments, the board at 900 px with
the side panel open keeps each row's task and arguments, a 50-task batch's notification counts all
50, the status bar of a notebook with no tasks says the tasks it counts are other notebooks', and
one Tab inserts the only completion of an ``%mcp_task`` argument (Python code keeps its menu).

The steps build on each other (one page, one kernel), so they are one test. Each step saves a
screenshot to ``build/screenshots/defects-*.png``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect, sync_playwright

from tests.browser.lab import CHROMIUM, CHROMIUM_ARGS, Lab, running_lab, write_notebook
from tests.browser.test_lab_extension import SHOTS, STEP, run_menu
from tests.browser.test_lab_many_tasks import add_cell_and_run, type_in_new_cell

pytestmark = pytest.mark.timeout(600)
expect.set_options(timeout=STEP)

CELLS = [
    "%load_ext mcp_tasks_jupyter",
    "%mcp_connect demo {sys.executable} -m mcp_tasks_jupyter.demo",
    # 2: two tool errors told apart by their arguments only
    'one = %mcp_task --wait demo:failing_job seconds=0.1 message="first"\n'
    'two = %mcp_task --wait demo:failing_job seconds=0.1 message="second"',
    # 3: a cancelled task
    "stop = %mcp_task demo:slow_compute seconds=60 steps=60",
    "await stop.cancel()",
    # 5: a 50-task fan-out
    "%mcp_map --limit 25 demo:slow_compute --over [{'seconds': 0.2 + i / 1000} for i in range(50)]",
    # 7: a task that waits for input (counted by the other notebook's status bar)
    "asks = %mcp_task demo:research topic=tides ambiguous=true stage_seconds=0.1",
    "%mcp_tasks",
]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    root = tmp_path_factory.mktemp("defects-root")
    write_notebook(root / "defects.ipynb", CELLS)
    write_notebook(root / "empty.ipynb", ["1 + 1"])
    home = tmp_path_factory.mktemp("defects-home")
    # every notification shows, the cell in view or not (the batch's cell is in view here)
    settings = home / "settings" / "mcp-tasks-jupyter" / "notifications.jupyterlab-settings"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"onlyWhenOutOfView": False}))
    # the kernel's completions count however slowly a loaded machine answers (1 s by default; the
    # first Python completion starts jedi)
    completer = home / "settings" / "@jupyterlab" / "completer-extension" / "manager.jupyterlab-settings"
    completer.parent.mkdir(parents=True, exist_ok=True)
    completer.write_text(json.dumps({"providerTimeout": 20000}))
    with running_lab(root, home) as server:
        yield server


@pytest.fixture(scope="module")
def page(lab: Lab) -> Iterator[Page]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    for old in SHOTS.glob("defects-*.png"):
        old.unlink()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            page.set_default_timeout(STEP)
            page.on("console", lambda m: print(f"[console.{m.type}] {m.text}"[:500]))
            page.goto(lab.page_url("defects.ipynb"))
            yield page
        finally:
            browser.close()


def shot(page: Page, name: str) -> None:
    page.screenshot(path=str(SHOTS / f"defects-{name}.png"))


def colour(page: Page, selector: str, prop: str) -> str:
    return str(page.locator(selector).first.evaluate(f"n => getComputedStyle(n).{prop}"))


def palette(page: Page, status: str) -> str:
    """The palette's colour of ``status`` as the browser computes it (rgb(...))."""
    return str(
        page.evaluate(
            """s => { const d = document.createElement('div');
                      d.style.color = `var(--mtj-s-${s})`; document.body.append(d);
                      const c = getComputedStyle(d).color; d.remove(); return c; }""",
            status,
        )
    )


def test_views_agree(page: Page) -> None:
    expect(page.locator(".jp-StatusBar-TextItem", has_text="Python 3 (ipykernel) | Idle")).to_be_visible()
    run_menu(page, "Run", "Run All Cells")
    notebook = page.locator(".jp-NotebookPanel:visible .jp-Notebook")
    expect(notebook.locator(".mtj-board")).to_be_visible()

    # a 50-task batch: one notification counting all 50
    toast = page.locator(".Toastify__toast", has_text="50 MCP tasks finished on demo (slow_compute)")
    expect(toast).to_contain_text("50 completed")
    assert not page.locator(".Toastify__toast", has_text=re.compile(r"^\d+ MCP tasks completed")).count()
    shot(page, "1-batch-notification")

    # the side panel: each failing_job by its arguments (found by the status filter: the list holds only
    # the rows in view, and the 50 newer tasks fill it)
    page.evaluate("() => window.jupyterapp.shell.activateById('mcp-tasks-jupyter:sidebar')")
    by_status = page.locator(".mtj-sidebar .mtj-status-filter")
    by_status.select_option("failed")
    names = page.locator(".mtj-sidebar .mtj-task-tool", has_text="failing_job")
    expect(names).to_have_count(2)
    assert sorted(names.all_text_contents()) == [
        "failing_job seconds=0.1 message=first",
        "failing_job seconds=0.1 message=second",
    ]

    # one colour for cancelled: the task widget's badge, the board's badge and the side panel row
    grey = palette(page, "cancelled")
    assert grey == "rgb(110, 119, 129)"
    widget_badge = ".jp-Notebook .mtj-task .mtj-badge.mtj-s-cancelled"
    expect(page.locator(widget_badge).first).to_be_visible()
    assert colour(page, widget_badge, "backgroundColor") == grey
    assert colour(page, ".mtj-board .mtj-badge.mtj-s-cancelled", "backgroundColor") == grey
    by_status.select_option("cancelled")
    row = ".mtj-sidebar .mtj-task-row[data-status='cancelled']"
    expect(page.locator(row).first).to_be_visible()
    assert colour(page, f"{row} .mtj-task-status", "color") == grey
    assert colour(page, row, "borderLeftColor") == grey
    by_status.select_option("all")
    done = ".mtj-sidebar .mtj-task-row[data-status='completed'] .mtj-task-status"
    expect(page.locator(done).first).to_be_visible()
    assert colour(page, done, "color") == palette(page, "completed")
    shot(page, "2-sidebar-and-colours")

    # the board at 900 px with the side panel open: every row keeps its task and its arguments
    page.set_viewport_size({"width": 900, "height": 1000})
    board = notebook.locator(".mtj-board")
    board.scroll_into_view_if_needed()
    rows = board.locator(".mtj-board-table tbody tr")
    expect(rows.first).to_be_visible()
    for i in range(min(rows.count(), 10)):
        args = rows.nth(i).locator(".mtj-board-args")
        box = args.bounding_box()
        assert box is not None and box["width"] > 30, f"row {i}: the arguments are hidden"
        assert rows.nth(i).locator(".mtj-tool").bounding_box()["width"] > 30  # type: ignore[index]
    shot(page, "3-board-900px-sidebar")

    # the status bar of another notebook, with no tasks: the waiting task is the other notebook's
    page.set_viewport_size({"width": 1400, "height": 1000})
    expect(page.locator(".mtj-statusbar")).to_have_text(re.compile(r"^MCP: \d+ running · 1 waiting"))
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:open', {path: 'empty.ipynb'})")
    expect(page.locator(".jp-StatusBar-TextItem", has_text="Python 3 (ipykernel) | Idle")).to_be_visible()
    expect(page.locator(".mtj-statusbar")).to_have_text("MCP (other notebooks): 0 running · 1 waiting")
    shot(page, "4-statusbar-other-notebooks")


def test_single_completion_inserts(page: Page) -> None:
    """``%mcp_task demo:slow_compute sec`` + Tab writes ``seconds=`` (no menu); a Python name with
    one candidate still opens JupyterLab's menu (only our magics change)."""
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:open', {path: 'defects.ipynb'})")
    expect(page.locator(".jp-StatusBar-TextItem", has_text="Python 3 (ipykernel) | Idle")).to_be_visible()
    editor = page.locator(".jp-NotebookPanel:visible .jp-Cell").last.locator(".cm-content")
    menu = page.locator(".jp-Completer:visible")

    type_in_new_cell(page, "%mcp_task demo:slow_compute sec")
    page.keyboard.press("Tab")
    expect(editor).to_have_text("%mcp_task demo:slow_compute seconds=")
    expect(menu).to_have_count(0)
    shot(page, "5-single-completion-inserted")
    # several candidates: the menu, as before
    page.keyboard.insert_text("1 ")
    page.keyboard.press("Tab")
    expect(menu.locator(".jp-Completer-item", has_text="steps=")).to_be_visible()
    expect(menu.locator(".jp-Completer-item", has_text="label=")).to_be_visible()
    page.keyboard.press("Escape")
    expect(editor).to_have_text("%mcp_task demo:slow_compute seconds=1 ")
    page.keyboard.insert_text("st")
    page.keyboard.press("Tab")
    expect(editor).to_have_text("%mcp_task demo:slow_compute seconds=1 steps=")
    expect(menu).to_have_count(0)

    # Python code with one candidate: JupyterLab's menu, unchanged
    page.keyboard.press("Escape")
    add_cell_and_run(page, "mtj_only_candidate_here = 1")
    type_in_new_cell(page, "mtj_only_cand")
    page.keyboard.press("Tab")
    expect(menu.locator(".jp-Completer-item", has_text="mtj_only_candidate_here")).to_be_visible()
    expect(menu.locator(".jp-Completer-item")).to_have_count(1)
    expect(editor).to_have_text("mtj_only_cand")
    shot(page, "6-python-completion-menu")
    page.keyboard.press("Escape")
