"""Browser tests keep a screenshot of the page as it was when a test failed (``build/screenshots/``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        page = item.funcargs.get("page") if hasattr(item, "funcargs") else None
        if page is not None:
            from tests.browser.test_lab_extension import SHOTS

            page.screenshot(path=str(SHOTS / f"failed-{item.name}.png"))
