"""Make the README's pictures: a task widget in a notebook, a loop of tasks, the board and the side panel,
in JupyterLab's light theme, cropped to what each shows.

    .venv/bin/python docs/images/make_screenshots.py [--out DIR]     # default: docs/images/

JupyterLab and Debian's chromium run as the browser tests run them (``tests/browser/lab.py``: the front
end built in this checkout, directories of the run's own, chromium at /usr/bin/chromium, ``make browser``
installs it); the notebook talks to the bundled demo server over stdio. Takes about a minute. Not a test:
it checks nothing beyond waiting for what it photographs.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import Locator, Page, expect

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # the repository, for the browser tests' helpers

from tests.browser.lab import notebook_page, running_lab, write_notebook  # noqa: E402
from tests.jupyter.kernel_harness import DEMO_COMMAND  # noqa: E402

WAIT_MS = 120_000  # a bound on each wait in the page (a loaded 2-core machine)
SIZE = (1400, 1000)  # the page; each picture is cropped from it
expect.set_options(timeout=WAIT_MS)

CELLS = [
    "%load_ext mcp_tasks_jupyter",
    f"%mcp_connect demo {DEMO_COMMAND} --dialect 2025-11-25",  # the dialect that reports progress
    "h = %mcp_task -o report demo:slow_compute seconds=40 steps=40 label=tides",
    "handles = []\n"
    "for i in range(6):\n"
    "    t = %mcp_task demo:slow_compute seconds={4 + 6 * i} steps=20 label=t{i}\n"
    "    handles.append(t)",
    "await handles[5].cancel()\nbad = %mcp_task demo:failing_job seconds=1 mode=tool_error",
    "%mcp_tasks",
]


def cell(page: Page, index: int) -> Locator:
    return page.locator(".jp-NotebookPanel:visible .jp-Cell").nth(index)


def crop(target: Locator, path: Path) -> None:
    target.scroll_into_view_if_needed()
    target.screenshot(path=str(path), animations="disabled")
    print(f"{path} ({path.stat().st_size // 1024} KB)")


def photograph(page: Page, out: Path) -> None:
    expect(page.locator(".jp-StatusBar-TextItem", has_text="Python 3 (ipykernel) | Idle")).to_be_visible()
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile("^Run All Cells$")).click()
    page.evaluate("window.jupyterapp.shell.collapseLeft()")

    widget = cell(page, 2).locator(".mtj-task")
    expect(widget.locator(".mtj-badge")).to_have_text(re.compile("working"))
    board = cell(page, 5).locator(".mtj-board")
    expect(board).to_be_visible()
    expect(board).to_contain_text("error")  # the failing job has ended
    expect(board).to_contain_text("cancelled")
    page.wait_for_timeout(3000)  # a few seconds of progress on the bars
    crop(cell(page, 2), out / "task-widget.png")
    crop(cell(page, 3), out / "task-loop.png")
    crop(board, out / "board.png")

    page.evaluate("window.jupyterapp.shell.activateById('mcp-tasks-jupyter:sidebar')")
    rows = page.locator(".mtj-sidebar .mtj-task-row")
    expect(rows.first).to_be_visible()
    widen_right_panel(page, 120)
    panel, last = page.locator("#jp-right-stack").bounding_box(), rows.last.bounding_box()
    assert panel is not None and last is not None
    height = last["y"] + last["height"] + 8 - panel["y"]
    path = out / "side-panel.png"
    page.screenshot(path=str(path), clip={**panel, "height": height}, animations="disabled")
    print(f"{path} ({path.stat().st_size // 1024} KB)")


def widen_right_panel(page: Page, pixels: int) -> None:
    """Drag the handle between the notebook and the right side panel ``pixels`` to the left."""
    handle = page.locator(".lm-SplitPanel-handle:visible").filter(has_not=page.locator("*")).last
    box = handle.bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x - pixels, y, steps=5)
    page.mouse.up()


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--out", type=Path, default=HERE)
    out = options.parse_args().out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mtj-shots-") as tmp:
        root, home = Path(tmp) / "root", Path(tmp) / "home"
        root.mkdir()
        write_notebook(root / "tasks.ipynb", CELLS)
        with running_lab(root, home) as lab, notebook_page(lab, "tasks.ipynb", WAIT_MS, size=SIZE) as page:
            photograph(page, out)


if __name__ == "__main__":
    main()
