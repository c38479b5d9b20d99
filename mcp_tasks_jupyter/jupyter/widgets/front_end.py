"""Where the widgets' front ends are: one ESM module and one style sheet per widget in ``static/``,
built by npm from ``labextension/src/widgets`` (TypeScript). ``pip install`` (editable or not) and
``npm run build:prod`` in ``labextension/`` build them; the wheel ships them.

A missing bundle (a source checkout never built) does not break the import: the widget then shows
a line saying how to build it instead of its view.
"""

from __future__ import annotations

import json
import logging
import pathlib

log = logging.getLogger(__name__)

STATIC = pathlib.Path(__file__).parent / "static"
_BUILD_HINT = "run `npm run build:prod` in labextension/ (or `pip install -e .`) to build it"


def esm(name: str) -> pathlib.Path | str:
    """The built ESM module of widget ``name`` (a path, which anywidget reads), or a stand-in module."""
    path = STATIC / f"{name}.js"
    if path.is_file():
        return path
    log.warning("the %s widget's front end %s is missing: %s", name, path, _BUILD_HINT)
    text = json.dumps(f"The {name} widget's front end was not built: {_BUILD_HINT}.")
    # Several lines, so that anywidget never takes it for a file name.
    return f"export default {{\n  render({{ el }}) {{\n    el.textContent = {text};\n  }}\n}};\n"


def css(name: str) -> pathlib.Path | str:
    """The built style sheet of widget ``name``, or no style."""
    path = STATIC / f"{name}.css"
    return path if path.is_file() else ""
