"""MCP Apps (the ``io.modelcontextprotocol/ui`` extension, stable 2026-01-26), as data. No I/O.

A tool names an HTML view in ``_meta.ui.resourceUri`` (or the deprecated flat ``_meta["ui/resourceUri"]``);
the client reads it with ``resources/read`` and a notebook draws it (``jupyter/widgets/app_widget.py``).
What a server says here is untrusted: the URI must be a ``ui://`` URI of bounded length, the visibility a
list of known words, the HTML bounded in size, and each declared CSP domain a plain origin (a scheme, a
host with an optional ``*.`` and port, nothing else); a value that is none of these is dropped (with the
reason in ``ResourceUI.dropped``), never passed on to the browser.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import Any

from .bounds import quoted

#: The extension's identifier (``capabilities.extensions``).
EXTENSION = "io.modelcontextprotocol/ui"
#: The one MIME type of an app view.
MIME_TYPE = "text/html;profile=mcp-app"
#: What the client declares: ``capabilities.extensions[EXTENSION]``.
CLIENT_SETTINGS: dict[str, Any] = {"mimeTypes": [MIME_TYPE]}
#: The protocol version the host side of the bridge speaks (``ui/initialize``).
PROTOCOL_VERSION = "2026-01-26"

#: A ``ui://`` URI longer than this is refused.
MAX_URI_CHARS = 2048
#: An app's HTML larger than this (UTF-8 bytes) is refused: enough for a bundled single-file app.
MAX_HTML_BYTES = 5 * 1024 * 1024
#: Domains kept per CSP list, and characters per domain.
MAX_DOMAINS = 32
MAX_DOMAIN_CHARS = 253
#: The visibility words the spec knows; the default when absent.
VISIBILITIES = ("model", "app")
DEFAULT_VISIBILITY = ("model", "app")
#: The CSP lists of ``_meta.ui.csp`` and the permissions of ``_meta.ui.permissions``.
CSP_LISTS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
PERMISSIONS = ("camera", "microphone", "geolocation", "clipboardWrite")

# A source expression that is one origin: scheme, host (an optional leading "*." wildcard), optional
# port. No path, no quotes, no spaces or semicolons: nothing that could end the directive or add a keyword.
_ORIGIN = re.compile(
    r"(?:https|http|wss|ws)://(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9-]{1,63})*(?::\d{1,5})?"
)


@dataclass(frozen=True)
class ToolUI:
    """A tool's ``_meta.ui``: its view's URI (None: the tool has no view of its own) and who may call it."""

    resource_uri: str | None
    visibility: tuple[str, ...] = DEFAULT_VISIBILITY

    @property
    def app_only(self) -> bool:
        """Hidden from a model (visibility leaves out ``"model"``): only its app calls it."""
        return "model" not in self.visibility

    @property
    def app_callable(self) -> bool:
        """A view may call it (visibility includes ``"app"``)."""
        return "app" in self.visibility


def tool_ui(meta: Any) -> ToolUI | None:
    """The ``_meta.ui`` of a tool (None when it says nothing of apps). A malformed URI is dropped; an
    unknown visibility word is ignored; a visibility that is not a list counts as absent."""
    if not isinstance(meta, dict):
        return None
    ui = meta.get("ui")
    uri: Any = ui.get("resourceUri") if isinstance(ui, dict) else None
    if uri is None:
        uri = meta.get("ui/resourceUri")  # deprecated flat key
    raw_visibility = ui.get("visibility") if isinstance(ui, dict) else None
    if not isinstance(ui, dict) and uri is None:
        return None
    visibility: tuple[str, ...] = DEFAULT_VISIBILITY
    if isinstance(raw_visibility, list):
        visibility = tuple(v for v in VISIBILITIES if v in raw_visibility)
    return ToolUI(resource_uri=uri if is_ui_uri(uri) else None, visibility=visibility)


def is_ui_uri(uri: Any) -> bool:
    return isinstance(uri, str) and uri.startswith("ui://") and 5 < len(uri) <= MAX_URI_CHARS and uri.isprintable()


@dataclass(frozen=True)
class ResourceUI:
    """A view resource's ``_meta.ui``, checked: the CSP lists of plain origins, the permissions asked for,
    the border preference; ``dropped`` says what was left out and why (for the log and the record)."""

    csp: dict[str, list[str]] = field(default_factory=dict)
    permissions: tuple[str, ...] = ()
    prefers_border: bool | None = None
    domain: str | None = None
    dropped: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"csp": self.csp, "permissions": list(self.permissions)}
        if self.prefers_border is not None:
            out["prefersBorder"] = self.prefers_border
        return out


def resource_ui(meta: Any) -> ResourceUI | None:
    """``_meta.ui`` of a resource (its content's or its listing's), checked; None when absent."""
    ui = meta.get("ui") if isinstance(meta, dict) else None
    if not isinstance(ui, dict):
        return None
    dropped: list[str] = []
    csp: dict[str, list[str]] = {}
    raw_csp = ui.get("csp")
    if isinstance(raw_csp, dict):
        for name in CSP_LISTS:
            values = raw_csp.get(name)
            if values is None:
                continue
            if not isinstance(values, list):
                dropped.append(f"csp.{name}: not a list")
                continue
            kept: list[str] = []
            for value in values:
                if len(kept) >= MAX_DOMAINS:
                    dropped.append(f"csp.{name}: more than {MAX_DOMAINS} domains")
                    break
                if is_origin(value):
                    kept.append(value)
                else:
                    dropped.append(f"csp.{name}: {quoted(value)} is not an origin")
            csp[name] = kept
    elif raw_csp is not None:
        dropped.append("csp: not an object")
    raw_permissions = ui.get("permissions")
    permissions = tuple(p for p in PERMISSIONS if isinstance(raw_permissions, dict) and p in raw_permissions)
    border = ui.get("prefersBorder")
    domain = ui.get("domain")
    return ResourceUI(
        csp=csp,
        permissions=permissions,
        prefers_border=border if isinstance(border, bool) else None,
        domain=domain if isinstance(domain, str) and len(domain) <= MAX_DOMAIN_CHARS else None,
        dropped=tuple(dropped),
    )


def is_origin(value: Any) -> bool:
    """Whether ``value`` is a plain origin a CSP may name (see ``_ORIGIN``)."""
    return (
        isinstance(value, str)
        and len(value) <= MAX_DOMAIN_CHARS + 16
        and _ORIGIN.fullmatch(value) is not None
        and all(int(port) <= 65535 for port in re.findall(r":(\d+)$", value))
    )


@dataclass(frozen=True)
class AppResource:
    """A view, read and checked: its HTML and its ``_meta.ui`` (content's first, then the listing's)."""

    uri: str
    html: str
    ui: ResourceUI


def read_app_resource(raw: Any, uri: str, listed_meta: Any = None) -> AppResource:
    """The view in a ``resources/read`` result: the content whose ``uri`` is ``uri`` (else the first one)
    with the app MIME type, its text (or base64 ``blob``) bounded by ``MAX_HTML_BYTES``. Its ``_meta.ui``
    comes from the content; without one, from ``listed_meta`` (the ``_meta`` of the listing)."""
    contents = raw.get("contents") if isinstance(raw, dict) else None
    if not isinstance(contents, list) or not contents:
        raise ValueError(f"resources/read {uri}: no contents")
    items = [c for c in contents if isinstance(c, dict)]
    item = next((c for c in items if c.get("uri") == uri), items[0] if items else None)
    if item is None:
        raise ValueError(f"resources/read {uri}: the contents are not objects")
    mime = item.get("mimeType")
    if not isinstance(mime, str) or mime.replace(" ", "").lower() != MIME_TYPE:
        raise ValueError(f"resources/read {uri}: mimeType {quoted(mime)}, not {MIME_TYPE}")
    text = item.get("text")
    if isinstance(text, str):
        if len(text) > MAX_HTML_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_HTML_BYTES:
            raise ValueError(f"resources/read {uri}: the view is larger than {MAX_HTML_BYTES} bytes")
        html = text
    elif isinstance(item.get("blob"), str):
        blob = item["blob"]
        if len(blob) > MAX_HTML_BYTES * 4 // 3 + 4:
            raise ValueError(f"resources/read {uri}: the view is larger than {MAX_HTML_BYTES} bytes")
        try:
            html = base64.b64decode(blob, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise ValueError(f"resources/read {uri}: blob is not base64 UTF-8 text") from None
    else:
        raise ValueError(f"resources/read {uri}: neither text nor blob")
    ui = resource_ui(item.get("_meta")) or resource_ui(listed_meta) or ResourceUI()
    return AppResource(uri=uri, html=html, ui=ui)
