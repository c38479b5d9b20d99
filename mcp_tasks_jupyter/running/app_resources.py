"""The views of a connection's app tools (MCP Apps): read once with ``resources/read``, kept per connection.

``AppResources.read(uri)`` reads a ``ui://`` view, checks it (``protocol/apps.read_app_resource``: the
MIME type, the size bound, the CSP domains) and keeps it for the connection's life, so a second task of
the same tool draws at once; concurrent reads of one URI share one request. A view whose content carries
no ``_meta.ui`` takes the one of its ``resources/list`` entry (listed once, bounded in pages). What the
views call (``tools/call``, ``resources/read``) also goes through here: ``call_from_view`` refuses a tool
whose visibility leaves out ``"app"`` before anything is sent.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from ..errors import InvalidMessage, MCPError, UsageError
from ..protocol.apps import AppResource, is_ui_uri, read_app_resource
from ..protocol.bounds import MAX_LIST_PAGES

if TYPE_CHECKING:
    from ..session.session import Session

log = logging.getLogger(__name__)

#: Views kept per connection (a server with more app tools than this reads the oldest again).
MAX_KEPT = 64
#: How long one ``resources/read`` of a view may take (seconds).
READ_TIMEOUT_S = 30.0


class AppResources:
    """One connection's app views: read, checked, kept."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._kept: dict[str, AppResource] = {}
        self._reading: dict[str, asyncio.Future[AppResource]] = {}
        self._listed: dict[str, Any] | None = None

    def kept(self, uri: str) -> AppResource | None:
        """The view of ``uri`` if it was read already (no request)."""
        return self._kept.get(uri)

    async def read(self, uri: str) -> AppResource:
        """The checked view of ``uri`` (a ``ui://`` URI), read once per connection."""
        if not is_ui_uri(uri):
            raise UsageError(f"{uri!r} is not a ui:// resource URI", server=self._session.name)
        kept = self._kept.get(uri)
        if kept is not None:
            return kept
        pending = self._reading.get(uri)
        if pending is None:
            pending = self._session.background.future(self._read(uri), name=f"mcp-app-read {uri}")
            self._reading[uri] = pending
            pending.add_done_callback(lambda _f: self._reading.pop(uri, None))
        return await asyncio.shield(pending)

    async def _read(self, uri: str) -> AppResource:
        raw = await self._session.request("resources/read", {"uri": uri}, timeout=READ_TIMEOUT_S)
        try:
            resource = read_app_resource(raw, uri)
            if not _has_own_meta(raw, uri):
                listed = await self._listed_meta(uri)
                if listed is not None:
                    resource = read_app_resource(raw, uri, listed)
        except ValueError as exc:
            raise InvalidMessage(str(exc), server=self._session.name) from None
        for reason in resource.ui.dropped:
            log.warning("%s: view %s: %s (left out of its CSP)", self._session.name, uri, reason)
        log.info("%s: view %s: CSP domains %s", self._session.name, uri, resource.ui.csp or "none (the default)")
        if len(self._kept) >= MAX_KEPT:
            self._kept.pop(next(iter(self._kept)))
        self._kept[uri] = resource
        return resource

    async def _listed_meta(self, uri: str) -> Any:
        """The ``_meta`` of ``uri``'s ``resources/list`` entry (the list read once; None when absent or
        when the server lists no resources)."""
        if self._listed is None:
            listed: dict[str, Any] = {}
            cursor: str | None = None
            try:
                for _page in range(MAX_LIST_PAGES):
                    page = await self._session.request(
                        "resources/list", {"cursor": cursor} if cursor else {}, timeout=READ_TIMEOUT_S
                    )
                    for entry in page.get("resources") or []:
                        if isinstance(entry, dict) and isinstance(entry.get("uri"), str):
                            listed[entry["uri"]] = entry.get("_meta")
                    next_cursor = page.get("nextCursor")
                    if not isinstance(next_cursor, str) or not next_cursor or next_cursor == cursor:
                        break
                    cursor = next_cursor
            except MCPError as exc:
                log.info(
                    "%s: resources/list failed (%s); views use their content's _meta only", self._session.name, exc
                )
            self._listed = listed
        return self._listed.get(uri)

    async def read_for_view(self, uri: str) -> dict[str, Any]:
        """``resources/read`` asked by a view: any resource of this same server, its raw result."""
        if not isinstance(uri, str) or not uri or len(uri) > 2048:
            raise UsageError("resources/read from a view needs a uri", server=self._session.name)
        return await self._session.request("resources/read", {"uri": uri}, timeout=READ_TIMEOUT_S)


def _has_own_meta(raw: Any, uri: str) -> bool:
    contents = raw.get("contents") if isinstance(raw, dict) else None
    for item in contents if isinstance(contents, list) else []:
        if isinstance(item, dict) and item.get("uri") == uri:
            meta = item.get("_meta")
            return isinstance(meta, dict) and isinstance(meta.get("ui"), dict)
    return False
