"""The code that draws MCP Apps views, sent to the page once per kernel.

Drawing a view takes most of a megabyte of script (the sandboxed frame and the host side of its bridge:
``@modelcontextprotocol/ext-apps``' ``AppBridge`` and its message schemas; ``labextension/src/widgets/
apphost.ts``). Were that each view's ``_esm``, every view's model would carry it over the kernel's channel
and into a saved widget state: fifty views, some 33 MB. Instead one :class:`AppBridgeHost` per kernel
carries it, and each view (``app_widget.AppViewWidget``, whose own module is a few hundred bytes) names the
host in a widget reference and borrows its renderer through anywidget's composition (``host.getWidget``).
"""

from __future__ import annotations

import anywidget

from . import front_end


class AppBridgeHost(anywidget.AnyWidget):
    """Lends the views their renderer; never displayed (see the module docstring)."""

    _esm = front_end.esm("apphost")


_host: AppBridgeHost | None = None


def bridge_host() -> AppBridgeHost:
    """The kernel's one host, made with the first view (again if it was closed: ``Widget.close_all``)."""
    global _host
    if _host is None or _host.comm is None:
        _host = AppBridgeHost()
    return _host


__all__ = ["AppBridgeHost", "bridge_host"]
