"""A saved notebook read without a kernel (issue 15, item 8): executed for real (nbclient, a kernel,
the demo server), saved, then converted to HTML by nbconvert with no kernel and nothing fetched. The
HTML shows each task's final status in words, its duration, its result (markdown rendered, the
sources as a table, the chart's image) and the board as a static table; no task output is left
saying it is still running.

The notebook is saved without widget state, as JupyterLab saves it by default (the widget manager's
``saveState`` is off): a notebook that keeps the widgets' state has nbconvert draw them with
scripts from a CDN instead, which needs the network (nbclient keeps it unless
``store_widget_state=False``)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbconvert import HTMLExporter

from tests.support import REPO_ROOT

CELL_TIMEOUT = 90
KERNEL_START = 60

CELLS = [
    "%load_ext mcp_tasks_jupyter",
    "%mcp_connect demo {sys.executable} -m mcp_tasks_jupyter.demo",
    "report = %mcp_task --wait demo:research topic=tides stage_seconds=0.2",
    'chart = %mcp_task --wait demo:make_chart values=[3,1,4,1,5] title="Digits" seconds=0.2',
    'bad = %mcp_task --wait demo:failing_job seconds=0.2 message="row 7 is malformed"',
    "slow = %mcp_task demo:slow_compute seconds=0.5 steps=5 label=bg",
    "await slow",
    "%mcp_tasks",
]


class Page(HTMLParser):
    """The text and tags of an HTML page, with the text inside each element of class ``cls``."""

    def __init__(self, source: str, cls: str) -> None:
        super().__init__(convert_charrefs=True)
        self.cls, self.depth, self.boxes, self.images = cls, 0, [], []
        self.feed(source)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "img":
            self.images.append(found.get("src") or "")
        if self.depth:
            self.depth += tag not in ("img", "br", "hr", "input", "meta", "link")
        elif tag == "div" and self.cls in (found.get("class") or "").split():
            self.depth = 1
            self.boxes.append("")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "img":  # <img/>: no element to close
            self.images.append(dict(attrs).get("src") or "")

    def handle_endtag(self, tag: str) -> None:
        if self.depth:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.depth:
            self.boxes[-1] += data


#: A loop of thirty tasks of one tool, told apart only by their label; every sixth (five) cancelled.
LOOP_CELLS = [
    "%load_ext mcp_tasks_jupyter",
    "%mcp_connect demo {sys.executable} -m mcp_tasks_jupyter.demo",
    "hs = []\nfor i in range(30):\n"
    "    h = %mcp_task demo:slow_compute seconds={60 if i % 6 == 0 else 0.3} steps=2 label=t{i}\n"
    "    hs.append(h)",
    "for h in hs[::6]:\n    await h.cancel()\nfor h in hs:\n    try:\n        await h\n"
    "    except Exception:\n        pass\nprint(sorted({h.status for h in hs}))",
]
LOOP_CELL = 2
CANCELLED = range(0, 30, 6)


def run_and_save(cells: list[str], path: Path) -> nbformat.NotebookNode:
    """Run ``cells`` in a new kernel (nbclient), save the notebook to ``path`` without widget state
    (as JupyterLab saves it) and read it back."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(code) for code in cells]
    NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        startup_timeout=KERNEL_START,
        kernel_name="python3",
        resources={"metadata": {"path": str(REPO_ROOT)}},
        store_widget_state=False,
    ).execute()
    nbformat.write(nb, path)
    return nbformat.read(path, as_version=4)


def test_a_saved_loop_of_thirty_tasks_as_html_tells_each_task_apart(tmp_path: Path):
    # issue 30, item 4: thirty big boxes, the five cancelled ones identical ("cancelled slow_compute on demo").
    saved = run_and_save(LOOP_CELLS, tmp_path / "loop.ipynb")
    assert saved.cells[-1].outputs[0].text == "['cancelled', 'completed']\n"
    outputs = saved.cells[LOOP_CELL].outputs
    assert len(outputs) == 30
    for i, output in enumerate(outputs):
        text = output.data["text/plain"]
        status = "cancelled" if i in CANCELLED else "completed"
        assert text.startswith(f"slow_compute label=t{i} seconds=") and f"on demo: {status}" in text, text

    html, _ = HTMLExporter().from_notebook_node(saved)
    assert Page(html, "mtj-summary").boxes == []  # no big boxes: the live view was one line each
    lines = [" ".join(text.split()) for text in Page(html, "mtj-compact-summary").boxes]
    assert len(lines) == 30, lines
    for i, line in enumerate(lines):
        seconds = 60 if i in CANCELLED else 0.3
        assert f"slow_compute label=t{i} seconds={seconds} steps=2" in line, line
    cancelled = [lines[i] for i in CANCELLED]
    assert all(line.startswith("cancelled slow_compute label=t") for line in cancelled), cancelled
    assert len({re.sub(r"· \d+\.\d s", "", line) for line in cancelled}) == 5, cancelled  # all different


def test_a_saved_notebook_as_html_shows_each_task_and_the_board(tmp_path: Path):
    saved = run_and_save(CELLS, tmp_path / "saved.ipynb")
    for index in (2, 3, 4, 5):  # one output per task, none of them still "working"
        outputs = saved.cells[index].outputs
        assert [o.output_type for o in outputs] == ["display_data"], index
        assert "working" not in outputs[0].data["text/plain"] and "running" not in outputs[0].data["text/plain"]

    html, _ = HTMLExporter().from_notebook_node(saved)  # no kernel; the notebook keeps no widget state
    summaries = Page(html, "mtj-summary").boxes
    assert len(summaries) == 4, summaries
    expected = [  # each task named by its arguments (issue 30, item 4), then its outcome
        ("completed research topic=tides stage_seconds=0.2 on demo ·", "Research report: tides"),
        ("completed make_chart values=[3,1,4,1,5] title=Digits seconds=0.2 on demo ·", "Digits: bar chart of 5"),
        ('tool error failing_job seconds=0.2 message="row 7 is malformed" on demo ·', "row 7 is malformed"),
        ("completed slow_compute label=bg seconds=0.5 steps=5 on demo ·", "bg: done in 5 steps"),
    ]
    for text, (head, outcome) in zip((" ".join(t.split()) for t in summaries), expected, strict=True):
        assert text.startswith(head) and outcome in text, text
    for text in summaries:
        assert re.search(r"· \d+\.\d s", text), text  # the duration
    # markdown rendered, the sources a table, the chart's image inline (nothing to fetch)
    assert re.search(r"<h1[^>]*>Research report: tides</h1>", html)
    assert re.search(r"<caption[^>]*>sources</caption>", html)
    assert [src[:22] for src in Page(html, "mtj-summary").images] == ["data:image/png;base64,"]
    # the board, a static table of the four tasks with their statuses in words
    (board,) = Page(html, "mtj-board-summary").boxes
    cells = "".join(board.split())  # the text of the cells, one after the other
    for row in (
        "completedresearchtopic=tidesstage_seconds=0.2demo",  # status, tool, arguments' label, server
        "completedmake_chartvalues=[3,1,4,1,5]title=Digitsseconds=0.2demo",
        'toolerrorfailing_jobseconds=0.2message="row7ismalformed"demo',
        "completedslow_computelabel=bgseconds=0.5steps=5demo",
    ):
        assert row in cells, board
    assert "row 7 is malformed" in board
    assert "Loading widget" not in html and "Error displaying widget" not in html
