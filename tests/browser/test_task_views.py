"""The task widget as a person sees it in JupyterLab (issue 15, items 1-3, 8, 9 and 11), in Debian's
chromium against a real JupyterLab, kernel and demo servers: one box per task (the static summary
rides in the same output, hidden behind the live widget), a tool error with an error badge (also in
the side panel), a declined question read as declined, progress as a bar with an ETA and, in the ext
dialect (no progress at all), as an activity bar, a markdown result rendered with its sources as a
table and a copy button, the question form's Cancel named apart from the task's, and the dark theme
without white boxes; saved and reopened without its kernel, each task shows its saved summary.

The steps build on each other (one page, one kernel), so they are one test. Each step saves a
screenshot to ``build/screenshots/views-*.png``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import nbformat
import pytest
from playwright.sync_api import Locator, Page, expect

from tests.browser.lab import Lab, notebook_page, running_lab, write_notebook
from tests.browser.test_lab_extension import SHOTS, STEP, run_menu, sidebar_row

pytestmark = pytest.mark.timeout(600)
expect.set_options(timeout=STEP)

CELLS = [
    "%load_ext mcp_tasks_jupyter",
    "%mcp_connect demo {sys.executable} -m mcp_tasks_jupyter.demo",
    "%mcp_connect plain {sys.executable} -m mcp_tasks_jupyter.demo --dialect ext\n"
    "%mcp_connect steps {sys.executable} -m mcp_tasks_jupyter.demo --dialect 2025-11-25",
    # 2: a markdown report whose structured content has its sources as records
    "report = %mcp_task --wait demo:research topic=tides stage_seconds=0.3",
    # 3: a tool error
    'bad = %mcp_task --wait demo:failing_job seconds=0.3 message="row 7 is malformed"',
    # 4: progress with a total: a bar and an ETA
    "slow = %mcp_task steps:slow_compute seconds=90 steps=90",
    # 5: the ext dialect sends no progress: an activity bar beside the status message
    "quiet = %mcp_task plain:slow_compute seconds=90 steps=90",
    # 6: a question (a form in the widget) with its own Cancel
    "asks = %mcp_task demo:research topic=tides ambiguous=true stage_seconds=0.3",
]
WHITE = "rgb(255, 255, 255)"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    root = tmp_path_factory.mktemp("views-root")
    write_notebook(root / "views.ipynb", CELLS)
    with running_lab(root, tmp_path_factory.mktemp("views-home")) as server:
        yield server


@pytest.fixture(scope="module")
def page(lab: Lab) -> Iterator[Page]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    for old in SHOTS.glob("views-*.png"):
        old.unlink()
    with notebook_page(
        lab,
        "views.ipynb",
        STEP,
        size=(1400, 1000),
        permissions=(
            "clipboard-read",
            "clipboard-write",
        ),
    ) as page:
        yield page


def shot(page: Page, name: str, target: Locator | None = None) -> None:
    (target or page).screenshot(path=str(SHOTS / f"views-{name}.png"))


def cell(page: Page, n: int) -> Locator:
    return page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-CodeCell").nth(n)


def background(locator: Locator) -> str:
    return str(locator.evaluate("e => getComputedStyle(e).backgroundColor"))


def test_task_views_in_lab(page: Page, lab: Lab) -> None:
    expect(page.locator(".jp-StatusBar-TextItem", has_text="Python 3 (ipykernel) | Idle")).to_be_visible()
    run_menu(page, "Run", "Run All Cells")

    # 1. one box per task: the widget; the static summary rides in the same output, not drawn
    report = cell(page, 3)
    expect(report.locator(".mtj-badge")).to_have_text("completed")
    outputs = report.locator(".jp-OutputArea-output")
    expect(outputs).to_have_count(1)
    expect(report.locator(".mtj-task")).to_have_count(1)
    expect(report.locator(".mtj-summary")).to_have_count(0)
    # ... and a markdown report rendered, its sources a table, a copy button
    expect(report.locator(".mtj-md h1")).to_have_text("Research report: tides")
    expect(report.locator(".mtj-table caption")).to_have_text("sources")
    expect(report.locator(".mtj-md li strong").first).to_have_text("Interpretation:")
    copy = report.get_by_role("button", name="Copy the result text")
    copy.click()
    expect(copy).to_have_text("Copied")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith("# Research report: tides")
    report.scroll_into_view_if_needed()
    shot(page, "01-one-box-markdown-table", report)

    # 2. a tool error: an error badge, in words, with the tool's words
    bad = cell(page, 4)
    expect(bad.locator(".mtj-badge")).to_have_text("tool error")
    expect(bad.locator(".mtj-badge")).to_have_class(re.compile(r"\bmtj-s-error\b"))
    assert background(bad.locator(".mtj-badge")) == "rgb(207, 34, 46)"
    expect(bad.locator(".mtj-result")).to_contain_text("row 7 is malformed")
    expect(bad.locator(".jp-OutputArea-output")).to_have_count(1)
    shot(page, "02-tool-error-badge", bad)

    # 3. progress: a bar to its total with an ETA; ext (no progress): an activity bar
    slow, quiet = cell(page, 5), cell(page, 6)
    expect(slow.locator(".mtj-bar:not(.mtj-indeterminate)")).to_be_visible()
    expect(slow.locator(".mtj-eta")).to_have_text(re.compile(r"about .+ left"))
    expect(quiet.locator(".mtj-bar.mtj-indeterminate")).to_be_visible()
    expect(quiet.locator(".mtj-badge")).to_have_text("working")
    # the poll interval and the TTL are in a details view, closed by default
    expect(quiet.locator(".mtj-poll")).to_be_hidden()
    quiet.locator(".mtj-details summary").click()
    expect(quiet.locator(".mtj-poll")).to_have_text(re.compile(r"^polled every "))
    slow.scroll_into_view_if_needed()
    shot(page, "03-progress-eta-and-activity-bar")

    # 4. a question: the form's Cancel and the task's Cancel have names of their own
    asks = cell(page, 7)
    expect(asks.locator(".mtj-q")).to_be_visible()
    expect(asks.locator(".mtj-badge")).to_have_text("needs input")
    task_cancel = asks.get_by_role("button", name="Cancel the task")
    question_cancel = asks.get_by_role("button", name="Cancel the question")
    expect(task_cancel).to_be_visible()
    expect(question_cancel).to_be_visible()
    expect(task_cancel).to_have_class(re.compile(r"\bjp-mod-styled\b"))
    asks.scroll_into_view_if_needed()
    shot(page, "04-question-form-light", asks)

    # 5. the side panel reads the tool error as an error, in words
    page.locator(".lm-TabBar-tab[data-id='mcp-tasks-jupyter:sidebar']").click()
    expect(sidebar_row(page, "failing_job").locator(".mtj-task-status")).to_have_text("tool error")
    expect(sidebar_row(page, "failing_job")).to_have_attribute("data-status", "error")
    shot(page, "05-sidebar-tool-error")

    # 6. the dark theme: no white boxes in the widget, its result, the form and its inputs
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^Settings$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile("^Theme$")).hover()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile("^JupyterLab Dark$")).click()
    expect(page.locator("body[data-jp-theme-light='false']")).to_be_attached()
    page.wait_for_timeout(500)  # the theme's CSS applies
    boxes = [
        asks.locator(".mtj-task"),
        asks.locator(".mtj-q"),
        asks.locator(".mtj-q-input, .mtj-q-select").first,
        question_cancel,
        task_cancel,
        report.locator(".mtj-md code").first
        if report.locator(".mtj-md code").count()
        else report.locator(".mtj-task"),
        bad.locator(".mtj-pre").first,
    ]
    for box in boxes:
        assert background(box) != WHITE, box
    asks.scroll_into_view_if_needed()
    shot(page, "06-dark-question-form", asks)
    report.scroll_into_view_if_needed()
    shot(page, "07-dark-markdown-result", report)
    bad.scroll_into_view_if_needed()
    shot(page, "08-dark-tool-error", bad)

    # 7. declining the question: the task reads "declined", an error state
    asks.get_by_role("button", name="Decline").click()
    expect(asks.locator(".mtj-badge")).to_have_text("declined")
    expect(asks.locator(".mtj-badge")).to_have_class(re.compile(r"\bmtj-s-declined\b"))
    expect(sidebar_row(page, "research").first.locator(".mtj-task-status")).to_have_text(
        re.compile("declined|completed")
    )
    shot(page, "09-dark-declined", asks)

    # the long tasks end here, cancelled from their widgets
    for long in (slow, quiet):
        long.get_by_role("button", name="Cancel the task").click()
        expect(long.locator(".mtj-badge")).to_have_text("cancelled")

    # 8. saved, its kernel shut down, reopened: each task shows its saved summary (no widget can be
    # drawn without the kernel), and the saved file keeps no text of a task still running
    page.keyboard.press("Control+s")
    expect(page.locator(".jp-mod-dirty")).to_have_count(0)
    run_menu(page, "Kernel", "Shut Down Kernel")
    expect(page.locator(".jp-StatusBar-TextItem", has_text="No Kernel")).to_be_visible()
    saved = nbformat.read(lab.root / "views.ipynb", as_version=4)
    for index in (3, 4, 5, 6, 7):
        (output,) = saved.cells[index].outputs
        assert "application/vnd.jupyter.widget-view+json" in output.data, index
        assert not re.search("working|running|needs input", output.data["text/plain"]), output.data["text/plain"]
    page.reload()
    report, bad, asks = cell(page, 3), cell(page, 4), cell(page, 7)
    expect(report.locator(".mtj-summary")).to_contain_text("Research report: tides")
    expect(report.locator(".mtj-summary .mtj-badge")).to_have_text("completed")
    expect(bad.locator(".mtj-summary .mtj-badge")).to_have_text("tool error")
    expect(asks.locator(".mtj-summary .mtj-badge")).to_have_text("declined")
    expect(cell(page, 5).locator(".mtj-summary .mtj-badge")).to_have_text("cancelled")
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)
    page.locator(".jp-NotebookPanel:visible .jp-WindowedPanel-outer").evaluate("e => e.scrollTo(0, 0)")
    shot(page, "10-dark-reopened-saved-summaries")
