"""Showing tasks in a notebook: one output per task, the live widget and its static summary together.

``show_task(handle)`` displays one output (with a display id) whose mime bundle holds:

* the live :class:`~.widgets.TaskWidget` (``application/vnd.jupyter.widget-view+json``), which a front
  end with the kernel draws, and so shows one box;
* a static summary (``text/html`` + ``text/plain``) for places without a kernel (a saved notebook on
  GitHub or nbviewer, nbconvert HTML): what such places draw instead of the widget (nbconvert leaves out
  a widget whose state the notebook does not keep).

When the task ends the output is updated in place with the same widget and the final summary, so a
notebook saved after its tasks finished shows their outcome and keeps no stale ``text/plain`` such as
``<TaskHandle ... working>``.

The summary names the task by its arguments as the live views do (``labels.arguments_label``), keeps
the questions the task asked and how each was answered, and is one line where the live view was
(``compact``: a loop of thirty tasks saves thirty lines, not thirty boxes). Its text/plain is
deterministic: ``slow_compute label=t3 on demo: running…`` at first, then ``slow_compute label=t3 on
demo: completed — <first line of the result>`` (and a line per question: ``  asked: … → …``); no ids,
times or durations, so nbval can compare it. The duration appears only in the HTML (in
``<span class="mtj-duration">``, for an nbval sanitize pattern), because nbval also compares text/html.

nbval does not apply ``update_display_data``: a cell that shows a task still running compares its
*first* summary ("running…") with the saved final one. Give such cells ``# NBVAL_IGNORE_OUTPUT``, or
``await`` the task before showing it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape as html_escape
from typing import Any

from ..tasks.handle import TaskHandle
from ..views.html import compact_summary_html, running_html, summary_html
from ..views.text import running_line, summary_line, summary_text, task_text
from ..views.view import view_of


def show_task(handle: TaskHandle, *, compact: bool = False, app: bool = True) -> None:
    """Display ``handle`` below the current cell: one output holding the live widget (on one line
    with ``compact``) and a static summary (for places without a kernel), updated when the task ends.

    A tool with an MCP Apps view (``Tool.ui``) on a connection that draws apps gets its view under the
    task's line, in the same output (``app=False``, ``--no-app``: the plain result only). The saved summary
    then says the view was shown live (a saved notebook never runs a view by itself) and, when the task has a
    record in the index, how to draw it again (``mtj.redraw_app(RECORD)``, which the labextension's button runs).

    Outside IPython it prints the one-line summary instead.
    """
    shell = current_shell()
    if shell is None:
        seen = view_of(handle)
        print(summary_line(seen) if seen.done else task_text(seen))
        return
    from IPython.display import display

    from .widgets import bind, compact as compact_widget

    widget = compact_widget(handle) if compact else bind(handle)
    view = None if compact or not app else _app_view(handle)
    if view is None:
        output = display(task_output(widget), raw=True, display_id=True)
        if not handle.done():
            _update_when_done(shell, handle, widget, output)
        return
    from ipywidgets import VBox  # type: ignore[import-untyped]

    box = VBox([widget, view])
    view.box = box  # a task the view starts gets its own line in the box
    output = display(app_output(box, handle, view.uri), raw=True, display_id=True)
    if not handle.done():
        _update_when_done(shell, handle, box, output, lambda: app_output(box, handle, view.uri))


def _app_view(handle: TaskHandle) -> Any:
    """The MCP Apps view of ``handle``'s tool on its connection (None: no view, or apps are off there)."""
    from .runtime import get_runtime
    from .widgets.app_widget import app_view

    connection = get_runtime().connections.get(handle.server)
    return None if connection is None else app_view(handle, connection.client)


def app_output(box: Any, handle: TaskHandle, uri: str) -> dict[str, Any]:
    """The mime bundle of a task shown with its app view: the box (task line and view) and the summary,
    with a note that the view was shown live (it is never run from a saved notebook)."""
    summary = summary_bundle(handle)
    note = f"an app view ({uri}) was shown live here; run the cell with a kernel to draw it again"
    row = handle.index_row
    record = ""
    if row is not None:
        # The labextension offers a button that runs this in the notebook's kernel (``savedviews.ts``).
        note += f", or mtj.redraw_app({row})"
        record = f" data-mtj-record='{int(row)}'"
    return widget_output(
        box,
        {
            "text/plain": f"{summary['text/plain']}\n  {note}",
            "text/html": f"{summary['text/html']}<div class='mtj-app-note'{record}>{html_escape(note)}</div>",
        },
    )


def install(shell: Any) -> None:
    """Show a :class:`TaskHandle` that a cell displays (``h`` as its last line, ``display(h)``) the
    way :func:`show_task` does: a task still running gets its live view, whose saved summary is
    brought up to date when it ends, not a snapshot frozen at the moment it was shown."""
    shell.display_formatter.ipython_display_formatter.for_type(TaskHandle, _display_handle)


def uninstall(shell: Any) -> None:
    """Undo :func:`install`: handles show their own snapshot again."""
    shell.display_formatter.ipython_display_formatter.type_printers.pop(TaskHandle, None)


def _display_handle(handle: TaskHandle) -> None:
    if not handle.done():
        show_task(handle)
        return
    from IPython.display import display

    display(handle._repr_mimebundle_(), raw=True)  # a finished task: its final snapshot is the truth


def task_output(widget: Any) -> dict[str, Any]:
    """The mime bundle of a task's one output: ``widget``'s view and its handle's static summary (on
    one line when the widget is the one-line view)."""
    from .widgets.compact_widget import CompactTaskWidget

    return widget_output(widget, summary_bundle(widget.handle, compact=isinstance(widget, CompactTaskWidget)))


def widget_output(widget: Any, summary: dict[str, str]) -> dict[str, Any]:
    """One output's mime bundle: ``widget``'s view (for a front end with the kernel) and ``summary``
    (text/html and text/plain for places without one; its ``text/plain`` replaces the widget's)."""
    bundle = widget._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    return {**(data or {}), **summary}


def show_board(
    handles: Sequence[TaskHandle], *, server: str | None = None, status: str | None = None, history: bool = False
) -> None:
    """Display a live board of ``handles`` (and every task started later), with the task index's
    history behind its toggle (:func:`make_board`), its filters pre-set to server name ``server``
    and status ``status`` (the person can change them); ``history`` shows the history at first.

    Outside IPython it prints one line per task that passes the filters.
    """
    shell = current_shell()
    if shell is None:
        for handle in handles:
            if (server is None or handle.server == server) and (status is None or handle.status == status):
                print(summary_line(view_of(handle)))
        return
    from IPython.display import display

    board = make_board(handles, server=server, status=status, history=history)
    output = display(board, display_id=True)
    # The saved table follows the tasks: replaced each time every task on the board has ended.
    board.publish_to(lambda: update_output(shell, output, widget_output(board, {}), board))


async def _sweeps_into(board: Any, runtime: Any, index: Any) -> None:
    """The task index's sweeps on ``board`` (its sweeps list; a failure is a note on the board)."""
    try:
        await board.load_sweeps(index)
    except Exception as exc:
        board.add_note(f"the sweeps of {index.describe()} could not be read: {runtime.redact(str(exc))}")


def make_board(
    handles: Sequence[TaskHandle] | None = None,
    *,
    server: str | None = None,
    status: str | None = None,
    runtime: Any = None,
    listing: bool = True,
    history: bool = False,
    follow: bool = True,
) -> Any:
    """A :class:`~.widgets.BoardWidget` of this kernel's tasks, with a history behind a toggle,
    de-duplicated by (server, task id):

    1. ``handles`` (default: the runtime's), live; with ``follow`` every task the runtime tracks
       later joins the board (a board on screen picks up the tasks started after it);
    2. history: the task index's records of each connection that are not live handles (earlier
       kernels, other notebooks: each row says which), with their last known status;
    3. history, when ``listing``: for each connection whose dialect offers ``tasks/list``, the
       server's tasks known neither way (tool "?"), fetched once by a background job of the
       runtime (in ``board.jobs``); a failure becomes a note on the board, never an exception.

    ``server``/``status`` pre-select the board's filters; ``history`` shows the history at first.
    """
    from ..index.task_index import notebook_path
    from .runtime import get_runtime
    from .widgets import BoardWidget

    runtime = get_runtime() if runtime is None else runtime
    handles = list(runtime.handles if handles is None else handles)
    board = BoardWidget(handles, select_server=server, select_status=status, show_history=history)
    if follow:
        board.follow(runtime)
    connections = list(runtime.connections.values())
    # Row ids are random 63-bit numbers (index/task_index.py): the same id is the same record, whatever index.
    live_rows = {h.index_row for h in handles if getattr(h, "index_row", None) is not None}
    notebook = notebook_path()
    for connection in connections:
        index = getattr(connection.client, "index", None)
        if index is None:
            continue
        try:
            records = index.records(connection.client.target)
        except Exception as exc:  # an unreadable index must not hide the live tasks
            board.add_note(f"the task index {index.describe()} could not be read: {runtime.redact(str(exc))}")
            continue
        for record in records:
            if record.id in live_rows:
                continue
            board.add_static(
                tool=record.tool,
                server=connection.name,
                status=record.status,
                message=record.status_message,
                task_id=record.task_id,
                created_at=record.created_at,
                arguments=record.arguments,
                origin=_origin(record.notebook, notebook),
                started=record.started_at,
                finished=record.finished_at,
            )
    board.refresh()  # the index rows are part of the first picture
    sweep_index = runtime.task_index() if hasattr(runtime, "task_index") else None
    if sweep_index is not None:
        try:
            board.sweeps_job = runtime.spawn(_sweeps_into(board, runtime, sweep_index), name="board sweeps")
        except RuntimeError as exc:  # no running event loop
            board.add_note(f"the task index's sweeps were not read: {exc}")
    if listing:
        for connection in connections:
            if getattr(connection.client.dialect, "supports_list", False):
                try:
                    job = runtime.spawn(
                        _list_into(board, runtime, connection.name, connection.client),
                        name=f"mcp-tasks-list {connection.name}",
                    )
                except RuntimeError as exc:  # no running event loop
                    board.add_note(f"tasks/list on {connection.name} was not asked: {exc}")
                else:
                    board.jobs.append(job)
    return board


def _origin(recorded: str | None, here: str | None) -> str:
    """Where a history row comes from, in words."""
    if recorded == here:
        return "earlier kernel"
    if recorded is None:
        return "no notebook"
    return recorded.replace("\\", "/").rsplit("/", 1)[-1]


async def _list_into(board: Any, runtime: Any, name: str, client: Any) -> None:
    """Add the server's tasks (``tasks/list``) to ``board``; a failure becomes a note on it."""
    try:
        states = await client.list_tasks()
    except Exception as exc:
        text = " ".join(str(exc).split()) or type(exc).__name__
        board.add_note(f"tasks/list on {name} failed: {runtime.redact(text)}")
        return
    for state in states:
        board.add_static(
            tool=None,
            server=name,
            status=state.status,
            message=state.status_message,
            task_id=state.task_id,
            created_at=state.created_at,
            updated_at=state.last_updated_at,
            refresh=True,
            origin="the server's list",
        )


def summary_bundle(handle: TaskHandle, *, compact: bool = False) -> dict[str, str]:
    """The static summary's mime bundle: "running…" until the task ends, then its outcome; on one
    line with ``compact`` (as the live view was)."""
    seen = view_of(handle)
    if not seen.done:
        return {"text/plain": running_line(seen), "text/html": running_html(seen, compact=compact)}
    html = compact_summary_html(seen) if compact else summary_html(seen)
    return {"text/plain": summary_text(seen), "text/html": html}


def _update_when_done(
    shell: Any, handle: TaskHandle, widget: Any, output: Any, bundle: Callable[[], dict[str, Any]] | None = None
) -> None:
    """Replace ``output`` by ``widget``'s final output (or ``bundle()``) when ``handle`` ends (see
    :func:`update_output`)."""

    def on_change(h: TaskHandle) -> None:
        if h.done():
            unsubscribe()
            update_output(shell, output, bundle() if bundle else task_output(widget), widget)

    unsubscribe = handle.on_change(on_change)


def update_output(shell: Any, output: Any, bundle: dict[str, Any], widget: Any = None) -> None:
    """Replace ``output`` (a display handle) by ``bundle``, now and once more after the next cell.

    The first update carries the parent header of the job that finished the tasks (usually an older
    cell); JupyterLab applies it by display id whatever its parent. Tools that read only the
    messages of the cell they are running (nbclient, papermill) drop it, so the same update is sent
    again from ``post_run_cell``, inside whichever cell runs next, with ``widget``'s whole state
    (such tools save the widget state they saw: without it a reopened notebook draws the widget as
    it was first shown, "working", "0/50 ended").
    """
    output.update(bundle, raw=True)

    def again(*_: Any) -> None:
        shell.events.unregister("post_run_cell", again)
        if widget is not None and getattr(widget, "comm", None) is not None:
            widget.send_state()
        output.update(bundle, raw=True)

    shell.events.register("post_run_cell", again)


def current_shell() -> Any:
    """The running IPython shell (None outside IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return None
    return get_ipython()
