"""A notebook run in JupyterLab, saved and reopened (issue 20, items 2, 3 and 5 of the views), in
Debian's chromium against a real JupyterLab, kernel and demo server: a ``%mcp_map`` cell leaves one
box, a handle shown again while it runs is its live view, the board shown before the tasks and the
reopened notebook show every task finished, and reopening (with the kernel and without it) logs no
"widget model not found" error in the browser's console: our views whose model the kernel lacks
are drawn as their saved summaries without asking ipywidgets.

The steps build on each other (one page, one kernel), so they are one test, run in the light and the
dark theme. Each step saves a screenshot to ``build/screenshots/saved-THEME-*.png``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import nbformat
import pytest
from playwright.sync_api import ConsoleMessage, Page, expect, sync_playwright

from tests.browser.lab import CHROMIUM, CHROMIUM_ARGS, Lab, running_lab, write_notebook
from tests.browser.test_lab_extension import SHOTS, STEP, run_menu
from tests.jupyter.kernel_harness import DEMO_COMMAND

pytestmark = pytest.mark.timeout(600)
expect.set_options(timeout=STEP)

CELLS = [
    "%load_ext mcp_tasks_jupyter\nimport mcp_tasks_jupyter as mtj\n"
    "from mcp_tasks_jupyter.jupyter import get_runtime",
    f"%mcp_connect demo {DEMO_COMMAND}",
    "%mcp_tasks",  # 2: the board, before the tasks
    "r = %mcp_task demo:slow_compute seconds=3 steps=6 label=shown-again",
    "r",  # 4: the handle shown again while it runs
    "%mcp_map --limit 25 demo:slow_compute --over [{'seconds': 0.3, 'label': f'm{i}'} for i in range(50)]",
    "_ = await mtj.gather(*get_runtime().handles, timeout=60)\nprint('all', len(get_runtime().handles), 'ended')",
]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    root = tmp_path_factory.mktemp("saved-root")
    for theme in ("light", "dark"):
        write_notebook(root / f"saved-{theme}.ipynb", CELLS)
    with running_lab(root, tmp_path_factory.mktemp("saved-home")) as server:
        yield server


@pytest.fixture(scope="module")
def browser_page() -> Iterator[Page]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    for old in SHOTS.glob("saved-*.png"):
        old.unlink()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            page.set_default_timeout(STEP)
            yield page
        finally:
            browser.close()


def widget_errors(messages: list[ConsoleMessage]) -> list[str]:
    return [m.text for m in messages if m.type == "error" and re.search(r"widget|model", m.text, re.I)]


def scroll_through(page: Page) -> None:
    """Scroll the notebook from top to bottom (JupyterLab draws the cells it shows only)."""
    page.locator(".jp-NotebookPanel:visible .jp-Cell").first.click()
    page.keyboard.press("Escape")
    for _ in range(len(CELLS)):
        page.keyboard.press("j")
    page.wait_for_timeout(500)  # the cells' outputs draw (nothing timed is asserted)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_saved_and_reopened(lab: Lab, browser_page: Page, theme: str) -> None:
    page = browser_page
    name = f"saved-{theme}.ipynb"
    page.goto(lab.page_url(name))
    expect(page.locator(".jp-StatusBar-TextItem", has_text="Python 3 (ipykernel) | Idle")).to_be_visible()
    page.evaluate(
        "t => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})",
        "JupyterLab Dark" if theme == "dark" else "JupyterLab Light",
    )
    run_menu(page, "Run", "Run All Cells")
    notebook = page.locator(".jp-NotebookPanel:visible .jp-Notebook")
    cells = notebook.locator(".jp-CodeCell")
    # the handle shown again follows the task live
    again = cells.nth(4).locator(".mtj-task")
    expect(again.locator(".mtj-badge")).to_have_text(re.compile("working"))
    page.screenshot(path=str(SHOTS / f"saved-{theme}-1-running.png"))
    expect(notebook.locator(".jp-OutputArea-output", has_text="all 51 ended")).to_be_visible()
    expect(again.locator(".mtj-badge")).to_have_text("completed")
    # %mcp_map: one box
    cells.nth(5).scroll_into_view_if_needed()
    assert cells.nth(5).locator(".jp-OutputArea-output").count() == 1, "a %mcp_map cell leaves one output"
    expect(cells.nth(5).locator(".mtj-batch")).to_contain_text("50")
    page.screenshot(path=str(SHOTS / f"saved-{theme}-2-ended.png"))

    # save, then reopen the page: the kernel and its widgets go on, the notebook comes back from disk
    page.keyboard.press("Control+s")
    expect(page.locator(".jp-mod-dirty")).to_have_count(0)
    messages: list[ConsoleMessage] = []

    def listen(message: ConsoleMessage) -> None:
        messages.append(message)

    page.on("console", listen)
    page.goto(lab.page_url(name))
    expect(page.locator(".jp-StatusBar-TextItem", has_text=re.compile("Python 3 \\(ipykernel\\)"))).to_be_visible()
    scroll_through(page)
    board = page.locator(".jp-NotebookPanel:visible .jp-CodeCell").nth(2)
    board.scroll_into_view_if_needed()
    expect(board).to_contain_text("completed")
    expect(board).not_to_contain_text("working")
    page.screenshot(path=str(SHOTS / f"saved-{theme}-3-reopened.png"))

    # the kernel gone (a notebook opened another day): the saved outputs, and still no widget errors
    run_menu(page, "Kernel", "Shut Down Kernel")
    page.goto(lab.page_url(name))
    expect(page.locator(".jp-NotebookPanel:visible .jp-Notebook")).to_be_visible()
    scroll_through(page)
    reopened = page.locator(".jp-NotebookPanel:visible .jp-CodeCell")
    reopened.nth(4).scroll_into_view_if_needed()
    expect(reopened.nth(4)).to_contain_text("completed")
    expect(reopened.nth(4)).not_to_contain_text("working")
    page.screenshot(path=str(SHOTS / f"saved-{theme}-4-reopened-no-kernel.png"))
    page.remove_listener("console", listen)
    with open(lab.root / name) as saved:
        html = nbformat.read(saved, as_version=4).cells[2].outputs[0].data["text/html"]
    assert html.count(">completed</span>") == 51 or "more tasks not shown" in html, html[:500]
    assert ">working</span>" not in html
    errors = widget_errors(messages)
    assert not errors, f"{len(errors)} widget errors in the console on reopening: {errors[0][:200]}"
