"""MCP Apps negotiated and fetched against the demo server, in every dialect over stdio and HTTP.

The demo lists its app tools' ``_meta.ui`` only to a client that declared ``io.modelcontextprotocol/ui``
(in ``initialize``'s capabilities, or in each request's ``_meta`` on the stateless wire), so seeing it
proves the declaration went out; ``apps=False`` declares nothing and sees plain tools.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from mcp_tasks_jupyter.demo.app_tools import VIEW_HTML, VIEW_URI
from mcp_tasks_jupyter.errors import UsageError
from mcp_tasks_jupyter.jupyter.tables import tools_table

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["2025-11-25", "sep1686", "ext"])
def connect(request: pytest.FixtureRequest, connect_demo: Callable[..., Any]) -> Callable[..., Any]:
    return lambda **options: connect_demo(dialect=request.param, **options)


async def test_the_extension_is_declared_and_app_tools_are_known(connect):
    async with connect() as client:
        assert client.apps_enabled
        tools = {t.name: t for t in await client.list_tools()}
    chart, points = tools["live_chart"].ui, tools["chart_points"].ui
    assert chart is not None and chart.resource_uri == VIEW_URI and not chart.app_only
    assert points is not None and points.app_only  # still listed: a notebook's user is not a model
    assert tools["echo"].ui is None
    table = tools_table("demo", list(tools.values())).text()
    assert f"view {VIEW_URI}, app-only" in table and "app-only: hidden from models" in table


async def test_without_apps_nothing_is_declared(connect):
    async with connect(apps=False) as client:
        assert not client.apps_enabled
        tools = {t.name: t for t in await client.list_tools()}
    assert tools["live_chart"].ui is None and "app" not in tools_table("demo", list(tools.values())).columns


async def test_the_view_is_read_once_per_connection(connect):
    async with connect() as client:
        first, second = await asyncio.gather(client.app_views.read(VIEW_URI), client.app_views.read(VIEW_URI))
        assert first is second and first.html == VIEW_HTML
        assert await client.app_views.read(VIEW_URI) is first and client.app_views.kept(VIEW_URI) is first
        # The content carries no _meta.ui: the listing's (prefersBorder) is used.
        assert first.ui.prefers_border is True and first.ui.csp == {}
        with pytest.raises(UsageError, match="not a ui://"):
            await client.app_views.read("https://example.com/x")
