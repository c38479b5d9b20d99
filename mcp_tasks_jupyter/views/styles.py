"""The inline styles of the static HTML (a saved summary, a task's rich display, a board's table): no
stylesheet reaches a saved notebook on GitHub or in nbconvert, so each element carries its own.

JupyterLab's theme variables where there are some (the light theme's colours elsewhere): a summary
shown in a dark JupyterLab (an untrusted notebook) has no white boxes. The preview's byte costs
(``preview.py``) are measured from markup drawn with these: changing one changes them with it.
"""

from __future__ import annotations

#: The box around a task, a summary, a result, a board.
BOX = (
    "font-family:var(--jp-ui-font-family,system-ui,-apple-system,'Segoe UI',sans-serif);font-size:13px;"
    "line-height:1.4;border:1px solid var(--jp-border-color1,#d0d7de);border-radius:6px;padding:6px 10px;"
    "margin:2px 0;max-width:100%"
)
#: Preformatted text: a result's text, a failure's words.
PRE = (
    "white-space:pre-wrap;word-break:break-word;margin:4px 0;padding:4px 6px;"
    "background:var(--jp-layout-color2,#f6f8fa);border-radius:4px;max-height:24em;overflow:auto;font-size:12px"
)
#: Words of our own beside a server's: notes, "on", durations.
MUTED = "color:var(--jp-ui-font-color2,#57606a)"
#: A compact summary: one line, as the live compact view (no box: thirty of them read as a list).
LINE = (
    "font-family:var(--jp-ui-font-family,system-ui,-apple-system,'Segoe UI',sans-serif);font-size:13px;"
    "line-height:20px;padding:1px 4px;max-width:100%"
)
ONE_LINE = "white-space:nowrap;overflow:hidden;text-overflow:ellipsis"
#: A table's cell.
CELL = "border:1px solid var(--jp-border-color1,#d0d7de);padding:2px 6px;text-align:left;vertical-align:top"

__all__ = ["BOX", "CELL", "LINE", "MUTED", "ONE_LINE", "PRE"]
