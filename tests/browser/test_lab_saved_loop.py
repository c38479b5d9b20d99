"""A saved loop of thirty tasks, five cancelled, reopened in JupyterLab without its kernel (issue 30,
item 4): the notebook is run for real (nbclient, a kernel, the demo server) and saved as JupyterLab
saves it (no widget state), then opened in Debian's chromium; the kernel is shut down and the page
reloaded, so no kernel holds the widgets' models. Each task's output is its saved summary, one line
as the live view was, naming the task by its arguments: the five cancelled ones differ.

Screenshots, light and dark: ``build/screenshots/saved-loop-THEME.png`` (the page) and
``saved-loop-THEME-cell.png`` (the loop's thirty lines).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.browser.lab import Lab, notebook_page, running_lab
from tests.browser.test_lab_extension import SHOTS, STEP, run_menu
from tests.jupyter.test_saved_notebook_html import CANCELLED, LOOP_CELL, LOOP_CELLS, run_and_save

pytestmark = pytest.mark.timeout(600)
expect.set_options(timeout=STEP)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    root = tmp_path_factory.mktemp("loop-root")
    run_and_save(LOOP_CELLS, root / "loop-light.ipynb")
    shutil.copy(root / "loop-light.ipynb", root / "loop-dark.ipynb")
    SHOTS.mkdir(parents=True, exist_ok=True)
    for old in SHOTS.glob("saved-loop-*.png"):
        old.unlink()
    with running_lab(root, tmp_path_factory.mktemp("loop-home")) as server:
        yield server


def loop_cell(page: Page):
    return page.locator(".jp-NotebookPanel:visible .jp-CodeCell").nth(LOOP_CELL)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_saved_loop_reopened_without_its_kernel_tells_each_task_apart(lab: Lab, theme: str) -> None:
    name = f"loop-{theme}.ipynb"
    with notebook_page(lab, name, STEP, size=(1400, 1000)) as page:
        expect(page.locator(".jp-NotebookPanel:visible .jp-Notebook")).to_be_visible()
        page.evaluate(
            "t => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})",
            "JupyterLab Dark" if theme == "dark" else "JupyterLab Light",
        )
        # No kernel holds the widgets' models: shut the one JupyterLab started down, and reopen.
        expect(page.locator(".jp-StatusBar-TextItem", has_text=re.compile("Python 3"))).to_be_visible()
        run_menu(page, "Kernel", "Shut Down Kernel")
        page.goto(lab.page_url(name))
        expect(page.locator(".jp-NotebookPanel:visible .jp-Notebook")).to_be_visible()
        cell = loop_cell(page)
        cell.scroll_into_view_if_needed()
        lines = cell.locator(".mtj-compact-summary")
        expect(lines).to_have_count(30)
        expect(cell.locator(".mtj-summary")).to_have_count(0)  # no big boxes
        for i in range(30):
            status = "cancelled" if i in CANCELLED else "completed"
            expect(lines.nth(i)).to_contain_text(re.compile(rf"{status}\s+slow_compute label=t{i} seconds="))
        cancelled = {" ".join(lines.nth(i).inner_text().split()) for i in CANCELLED}
        assert len(cancelled) == 5, cancelled
        # each line is one line high (as the live compact view), not a box
        heights = [lines.nth(i).bounding_box()["height"] for i in (0, 1, 29)]  # type: ignore[index]
        assert max(heights) < 40, heights
        page.locator(".jp-NotebookPanel:visible .jp-Cell").first.click()
        cell.scroll_into_view_if_needed()
        page.wait_for_timeout(300)  # the scroll settles (nothing timed is asserted)
        page.screenshot(path=str(SHOTS / f"saved-loop-{theme}.png"))
        cell.locator(".jp-OutputArea").screenshot(path=str(SHOTS / f"saved-loop-{theme}-cell.png"))
