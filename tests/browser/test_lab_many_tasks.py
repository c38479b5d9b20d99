"""Many tasks in a real JupyterLab (issue 15, items 4-7 and 11), in Debian's chromium against a real
kernel and demo server: a board already on screen picks up tasks started after it; a cell starting
20 tasks shows 20 compact lines; their completion, out of sight, raises one grouped notification,
not 20; Tab completes connection names, tools and argument keys in a cell (a single candidate at
once, without a menu); interrupting a cell that waits (``--wait``) prints one line and leaves the
handle bound; the board at 900 px keeps its status words whole, cancels the ticked rows and every
running one.

The steps build on each other (one page, one kernel), so they are one test. Each step saves a
screenshot to ``build/screenshots/`` (``2x-...``, beside the quick start's ``0x-...``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.browser.lab import Lab, notebook_page, running_lab, write_notebook
from tests.browser.test_lab_extension import SHOTS, STEP, run_menu, shot
from tests.jupyter.kernel_harness import DEMO_COMMAND

pytestmark = pytest.mark.timeout(600)
expect.set_options(timeout=STEP)

SETUP = ["%load_ext mcp_tasks_jupyter", f"%mcp_connect demo {DEMO_COMMAND}", "%mcp_tasks"]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    root = tmp_path_factory.mktemp("lab-many")
    write_notebook(root / "many.ipynb", SETUP)
    with running_lab(root, tmp_path_factory.mktemp("lab-many-home")) as server:
        yield server


@pytest.fixture(scope="module")
def page(lab: Lab) -> Iterator[Page]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    with notebook_page(lab, "many.ipynb", STEP) as page:
        yield page


def type_in_new_cell(page: Page, code: str) -> None:
    """A new code cell at the end with ``code`` typed in (not run), the cursor at its end. The
    last cell is selected by its prompt: a click in its output could land in a widget's input."""
    notebook = page.locator(".jp-NotebookPanel:visible .jp-Notebook")
    notebook.locator(".jp-Cell").last.locator(".jp-InputPrompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("b")
    notebook.locator(".jp-Cell").last.locator(".cm-content").click()
    page.keyboard.insert_text(code)


def add_cell_and_run(page: Page, code: str) -> None:
    """A new code cell at the end with ``code``, run (Shift+Enter)."""
    type_in_new_cell(page, code)
    page.keyboard.press("Shift+Enter")


def output_of(page: Page, snippet: str) -> Locator:
    """The outputs of the (last) cell whose code contains ``snippet``."""
    cell = page.locator(".jp-NotebookPanel:visible .jp-CodeCell").filter(
        has=page.locator(".cm-content", has_text=snippet)
    )
    return cell.last.locator(".jp-OutputArea-output")


def test_board_compact_notifications_completion_and_interrupts(page: Page) -> None:
    # 1. a board on screen, then a task started after it: the board picks it up
    expect(page.locator(".jp-StatusBar-TextItem", has_text="Python 3 (ipykernel) | Idle")).to_be_visible()
    run_menu(page, "Run", "Run All Cells")
    board = page.locator(".jp-Notebook .mtj-board").first
    expect(board.locator(".mtj-board-caption")).to_have_text(re.compile(r"^0 shown: 0 tasks of this kernel"))
    # (the board sends every row only when its set of rows changes or it settles: what changes in
    # between, below the first task's cancellation, reaches the browser as the changed rows alone)
    add_cell_and_run(
        page,
        "from mcp_tasks_jupyter.jupyter.widgets import board_widget\n"
        "board_widget.FULL_EVERY_S = 3600\n"
        "first = %mcp_task demo:slow_compute seconds=600 label=first",  # cancelled below: long on a loaded machine
    )
    row = board.locator("tbody tr").filter(has_text="label=first")
    expect(row.locator(".mtj-badge")).to_have_text("working")
    expect(row.locator(".mtj-board-started")).to_have_text(re.compile(r"^\d\d:\d\d:\d\d$"))
    board.scroll_into_view_if_needed()
    shot(page, "21-board-picks-up-a-new-task")

    # 2. one cell starts 20 tasks: 20 compact lines, no full widgets
    add_cell_and_run(
        page,
        "hs = []\nfor i in range(20):\n"
        "    h = %mcp_task demo:slow_compute seconds=6 steps=3 label=t{i}\n"
        "    hs.append(h)",
    )
    lines = output_of(page, "hs.append(h)").locator(".mtj-compact")
    expect(lines).to_have_count(20)
    expect(output_of(page, "hs.append(h)").locator(".mtj-task")).to_have_count(0)
    expect(lines.first.locator(".mtj-compact-name")).to_have_text("slow_compute label=t0 seconds=6 steps=3")
    expect(board.locator("tbody tr")).to_have_count(21)
    shot(page, "22-compact-twenty-tasks")

    # 3. they finish while the notebook is out of sight: one notification for all twenty
    page.get_by_role("main").get_by_role("button", name="New Launcher").click()
    expect(page.locator(".jp-Launcher:visible")).to_be_visible()
    toast = page.locator(".Toastify__toast", has_text="20 MCP tasks completed")
    expect(toast).to_contain_text("on demo (slow_compute): label=t")
    expect(toast).to_contain_text("and 17 more")
    page.wait_for_timeout(1500)  # the toast slides in; later completions would have updated it
    assert page.locator(".Toastify__toast", has_text="MCP task").count() == 1
    shot(page, "23-one-notification-for-twenty-tasks")
    toast.get_by_role("button", name="Show").click()
    expect(page.locator(".jp-NotebookPanel:visible")).to_be_visible()
    expect(lines.filter(has=page.locator(".mtj-s-completed"))).to_have_count(20)
    shot(page, "24-compact-twenty-completed")

    # 4. Tab completion in a cell: the tools after NAME: (a menu), then one tool and an argument key
    # of its schema (one candidate each: Tab inserts it)
    type_in_new_cell(page, "h = %mcp_task demo:")
    editor = page.locator(".jp-NotebookPanel:visible .jp-Cell").last.locator(".cm-content")
    menu = page.locator(".jp-Completer:visible")
    page.keyboard.press("Tab")
    expect(menu.locator(".jp-Completer-item", has_text="demo:slow_compute")).to_be_visible()
    assert "print" not in " ".join(menu.all_inner_texts())
    shot(page, "25-completion-of-a-tool")
    page.keyboard.press("Escape")
    expect(menu).to_have_count(0)

    def complete(typed: str, expected_text: str, picture: str | None = None) -> None:
        page.keyboard.insert_text(typed)
        page.keyboard.press("Tab")
        expect(editor).to_have_text(expected_text)
        expect(menu).to_have_count(0)
        if picture:
            shot(page, picture)

    complete("slo", "h = %mcp_task demo:slow_compute")
    complete(" sec", "h = %mcp_task demo:slow_compute seconds=")
    complete("1 la", "h = %mcp_task demo:slow_compute seconds=1 label=", "26-completion-of-an-argument-key")
    page.keyboard.press("Escape")

    # 5. interrupting a cell that waits: one line, no traceback, the handle bound
    add_cell_and_run(page, "r = %mcp_task --wait demo:slow_compute seconds=600 label=waited")
    expect(page.locator(".jp-Notebook-ExecutionIndicator[data-status='busy']")).to_be_attached()
    page.wait_for_timeout(1000)  # the cell is waiting inside the magic
    run_menu(page, "Kernel", "Interrupt Kernel")
    out = output_of(page, "label=waited")
    expect(out.filter(has_text="still running in the background: r = demo:slow_compute")).to_have_count(1)
    assert out.locator(".jp-RenderedText[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
    assert "CancelledError" not in " ".join(out.all_inner_texts())
    add_cell_and_run(page, "print(type(r).__name__, r.done())")
    expect(output_of(page, "print(type(r)")).to_have_text("TaskHandle False")
    shot(page, "27-interrupted-wait-one-line")

    # 6. the board at 900 px: status words whole; tick two rows and cancel them, then all running
    page.set_viewport_size({"width": 900, "height": 900})
    board.scroll_into_view_if_needed()
    running = board.locator("tbody tr").filter(has=page.locator(".mtj-s-working"))
    expect(running).to_have_count(2)  # first, waited
    for badge in board.locator(".mtj-badge").all():
        assert badge.evaluate("b => b.scrollWidth <= b.clientWidth + 1 && b.getBoundingClientRect().width > 0")
    shot(page, "28-board-at-900px")
    board.locator("tbody tr").filter(has_text="label=first").locator(".mtj-board-pick input").check()
    expect(board.locator(".mtj-board-cancel-picked")).to_have_text("Cancel selected (1)")
    board.locator(".mtj-board-cancel-picked").click()
    expect(board.locator("tbody tr").filter(has_text="label=first").locator(".mtj-badge")).to_have_text(
        "cancelled"
    )
    board.locator(".mtj-board-cancel-running").click()
    expect(board.locator("tbody tr").filter(has_text="label=waited").locator(".mtj-badge")).to_have_text(
        "cancelled"
    )
    expect(board.locator(".mtj-board-cancel-running")).to_be_hidden()
    shot(page, "29-board-cancelled-selected-and-all-running")
