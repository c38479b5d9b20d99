"""``%mcp_map`` / ``%%mcp_map``: one tool over many argument mappings, at most ``--limit`` tasks
running at once (``client.map``), shown as one grouped widget (``batch_display.show_batch``).

The grammar is in ``map_args``; the helpers (parsing, expansion, runtime jobs) are
:class:`~.magics.MCPMagics`'s, which this class extends with the one magic.
"""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import line_cell_magic, magics_class, needs_local_scope, no_var_expand

from ..index import sweeps
from ..index.task_index import TaskIndex
from ..running.batch import Batch
from ..running.sweep import store_of
from .batch_display import show_batch
from .magic_args import ArgumentError
from .magics import MCPMagics
from .map_args import check_items, parse_map_line
from .pending import Pending


@magics_class
class MapMagics(MCPMagics):
    """The ``%mcp_map`` magic (registered beside :class:`MCPMagics` by ``%load_ext``)."""

    @no_var_expand
    @line_cell_magic
    @needs_local_scope
    def mcp_map(self, line: str, cell: str | None = None, local_ns: dict[str, Any] | None = None) -> Pending:
        """Start one task per argument mapping, at most N running at once; the cell gets the Batch
        (a list of TaskHandles, in order) at once and shows one widget for all of them.

        Usage::

            batch = %%mcp_map [OPTIONS] NAME:TOOL
            <a JSON array or YAML list of argument mappings>

            batch = %mcp_map [OPTIONS] NAME:TOOL --over EXPR

            batch = %mcp_map [-o VAR] [--limit N] --resume SWEEP_ID

            OPTIONS: [-o VAR] [--limit N] [--answers JSON] [--ttl MS] [--cache] [--resume | --restart]

        ``--over EXPR``  everything after ``--over`` is a Python expression, evaluated in the
                         notebook, giving the mappings: ``--over [{"topic": t} for t in topics]``.
        ``-o VAR``       once every task has ended, bind the list of what each ended with, in
                         order: its ToolResult, or its error (TaskFailed, TaskCancelled, ...) in
                         its place (as ``mtj.gather(..., return_exceptions=True)`` gives them).
        ``--limit N``    at most N tasks run at once (default 8); the others wait ``queued`` and
                         each is sent when another ends.
        ``--answers J``  a JSON mapping accepted as the answer when a task asks a question.
        ``--ttl MS``     how long the server should keep each task, in milliseconds.
        ``--cache``      a stored result of an identical earlier call comes back without a call.
        ``--resume``     continue the sweep of these items (the task index records every sweep) where
                         it stopped, in a new kernel too: what ended comes from its record, what was
                         sent is re-attached, what was queued is sent; nothing is sent twice but a task
                         the server lost or whose send was cut by the kernel's death (said so).
                         ``--resume SWEEP_ID`` names one sweep (``%mcp_tasks`` lists them). Without
                         it, the same line run again resumes an unfinished sweep and says so.
        ``--restart``    start the sweep anew, whatever was recorded.

        The widget shows the counts by status, one progress bar for the whole batch, the elapsed
        time and an estimate of what is left, the failed and the slowest tasks, and Cancel all
        (queued tasks are then never sent). ``await batch.gather()`` waits for the results.
        """
        call = self._parse(parse_map_line, line, body=cell, expand=self._expander(local_ns))
        items = call.items if call.over is None else self._evaluate(call.over, local_ns)
        if items is None and call.tool:
            raise UsageError("%mcp_map: no argument mappings")
        runtime = self.runtime
        user_ns = self.user_ns

        async def create() -> Batch:
            server, tool = call.server, call.tool
            if not tool:  # --resume SWEEP_ID: the sweep says which server and tool
                server, tool = await _sweep_target(runtime.task_index(), str(call.resume))
            client = runtime.client(server)
            batch = await client.map(
                tool,
                items,
                limit=call.limit if call.limit_given else None,
                answers=call.answers,
                ttl=call.ttl,
                cache=call.cache,
                resume=call.resume,
                restart=call.resume is False,
            )
            for handle in batch:
                runtime.track(handle)
            if call.out is not None:
                out = call.out

                def bind(done: Batch) -> None:
                    user_ns[out] = done.results()

                batch.on_end(bind)
            return batch

        async def then(batch: Batch) -> Batch:
            if batch.said:
                print(batch.said)
            show_batch(batch)
            return batch

        what = f"%mcp_map {call.label}"
        return Pending(what, self._job(create(), f"mcp-map {call.label}"), then, quiet=True, redact=runtime.redact)

    def _evaluate(self, expression: str, local_ns: dict[str, Any] | None) -> list[dict[str, Any]]:
        """The mappings ``--over EXPR`` gives, evaluated in the notebook's namespace."""
        namespace = {**self.user_ns, **(local_ns or {})}
        try:
            value = eval(expression, namespace)
        except Exception as exc:
            raise UsageError(f"%mcp_map --over: {type(exc).__name__}: {exc}") from None
        try:
            return check_items(value)
        except ArgumentError as exc:
            raise UsageError(f"%mcp_map --over {expression}: {exc}") from None


async def _sweep_target(index: TaskIndex | None, sweep_id: str) -> tuple[str, str]:
    """(connection name, tool) of the sweep ``sweep_id`` in ``index``."""
    if index is None:
        raise UsageError("%mcp_map --resume: there is no task index (MTJ_INDEX=off)")
    found = await store_of(index).call(sweeps.find, sweep_id, "", "", None)
    if found is None:
        raise UsageError(f"%mcp_map --resume: no sweep {sweep_id!r} in the task index {index.describe()}")
    return found.server_name, found.tool


__all__ = ["MapMagics"]
