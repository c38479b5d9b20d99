"""The board's sweeps in a real JupyterLab (issue 33 item 2), in Debian's chromium against a real kernel and
demo server: a 150-item ``%mcp_map`` sweep recorded in the task index is listed under the board with its
count; opened, it shows its first 100 items (a page, read from the index by the kernel), Next the other 50,
Close puts it away."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.browser.lab import notebook_page, running_lab, write_notebook
from tests.browser.test_lab_extension import SHOTS, STEP, run_menu, shot
from tests.jupyter.kernel_harness import DEMO_COMMAND

pytestmark = pytest.mark.timeout(600)
expect.set_options(timeout=STEP)

CELLS = [
    "%load_ext mcp_tasks_jupyter",
    f"%mcp_connect demo {DEMO_COMMAND}",
    "items = [{'seconds': 0.01, 'steps': 1, 'label': f'i{i}'} for i in range(150)]",
    "b = %mcp_map --limit 32 demo:slow_compute --over items",
    "results = await b.gather(timeout=120)",
    "%mcp_tasks",
]


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    root = tmp_path_factory.mktemp("lab-sweeps")
    write_notebook(root / "sweeps.ipynb", CELLS)
    SHOTS.mkdir(parents=True, exist_ok=True)
    home = tmp_path_factory.mktemp("lab-sweeps-home")
    with running_lab(root, home) as lab, notebook_page(lab, "sweeps.ipynb", STEP) as page:
        yield page


def test_the_board_lists_a_sweep_and_pages_its_items(page: Page) -> None:
    expect(page.locator(".jp-StatusBar-TextItem", has_text="Python 3 (ipykernel) | Idle")).to_be_visible()
    run_menu(page, "Run", "Run All Cells")
    board = page.locator(".jp-Notebook .mtj-board").first
    sweeps = board.locator(".mtj-board-sweeps")
    expect(sweeps.locator("summary")).to_have_text("Sweeps (1)")
    sweeps.locator("summary").click()
    entry = sweeps.locator(".mtj-board-sweep").first
    expect(entry).to_contain_text(re.compile(r"slow_compute on demo: 150 items: "))
    entry.locator("button").click()
    items = sweeps.locator(".mtj-board-sweep-items tbody tr")
    expect(items).to_have_count(100)  # one page, never the whole sweep
    head = sweeps.locator(".mtj-board-sweep-head")
    expect(head).to_contain_text("items 1–100 of 150")
    expect(items.first).to_contain_text("label=i0")
    board.scroll_into_view_if_needed()
    shot(page, "29-board-sweep-page")
    head.get_by_role("button", name=re.compile("^Next")).click()
    expect(head).to_contain_text("items 101–150 of 150")
    expect(items).to_have_count(50)
    expect(items.first).to_contain_text("label=i100")
    head.get_by_role("button", name="Close").click()
    expect(items).to_have_count(0)
