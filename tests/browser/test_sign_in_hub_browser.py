"""Signing in on a JupyterHub-style server in a real browser: JupyterLab under ``base_url``
``/user/alice/`` with the package's Jupyter Server extension, and a browser that can reach only the
Jupyter server and the authorization server (every other 127.0.0.1 port is refused, as the kernel's
loopback is unreachable from a remote browser: requests are aborted, and a redirect to such a port is
caught before it is followed).

``%mcp_connect`` shows "Sign in to secure" with the field for a pasted address; an address of another
sign-in is refused in the widget; clicking the button signs in at the authorization server, whose
answer comes back through ``/user/alice/mcp-tasks/oauth/callback``; the cell goes on and a task runs.
Each state is saved to ``build/screenshots/hub-sign-in-*.png``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, Route, expect, sync_playwright

from tests.browser.lab import CHROMIUM, CHROMIUM_ARGS, Lab, running_lab, write_notebook
from tests.browser.test_sign_in_browser import expect_connected, run_a_task
from tests.support.auth_demo import AuthDemo, start_auth_demo
from tests.support.paths import REPO_ROOT

SHOTS = REPO_ROOT / "build" / "screenshots"
STEP = 60_000  # ms: a bound on each wait in the page, never a speed claim

pytestmark = pytest.mark.timeout(420)
expect.set_options(timeout=STEP)


@pytest.fixture(scope="module")
def demo() -> Iterator[AuthDemo]:
    with start_auth_demo(token_ttl=60) as server:
        yield server


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory, demo: AuthDemo) -> Iterator[Lab]:
    root = tmp_path_factory.mktemp("hub-root")
    write_notebook(root / "hub.ipynb", ["%load_ext mcp_tasks_jupyter", f"%mcp_connect secure {demo.url}"])
    with running_lab(root, tmp_path_factory.mktemp("hub-home"), base_url="/user/alice/") as server:
        yield server


class RemoteNetwork:
    """What a browser on another machine reaches: the Jupyter server and the authorization server."""

    def __init__(self, lab: Lab, demo: AuthDemo) -> None:
        self.authorization_server = urlsplit(demo.issuer).netloc
        self.allowed = {urlsplit(lab.url).netloc, self.authorization_server}
        self.refused: list[str] = []

    def reachable(self, url: str) -> bool:
        parts = urlsplit(url)
        return parts.hostname not in ("127.0.0.1", "localhost") or parts.netloc in self.allowed

    def __call__(self, route: Route) -> None:
        url = route.request.url
        if not self.reachable(url):
            self.refused.append(url)
            route.abort("connectionrefused")
            return
        if route.request.is_navigation_request() and urlsplit(url).netloc == self.authorization_server:
            # Its redirect would be followed without asking this handler: look at it first (JUPYTER.md).
            # (Only there: a page fulfilled here counts as public, and chromium's local network access
            # checks would then block its requests to 127.0.0.1.)
            response = route.fetch(max_redirects=0)
            location = response.headers.get("location")
            if location and not self.reachable(location):
                self.refused.append(location)
                route.abort("connectionrefused")
                return
            route.fulfill(response=response)
            return
        route.continue_()


@pytest.fixture(scope="module")
def network(lab: Lab, demo: AuthDemo) -> RemoteNetwork:
    return RemoteNetwork(lab, demo)


@pytest.fixture(scope="module")
def page(lab: Lab, network: RemoteNetwork) -> Iterator[Page]:
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            context.route("**/*", network)
            page = context.new_page()
            page.set_default_timeout(STEP)
            page.on("console", lambda m: print(f"[console.{m.type}] {m.text}"[:500]))
            page.goto(lab.page_url("hub.ipynb"))
            yield page
        finally:
            browser.close()


def shot(page: Page, name: str) -> None:
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def test_sign_in_through_the_jupyter_server_and_run_a_task(page: Page, lab: Lab, network: RemoteNetwork) -> None:
    expect(page.locator(".jp-StatusBar-TextItem", has_text="Python 3 (ipykernel) | Idle")).to_be_visible()
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile("^Run All Cells$")).click()

    button = page.locator(".jp-OutputArea-output a", has_text="Sign in to secure")
    expect(button).to_be_visible()
    href = button.get_attribute("href") or ""
    assert "%2Fuser%2Falice%2Fmcp-tasks%2Foauth%2Fcallback" in href, href  # the Jupyter server's route
    shot(page, "hub-sign-in-01-button-and-paste-field")

    field = page.locator(".mtj-sign-in-address")
    field.fill(f"{lab.url}/mcp-tasks/oauth/callback?code=x&state=not-this-sign-in")
    page.locator(".mtj-sign-in-send").click()
    expect(page.locator(".mtj-sign-in-problem")).to_contain_text("state differs")
    expect(field).to_have_value("")  # the pasted address is not kept on the page
    shot(page, "hub-sign-in-02-another-sign-in-refused")
    # The same in the dark theme (the widget takes JupyterLab's colours), then back to light.
    for theme in ("Dark", "Light"):
        page.evaluate(
            "t => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})", f"JupyterLab {theme}"
        )
        expect(page.locator("body")).to_have_attribute("data-jp-theme-name", f"JupyterLab {theme}")
        if theme == "Dark":
            page.wait_for_timeout(500)  # the theme's colours settle
            shot(page, "hub-sign-in-02-dark")

    with page.context.expect_page() as opened:
        button.click()
    tab = opened.value
    tab.wait_for_load_state()
    expect(tab.locator("h2")).to_have_text("Signed in.")
    assert tab.url.startswith(f"{lab.url}/mcp-tasks/oauth/callback?"), tab.url
    tab.screenshot(path=str(SHOTS / "hub-sign-in-03-signed-in-tab.png"))
    tab.close()

    expect_connected(page)
    shot(page, "hub-sign-in-04-connected")

    run_a_task(page)
    shot(page, "hub-sign-in-05-task-with-the-token")
    assert network.refused == [], network.refused  # nothing ever needed the kernel's loopback
