"""The npm build for hatch-jupyter-builder (``build-function`` in pyproject.toml): ``npm install`` and
``npm run build:prod`` in labextension/ when one of the outputs (the JupyterLab extension, the widget
bundles) is missing or older than a source, so ``pip install -e .``, ``pip wheel .`` and ``make setup``
rebuild exactly when needed. In an unpacked sdist the outputs it carries are used as they are (a wheel
from an sdist needs no node).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: What the build reads (besides node_modules).
SOURCES = ["src", "schema", "style", "scripts", "package.json", "package-lock.json", "tsconfig.json",
           "tsconfig.widgets.json"]
WIDGETS = ["task", "board", "compact", "question", "batch", "signin", "appview"]
#: Widget modules with no style of their own (the MCP Apps views' code, sent once per kernel).
UNSTYLED = ["apphost"]
#: What the build writes and the wheel ships (pyproject.toml's ensured-targets: the same list).
OUTPUTS = ["mcp_tasks_jupyter/labextension/package.json", "mcp_tasks_jupyter/labextension/static/style.js",
           *(f"mcp_tasks_jupyter/jupyter/widgets/static/{name}.{ext}"
             for name in WIDGETS for ext in ("js", "css")),
           *(f"mcp_tasks_jupyter/jupyter/widgets/static/{name}.js" for name in UNSTYLED)]

log = logging.getLogger("hatch_jupyter_builder")


def build(target_name: str, version: str, **kwargs: Any) -> None:
    """hatch-jupyter-builder's npm_builder (``kwargs``: path, build_cmd, npm), forced when the outputs
    are stale, skipped when they are current."""
    reason = why_build(ROOT)
    if reason is None:
        log.info("labextension: the built extension and widget bundles are current")
        return
    log.info("labextension: building (%s)", reason)
    from hatch_jupyter_builder import npm_builder  # type: ignore[import-not-found]  # only in the build env

    npm_builder(target_name, version, force=True, **kwargs)


def why_build(root: Path) -> str | None:
    """Why the outputs under ``root`` need a build, or None when they are current."""
    outputs = [root / name for name in OUTPUTS]
    missing = [str(path.relative_to(root)) for path in outputs if not path.is_file()]
    if missing:
        return f"missing: {', '.join(missing)}"
    if (root / "PKG-INFO").is_file():
        return None  # an unpacked sdist: its outputs were built with it
    oldest = min(path.stat().st_mtime for path in outputs)
    for name in SOURCES:
        newer = _newer_file(root / "labextension" / name, oldest)
        if newer is not None:
            return f"{newer.relative_to(root)} is newer than the outputs"
    return None


def _newer_file(path: Path, cutoff: float) -> Path | None:
    if path.is_file():
        return path if path.stat().st_mtime > cutoff else None
    for child in path.rglob("*") if path.is_dir() else ():
        if child.is_file() and child.stat().st_mtime > cutoff:
            return child
    return None
