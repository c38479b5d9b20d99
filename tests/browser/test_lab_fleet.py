"""A thousand live tasks in one notebook (issue 24, item 2), in Debian's chromium against a real kernel
and demo server: the side panel holds only the rows in view (a virtualized list), says how many tasks
there are, scrolls to the oldest task, moves between rows with the keyboard (End, Home, arrows) and
filters over every task; the board draws only the rows of its page in its scroll box, the others as it
scrolls, and searches over every task.

The steps build on each other (one page, one kernel), so they are one test. It saves screenshots of
both views, light and dark, to ``build/screenshots/`` (``4x-...``). Speed is not asserted here: the
figures are ``benchmarks/browser_fleet.py``'s.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.browser.lab import Lab, notebook_page, running_lab, write_notebook
from tests.browser.test_lab_extension import SHOTS, STEP, shot
from tests.jupyter.kernel_harness import DEMO_COMMAND

pytestmark = pytest.mark.timeout(900)
expect.set_options(timeout=STEP)

TASKS = 1000
#: Rows the side panel may hold in the DOM: those in view (about 15 at 900 px) and a few beyond each
#: edge. Far fewer than the tasks: every row drawn would be TASKS.
MAX_DRAWN = 60
SIDEBAR_ID = "mcp-tasks-jupyter:sidebar"
CHANGE_THEME = "t => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})"

CELLS = [
    "%load_ext mcp_tasks_jupyter",
    f"%mcp_connect demo {DEMO_COMMAND}",
    "%mcp_tasks",
    # Through the runtime, as %mcp_task does, without a widget each; one in a hundred ends soon.
    "from mcp_tasks_jupyter.jupyter.runtime import get_runtime\n"
    "_rt = get_runtime()\n"
    "fleet = []\n"
    f"for i in range({TASKS}):\n"
    "    short = i % 100 == 0\n"
    "    args = {'seconds': 2 if short else 900, 'steps': 2 if short else 300, 'label': f't{i}'}\n"
    "    fleet.append(await _rt.start_task('demo', 'slow_compute', args))\n"
    "print('started', len(fleet))",
]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    root = tmp_path_factory.mktemp("lab-fleet")
    write_notebook(root / "fleet.ipynb", CELLS)
    with running_lab(root, tmp_path_factory.mktemp("lab-fleet-home")) as server:
        yield server


@pytest.fixture(scope="module")
def page(lab: Lab) -> Iterator[Page]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    with notebook_page(lab, "fleet.ipynb", STEP) as page:
        yield page


def labelled(n: int) -> re.Pattern[str]:
    """A row's text for the task labelled ``t<n>`` (not ``t<n>0``...)."""
    return re.compile(rf"label=t{n}(?!\d)")


def drawn_rows(page: Page) -> int:
    return page.locator(".mtj-sidebar .mtj-task-row").count()


def test_a_thousand_tasks_in_the_side_panel_and_the_board(page: Page) -> None:
    # 1. a thousand tasks started from one cell; the side panel and the board show them
    expect(page.locator(".jp-StatusBar-TextItem", has_text="Python 3 (ipykernel) | Idle")).to_be_visible()
    page.evaluate(f"() => window.jupyterapp.shell.activateById({SIDEBAR_ID!r})")
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.locator(".jp-OutputArea-output", has_text=f"started {TASKS}").wait_for(timeout=10 * STEP)
    sidebar = page.locator(".mtj-sidebar")
    board = page.locator(".jp-Notebook .mtj-board").first
    expect(board.locator(".mtj-board-caption")).to_have_text(re.compile(rf"^{TASKS} shown: {TASKS} tasks of this"))

    # 2. only the rows in view are in the page
    rows = sidebar.locator(".mtj-task-row")
    expect(rows.first).to_be_visible()
    assert 0 < drawn_rows(page) <= MAX_DRAWN, f"{drawn_rows(page)} side panel rows in the DOM for {TASKS} tasks"
    expect(rows.filter(has_text=labelled(0))).to_have_count(0)  # the oldest is far below
    expect(sidebar.locator(".mtj-count")).to_have_text(re.compile(r"^1,000 tasks · \d[\d,]* running$"))

    # 3. scrolled to the end: the oldest task is drawn, and still only the rows in view
    sidebar.locator(".mtj-task-list").evaluate("list => { list.scrollTop = list.scrollHeight; }")
    expect(rows.filter(has_text=labelled(0))).to_have_count(1)
    assert drawn_rows(page) <= MAX_DRAWN
    sidebar.locator(".mtj-task-list").evaluate("list => { list.scrollTop = 0; }")
    expect(rows.filter(has_text=labelled(0))).to_have_count(0)

    # 4. the keyboard: End goes to the oldest task, Home to the newest, the arrows row by row
    newest = rows.first.get_attribute("data-key")
    rows.first.focus()
    focused = sidebar.locator(".mtj-task-row:focus")
    page.keyboard.press("End")
    expect(focused).to_contain_text(labelled(0))
    page.keyboard.press("ArrowUp")
    expect(focused).to_contain_text(labelled(1))
    page.keyboard.press("Home")
    expect(focused).to_have_attribute("data-key", newest or "")
    page.keyboard.press("ArrowDown")
    expect(focused).not_to_have_attribute("data-key", newest or "")
    assert drawn_rows(page) <= MAX_DRAWN

    # 5. the status filter works over every task, not only the rows drawn: the ten short ones
    filter_ = sidebar.locator(".mtj-status-filter")
    filter_.select_option("completed")
    expect(rows).to_have_count(TASKS // 100)
    expect(sidebar.locator(".mtj-count")).to_have_text(f"{TASKS // 100} of 1,000 tasks")
    expect(rows.filter(has_text=labelled(900))).to_have_count(1)
    filter_.select_option("all")
    expect(sidebar.locator(".mtj-count")).to_contain_text("1,000 tasks ·")

    # 6. the board: a page of 50 rows, of which only those in its scroll box are drawn; scrolled to the
    # end of the page, its last rows; a search over every task
    board.scroll_into_view_if_needed()
    expect(board.locator(".mtj-board-range")).to_have_text(f" rows 1–50 of {TASKS} ")
    board_rows = board.locator("tbody tr")
    expect(board_rows.filter(has_text=labelled(0))).to_have_count(1)
    expect(board_rows.filter(has_text=labelled(49))).to_have_count(0)
    assert 0 < board_rows.count() < 50, f"{board_rows.count()} board rows in the DOM for a page of 50"
    board.locator(".mtj-board-wrap").evaluate("box => { box.scrollTop = box.scrollHeight; }")
    expect(board_rows.filter(has_text=labelled(49))).to_have_count(1)
    expect(board_rows.filter(has_text=labelled(0))).to_have_count(0)
    shot(page, "42-fleet-board-scrolled")
    board.locator(".mtj-board-wrap").evaluate("box => { box.scrollTop = 0; }")
    expect(board_rows.filter(has_text=labelled(0))).to_have_count(1)
    for theme in ("Light", "Dark"):
        page.evaluate(CHANGE_THEME, f"JupyterLab {theme}")
        expect(page.locator("body")).to_have_attribute("data-jp-theme-name", f"JupyterLab {theme}")
        page.wait_for_timeout(500)  # the theme's colours settle
        shot(page, f"41-fleet-{theme.lower()}")
    board.locator(".mtj-board-search").fill("label=t99")
    # t99 and t990-t999: found among the thousand, whichever page they were on
    expect(board_rows).to_have_count(11)
    expect(board_rows.filter(has_text=labelled(990))).to_have_count(1)
