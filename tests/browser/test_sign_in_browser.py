"""Signing in to an OAuth-protected server from JupyterLab in a real browser: ``%mcp_connect`` shows a
"Sign in to secure" button in the cell; clicking it opens the authorization server in a new tab (the
demo's approves at once and redirects to the kernel's loopback listener, which says "Signed in"); the
cell goes on and the button becomes "signed in to secure"; a task then runs with the token.

Each step saves a screenshot to ``build/screenshots/`` (``sign-in-*.png``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect, sync_playwright

from tests.browser.lab import CHROMIUM, CHROMIUM_ARGS, Lab, running_lab, write_notebook
from tests.support.auth_demo import AuthDemo, start_auth_demo
from tests.support.paths import REPO_ROOT

SHOTS = REPO_ROOT / "build" / "screenshots"
STEP = 60_000  # ms: a bound on each wait in the page, never a speed claim

pytestmark = pytest.mark.timeout(420)
expect.set_options(timeout=STEP)


@pytest.fixture(scope="module")
def demo() -> Iterator[AuthDemo]:
    with start_auth_demo(token_ttl=30) as server:
        yield server


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory, demo: AuthDemo) -> Iterator[Lab]:
    root = tmp_path_factory.mktemp("sign-in-root")
    write_notebook(root / "sign-in.ipynb", ["%load_ext mcp_tasks_jupyter", f"%mcp_connect secure {demo.url}"])
    with running_lab(root, tmp_path_factory.mktemp("sign-in-home")) as server:
        yield server


@pytest.fixture(scope="module")
def page(lab: Lab) -> Iterator[Page]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            page = context.new_page()
            page.set_default_timeout(STEP)
            page.on("console", lambda m: print(f"[console.{m.type}] {m.text}"[:500]))
            page.goto(lab.page_url("sign-in.ipynb"))
            yield page
        finally:
            browser.close()


def shot(page: Page, name: str) -> None:
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def expect_connected(page: Page) -> None:
    """The cell says it signed in and connected, and its Sign in button is gone."""
    outputs = page.locator(".jp-OutputArea-output")
    expect(outputs.filter(has_text="signed in to secure")).to_be_visible()
    expect(outputs.filter(has_text="connected secure")).to_be_visible()
    expect(page.locator(".jp-OutputArea-output a", has_text="Sign in to secure")).to_have_count(0)


def run_a_task(page: Page) -> None:
    """A new cell runs a task on the signed-in server to its end (the token carries it)."""
    notebook = page.locator(".jp-NotebookPanel:visible .jp-Notebook")
    notebook.locator(".jp-Cell").last.click()
    page.keyboard.press("Escape")
    page.keyboard.press("b")
    notebook.locator(".jp-Cell").last.locator(".cm-content").click()
    page.keyboard.insert_text("t = %mcp_task secure:slow_compute seconds=1")
    page.keyboard.press("Shift+Enter")
    expect(page.locator(".jp-Notebook .mtj-task .mtj-badge").last).to_have_text(re.compile("completed"))


def test_sign_in_button_opens_the_authorization_server_and_the_cell_goes_on(page: Page) -> None:
    expect(page.locator(".jp-StatusBar-TextItem", has_text="Python 3 (ipykernel) | Idle")).to_be_visible()
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile("^Run All Cells$")).click()

    button = page.locator(".jp-OutputArea-output a", has_text="Sign in to secure")
    expect(button).to_be_visible()
    assert button.get_attribute("target") == "_blank"
    shot(page, "sign-in-01-button-in-the-cell")

    with page.context.expect_page() as opened:
        button.click()
    tab = opened.value
    tab.wait_for_load_state()
    expect(tab.locator("h2")).to_have_text("Signed in.")
    tab.screenshot(path=str(SHOTS / "sign-in-02-signed-in-tab.png"))
    tab.close()

    expect_connected(page)
    shot(page, "sign-in-03-connected")

    run_a_task(page)
    shot(page, "sign-in-04-task-with-the-token")
