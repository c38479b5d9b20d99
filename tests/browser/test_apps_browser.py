"""MCP Apps in JupyterLab (issue 32, items 2-5 and 8), in Debian's chromium against a real JupyterLab and
kernel: the npm reference server's ``get-time`` view draws in its task's output and its button calls the
tool through the bridge; the demo's live chart shows its progress, is stopped from its view (the steering
reaches the server) and gets its result; the dark theme reaches the views; a hostile view (a server of
ours, ``tests/apps/hostile_server.py``) tries every escape of item 5, each asserted refused; a view the
kernel tears down (``ui/resource-teardown``) answers.

The steps share one page and kernel, so they are one test. Screenshots go to ``build/screenshots/apps-*.png``
(``apps-view-light.png`` and ``apps-view-dark.png`` are the README's ``docs/images/app-view-*.png``, copied by
hand: a test never writes into the sources).
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import FrameLocator, Locator, Page, expect

from tests.browser.lab import Lab, notebook_page, running_lab, write_notebook
from tests.browser.test_lab_extension import SHOTS, STEP, run_menu
from tests.support.peers import basic_apps_stdio_argv

pytestmark = pytest.mark.timeout(600)
expect.set_options(timeout=STEP)

HOSTILE = Path(__file__).parents[1] / "apps" / "hostile_server.py"
CHANGE_THEME = "t => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})"
#: What each escape of the hostile view must come to (its own report, in its page).
ESCAPES = [
    "parent-document",
    "top-document",
    "cookie",
    "local-storage",
    "window-open",
    "top-navigation",
    "sibling-frames",
    "fetch-jupyter",
    "fetch-elsewhere",
    "image-jupyter",
    "frame-jupyter",
    "form-post",
    "call-model-only",
    "ui-message",
    "open-javascript-link",
]


def cells(lab_url: str) -> list[str]:
    basic = " ".join(basic_apps_stdio_argv())
    return [
        "%load_ext mcp_tasks_jupyter",
        f"%mcp_connect basic {basic}\n%mcp_connect hostile {sys.executable} {HOSTILE}\n"
        "%mcp_connect demo {sys.executable} -m mcp_tasks_jupyter.demo --poll-interval 200",
        "t = %mcp_task basic:get-time",  # 2
        "chart = %mcp_task demo:live_chart label=b1 points=400 interval=0.1",  # 3
        f"h = %mcp_task hostile:escape jupyter={lab_url}",  # 4
        "import ipywidgets, warnings\n"  # 5: what the views called, as the kernel saw it
        "warnings.simplefilter('ignore', DeprecationWarning)\n"
        "print(sorted((w.tool, w.calls) for w in ipywidgets.Widget.widgets.values()"
        " if type(w).__name__ == 'AppViewWidget'))",
        "plain = %mcp_task --no-app basic:get-time",  # 6
        "from mcp_tasks_jupyter.jupyter.widgets.app_widget import views_of\n"  # 7
        "for v in views_of(chart):\n    await v.teardown()\n"
        "print([line['data'] for line in chart.logs if line.get('logger') == 'view'])",
    ]


@pytest.fixture
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    root = tmp_path_factory.mktemp("apps-root")
    with running_lab(root, tmp_path_factory.mktemp("apps-home")) as server:
        write_notebook(root / "apps.ipynb", cells(server.url))
        yield server


@pytest.fixture
def page(lab: Lab) -> Iterator[Page]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    with notebook_page(lab, "apps.ipynb", STEP, size=(1300, 1100)) as page:
        yield page


def cell(page: Page, n: int) -> Locator:
    return page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-CodeCell").nth(n)


def view(page: Page, n: int) -> FrameLocator:
    return cell(page, n).frame_locator("iframe.mtj-app-iframe")


def run_cell(page: Page, n: int) -> None:
    """Run cell ``n``: made the active cell by a click, then run by the notebook's own command (a key press
    would go wherever the focus is, and a view may hold it)."""
    target = cell(page, n)
    target.scroll_into_view_if_needed()
    target.locator(".jp-InputArea-prompt").click()
    expect(target).to_have_class(re.compile(r"\bjp-mod-active\b"))
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-cell')")


def test_apps_in_lab(page: Page, lab: Lab) -> None:
    expect(page.locator(".jp-StatusBar-TextItem", has_text="Python 3 (ipykernel) | Idle")).to_be_visible()
    for n in range(5):
        run_cell(page, n)

    # 1. the reference server's get-time view: drawn in the task's one output, sandboxed, its button works
    timed = cell(page, 2)
    expect(timed.locator(".jp-OutputArea-output")).to_have_count(1)
    expect(timed.locator(".mtj-task .mtj-badge")).to_have_text("completed")
    frame = timed.locator("iframe.mtj-app-iframe")
    assert frame.get_attribute("sandbox") == "allow-scripts"
    basic = view(page, 2)
    first = basic.locator("#server-time")
    expect(first).to_have_text(re.compile(r"^\d{4}-\d\d-\d\dT"))  # the tool result reached the view
    before = first.text_content()
    page.wait_for_timeout(1100)
    basic.locator("#get-time-btn").click()  # tools/call through the bridge and the kernel's client
    expect(first).not_to_have_text(before or "")
    expect(first).to_have_text(re.compile(r"^\d{4}-\d\d-\d\dT"))
    # ui/message: there is no model here; the view is answered, nothing is sent anywhere
    basic.locator("#send-message-btn").click()
    # ui/open-link: a link the person may click, never opened by itself
    basic.locator("#open-link-btn").click()
    offer = timed.locator(".mtj-app-link a")
    expect(offer).to_have_attribute("href", "https://modelcontextprotocol.io/")
    expect(offer).to_have_attribute("target", "_blank")
    expect(offer).to_have_attribute("rel", "noopener noreferrer")
    assert len(page.context.pages) == 1
    timed.locator(".mtj-app-link button").click()
    expect(timed.locator(".mtj-app-link")).to_have_count(0)
    timed.scroll_into_view_if_needed()
    timed.screenshot(path=str(SHOTS / "apps-01-get-time.png"))

    # 2. the demo's live chart: progress drawn live, stopped from the view, the result drawn
    chart = view(page, 3)
    expect(chart.locator("#status")).to_have_text(re.compile(r"^\d+/400 points$"))
    chart.locator("#stop").click()
    expect(chart.locator("#status")).to_have_text(re.compile(r"^done: \d+ points \(stopped early\)$"))
    expect(cell(page, 3).locator(".mtj-task .mtj-badge")).to_have_text("completed")
    expect(cell(page, 3).locator(".mtj-task")).to_contain_text("stopped early from the view")
    cell(page, 3).scroll_into_view_if_needed()
    cell(page, 3).screenshot(path=str(SHOTS / "apps-02-live-chart.png"))
    page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-CodeCell").nth(2).scroll_into_view_if_needed()
    cell(page, 2).screenshot(path=str(SHOTS / "apps-view-light.png"))

    # 3. the hostile view: every escape refused, as its own page reports it
    hostile = view(page, 4)
    expect(hostile.locator("body[data-done='1']")).to_have_count(1)
    report = json.loads(hostile.locator("#results").text_content() or "{}")
    for attempt in ESCAPES:
        assert attempt in report, (attempt, report)
        assert "refused" in (report[attempt] or "") and "ESCAPED" not in (report[attempt] or ""), (attempt, report)
    assert (report.get("call-app-only") or "").startswith("allowed: ")  # an app-only tool is the view's to call
    assert page.evaluate("location.hash") != "#escaped" and len(page.context.pages) == 1
    box = cell(page, 4).locator("iframe.mtj-app-iframe")
    height = box.evaluate("e => e.getBoundingClientRect().height")
    assert 40 <= height <= 1600  # size-changed of 1e9: within bounds
    # a message from the page itself, claiming to be the hostile view's: ignored (checked by its source)
    page.evaluate(
        "window.postMessage({jsonrpc: '2.0', id: 4242, method: 'tools/call',"
        " params: {name: 'app_only', arguments: {}}}, '*')"
    )
    page.wait_for_timeout(500)
    run_cell(page, 5)
    calls = cell(page, 5).locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stdout']")
    expect(calls).to_contain_text("'escape'")
    seen = calls.text_content() or ""
    # the view's own app-only call went through once; the spoofed one, the oversized one and the
    # model-only one never reached the kernel's client
    assert seen.count("tools/call app_only") == 1, seen
    assert "tools/call plain" not in seen and "model_only" not in seen, seen
    assert "tools/call steer_chart" in seen and "tools/call get-time" in seen, seen
    cell(page, 4).screenshot(path=str(SHOTS / "apps-03-hostile.png"))

    # 4. --no-app: the plain result, no view
    run_cell(page, 6)
    expect(cell(page, 6).locator(".mtj-task .mtj-badge")).to_have_text("completed")
    expect(cell(page, 6).locator("iframe")).to_have_count(0)

    # 5. the dark theme reaches the views (host-context-changed)
    page.evaluate(CHANGE_THEME, "JupyterLab Dark")
    expect(page.locator("body[data-jp-theme-light='false']")).to_have_count(1)
    expect(basic.locator("html[data-theme='dark']")).to_have_count(1)
    expect(chart.locator("body.dark")).to_have_count(1)
    cell(page, 2).scroll_into_view_if_needed()
    cell(page, 2).screenshot(path=str(SHOTS / "apps-view-dark.png"))
    cell(page, 3).screenshot(path=str(SHOTS / "apps-04-live-chart-dark.png"))
    page.evaluate(CHANGE_THEME, "JupyterLab Light")

    # 6. the kernel tears a view down (ui/resource-teardown), and the view answers
    run_cell(page, 7)
    expect(cell(page, 7).locator(".jp-OutputArea-output")).to_contain_text('"torn down"')
    print(json.dumps(report, indent=1))

    # 7. saved, the notebook keeps each task's summary and text result with a note; never a view
    page.keyboard.press("Control+s")
    expect(page.locator(".jp-mod-dirty")).to_have_count(0)
    saved = (lab.root / "apps.ipynb").read_text()
    assert "get-time-btn" not in saved and "hostile view" not in saved and "<iframe" not in saved
    outputs = json.loads(saved)["cells"][2]["outputs"]
    (shown,) = [o for o in outputs if o.get("output_type") == "display_data"]
    note = "an app view (ui://get-time/mcp-app.html) was shown live here; run the cell with a kernel to draw it"
    assert note in "".join(shown["data"]["text/plain"]) and note in "".join(shown["data"]["text/html"])
    assert "get-time on basic: completed" in "".join(shown["data"]["text/plain"])
    # ... and reopened without its kernel, it draws that summary and note: no view runs by itself
    run_menu(page, "Kernel", "Shut Down Kernel")
    expect(page.locator(".jp-StatusBar-TextItem", has_text="No Kernel")).to_be_visible()
    page.reload()
    expect(cell(page, 2).locator(".mtj-summary .mtj-badge")).to_have_text("completed")
    expect(cell(page, 2)).to_contain_text("an app view (ui://get-time/mcp-app.html) was shown live here")
    expect(page.locator("iframe.mtj-app-iframe")).to_have_count(0)
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)
    cell(page, 2).screenshot(path=str(SHOTS / "apps-06-reopened-without-kernel.png"))


def test_apps_in_notebook_7(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The same views in Notebook 7 (``/notebooks/NAME.ipynb``): get-time draws and its button calls the tool;
    the live chart shows its progress and is stopped from its view."""
    root = tmp_path_factory.mktemp("apps-nb7-root")
    with running_lab(root, tmp_path_factory.mktemp("apps-nb7-home"), app="notebook") as server:
        write_notebook(root / "apps7.ipynb", cells(server.url)[:4])
        with notebook_page(server, "apps7.ipynb", STEP, size=(1300, 1100)) as page:
            expect(cell(page, 3)).to_be_visible()
            page.wait_for_timeout(1000)  # the kernel starts behind the page; a cell run before waits for it
            for n in range(4):
                run_cell(page, n)
            basic = view(page, 2)
            shown = basic.locator("#server-time")
            expect(shown).to_have_text(re.compile(r"^\d{4}-\d\d-\d\dT"))
            before = shown.text_content()
            page.wait_for_timeout(1100)
            basic.locator("#get-time-btn").click()
            expect(shown).not_to_have_text(before or "")
            chart = view(page, 3)
            expect(chart.locator("#status")).to_have_text(re.compile(r"^\d+/400 points$"))
            chart.locator("#stop").click()
            expect(chart.locator("#status")).to_have_text(re.compile(r"^done: \d+ points \(stopped early\)$"))
            cell(page, 2).screenshot(path=str(SHOTS / "apps-05-notebook7-get-time.png"))


def test_apps_behind_a_hub_base_url_opened_as_localhost(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Item 5 where the page is ``http://localhost:PORT/user/ada/`` (a hub's ``base_url``, the other loopback
    name): the views still draw and call back, and every escape of the hostile view is refused (its fetch and
    image aimed at this very server under its base_url)."""
    root = tmp_path_factory.mktemp("apps-hub-root")
    with running_lab(root, tmp_path_factory.mktemp("apps-hub-home"), base_url="/user/ada/") as server:
        shown = dataclasses.replace(server, url=server.url.replace("127.0.0.1", "localhost"))
        assert shown.url.startswith("http://localhost:") and shown.url.endswith("/user/ada")
        write_notebook(root / "hub.ipynb", [*cells(shown.url)[:3], cells(shown.url)[4]])
        with notebook_page(shown, "hub.ipynb", STEP, size=(1300, 1100)) as page:
            expect(page.locator(".jp-StatusBar-TextItem", has_text="Python 3 (ipykernel) | Idle")).to_be_visible()
            for n in range(4):
                run_cell(page, n)
            basic = view(page, 2)
            expect(basic.locator("#server-time")).to_have_text(re.compile(r"^\d{4}-\d\d-\d\dT"))
            hostile = view(page, 3)
            expect(hostile.locator("body[data-done='1']")).to_have_count(1)
            report = json.loads(hostile.locator("#results").text_content() or "{}")
            for attempt in ESCAPES:
                assert (report.get(attempt) or "").startswith("refused: "), (attempt, report)
            assert len(page.context.pages) == 1


#: A command run without waiting for it (one that shows a dialog would hold page.evaluate until it is answered).
NOT_AWAITED = "c => { void window.jupyterapp.commands.execute(c); }"


def teardown_cells() -> list[str]:
    chart = "%mcp_task demo:live_chart label={} points=500 interval=0.5"
    view_log = "print([line['data'] for line in {}.logs if line.get('logger') == 'view'])"
    return [
        "%load_ext mcp_tasks_jupyter",
        f"%mcp_connect demo {sys.executable} -m mcp_tasks_jupyter.demo --poll-interval 200",
        f"cleared = {chart.format('t1')}",  # 2
        view_log.format("cleared"),  # 3
        f"closed = {chart.format('t2')}",  # 4
        "closed",  # 5
        f"restarted = {chart.format('t3')}",  # 6
    ]


def test_views_torn_down_before_they_go(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Issue 32 item 3: ``ui/resource-teardown`` reaches a live view, and the view's answer is heard, before its
    output is cleared, before its notebook closes (the demo's live chart logs "torn down" to its task, read in
    the kernel) and when the kernel restarts (the view's answer, as the page saw it)."""
    root = tmp_path_factory.mktemp("apps-teardown-root")
    with running_lab(root, tmp_path_factory.mktemp("apps-teardown-home")) as server:
        write_notebook(root / "teardown.ipynb", teardown_cells())
        with notebook_page(server, "teardown.ipynb", STEP, size=(1300, 1100)) as page:
            expect(page.locator(".jp-StatusBar-TextItem", has_text="Python 3 (ipykernel) | Idle")).to_be_visible()
            for n in range(3):
                run_cell(page, n)
            expect(view(page, 2).locator("#status")).to_have_text(re.compile(r"^\d+/500 points$"))
            # 1. its output cleared: the view was asked, and answered, before its frame left the page
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-cell-output')")
            expect(cell(page, 2).locator("iframe")).to_have_count(0)
            run_cell(page, 3)
            expect(cell(page, 3).locator(".jp-OutputArea-output")).to_contain_text('"torn down"')

            # 2. its notebook closed (saved first): the view answers its teardown, as its element (held here,
            # off the page by then) says; its log line cannot reach the kernel, whose connection the page
            # closes with the notebook, at once.
            run_cell(page, 4)
            expect(view(page, 4).locator("#status")).to_have_text(re.compile(r"^\d+/500 points$"))
            closing = cell(page, 4).locator(".mtj-app").element_handle()
            page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
            expect(page.locator(".jp-mod-dirty")).to_have_count(0)
            page.evaluate(NOT_AWAITED, "application:close")
            expect(page.locator(".jp-NotebookPanel")).to_have_count(0)
            page.wait_for_function("e => e.dataset.mtjTeardown === 'detached answered'", arg=closing, timeout=STEP)
            page.evaluate("() => window.jupyterapp.commands.execute('docmanager:open', {path: 'teardown.ipynb'})")
            expect(page.locator(".jp-StatusBar-TextItem", has_text="Python 3 (ipykernel) | Idle")).to_be_visible()

            # 3. the kernel restarts: the view is asked and answers (the restart does not wait for it)
            run_cell(page, 6)
            expect(view(page, 6).locator("#status")).to_have_text(re.compile(r"^\d+/500 points$"))
            page.evaluate(NOT_AWAITED, "notebook:restart-kernel")  # it waits for its dialog
            page.locator(".jp-Dialog .jp-mod-accept").click()
            expect(cell(page, 6).locator(".mtj-app[data-mtj-teardown='restart answered']")).to_have_count(1)
            expect(cell(page, 6).locator(".mtj-app")).to_contain_text("the kernel restarted: the view was closed")
            expect(cell(page, 6).locator("iframe")).to_have_count(0)
