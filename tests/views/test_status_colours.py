"""One palette of statuses: the kernel's static HTML (``views/colours.py``) draws every status's badge in the
colours the live views take from ``labextension/src/widgets/status.css``, status by status (``STATUSES``)."""

from __future__ import annotations

import re

from mcp_tasks_jupyter.tasks.status import STATUSES
from mcp_tasks_jupyter.views.colours import STATUS_COLOURS, badge_colours
from mcp_tasks_jupyter.views.html import status_badge_html
from tests.support.paths import REPO_ROOT

CSS = (REPO_ROOT / "labextension" / "src" / "widgets" / "status.css").read_text()


def _hex(colour: str) -> str:
    """``#fff`` -> ``#ffffff``: one spelling of a colour."""
    colour = colour.strip().lower()
    if re.fullmatch(r"#[0-9a-f]{3}", colour):
        return "#" + "".join(c * 2 for c in colour[1:])
    return colour


def css_badges() -> dict[str, tuple[str, str]]:
    """(background, text) of each ``.mtj-badge.mtj-s-NAME`` rule, its ``var(--mtj-s-…)`` resolved in ``:root``."""
    without_comments = re.sub(r"/\*.*?\*/", "", CSS, flags=re.S)
    root = re.search(r":root\s*\{(.*?)\}", without_comments, re.S)
    assert root is not None, "status.css has no :root block"
    variables = dict(re.findall(r"(--mtj-s-[\w-]+)\s*:\s*([^;]+);", root.group(1)))
    badges: dict[str, tuple[str, str]] = {}
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", without_comments):
        names = re.findall(r"\.mtj-badge\.mtj-s-(\w+)", selectors)
        if not names:
            continue
        declared = dict(re.findall(r"([\w-]+)\s*:\s*var\((--mtj-s-[\w-]+)\)", body))
        colours = (_hex(variables[declared["background"]]), _hex(variables[declared["color"]]))
        badges.update(dict.fromkeys(names, colours))
    return badges


def test_every_status_has_the_same_badge_colours_in_the_kernel_and_the_front_end() -> None:
    front_end = css_badges()
    kernel = {status: (_hex(bg), _hex(fg)) for status, (bg, fg) in STATUS_COLOURS.items()}
    for status in STATUSES:
        assert status in front_end, f"status.css has no badge rule for {status!r}"
        assert status in kernel, f"views/colours.py has no colours for {status!r}"
        assert kernel[status] == front_end[status], (
            f"{status}: views/colours.py {kernel[status]}, status.css {front_end[status]}"
        )
    assert set(kernel) == set(STATUSES), "views/colours.py colours a status tasks/status.py does not know"


def test_a_badge_is_drawn_in_its_status_colours_and_an_odd_status_as_unknown() -> None:
    bg, fg = STATUS_COLOURS["queued"]
    assert f"background:{bg};color:{fg}" in status_badge_html("queued")
    assert badge_colours("no such status") == STATUS_COLOURS["unknown"]
    assert f"background:{STATUS_COLOURS['unknown'][0]};" in status_badge_html("<odd>")
