"""A sweep in an RO-Crate: one action whose parts are its items' actions (issue 34, item 1).

A ``client.map`` / ``%mcp_map`` sweep (``index/sweeps.py``) is one ``OrganizeAction`` (``#sweep-ID``), as
the Workflow Run Crate profiles describe an engine's run of many steps: its ``instrument`` is
mcp-tasks-jupyter (what sent the calls, at most ``limit`` at once), its ``object`` the ``CreateAction`` of
each of its items that is in the crate, in the sweep's order (its parts), its ``result`` a file of the
crate, ``sweeps/sweep-N.json``, that lists every item in order (its arguments as the index keeps them:
redacted, a secret only as its keyed hash; its state, how often it was sent, its task id, its status, a
note such as "sent again", how the sweep's latest resume found it, and the action that is its task). Its
``startTime`` is when the sweep was recorded, its ``endTime`` when its last item ended, and it claims
``CompletedActionStatus`` only when the index holds every item ended ``completed``; a finished sweep with
any other item is Failed and says how many ended how; an unfinished one claims neither. Its description
counts the items by state, those sent again, and how its latest resume found them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ..index.sweeps import CAME_BACK, ENDED, ITEM_STATES, ItemRow, SweepRow, SweepStore, containing
from ..index.task_index import TaskIndex, TaskRecord, canonical_json
from ..protocol.task_state import COMPLETED
from ..redact import redact_arguments, scrub_data
from ..release import __version__

if TYPE_CHECKING:
    from .crate import CrateGraph

#: A sweep as the index keeps it: its row and its items in order.
RecordedSweep = tuple[SweepRow, list[ItemRow]]

SCHEMA = "http://schema.org/"
#: How a resume found an item (``index/sweeps.CAME_BACK``), in the words of the resumed view.
CAME_BACK_WORDS = {
    "before": "ended before",
    "reattached": "re-attached",
    "lost": "sent again (the server lost them)",
    "in_doubt": "sent again (in flight when the kernel stopped)",
    "fresh": "sent fresh",
}
#: The engine that ran a sweep: this package, by its PyPI release (``pip install mcp-tasks-jupyter``).
ENGINE_URL = f"https://pypi.org/project/mcp-tasks-jupyter/{__version__}/"


def sweeps_of(index: TaskIndex | None, records: Sequence[TaskRecord]) -> list[RecordedSweep]:
    """The sweeps (oldest first) that any of ``records`` is an item of, read from ``index``."""
    if index is None or not records:
        return []
    store = SweepStore(index.location, index.describe())
    try:
        return store.now(containing, [r.id for r in records])
    finally:
        store.close()


def sweep_actions(
    graph: CrateGraph,
    sweeps: Sequence[RecordedSweep],
    actions: Mapping[int, dict[str, str]],
    people: Mapping[int, dict[str, str]],
    when: Callable[[float | None], str | None],
) -> list[dict[str, str]]:
    """Each sweep as an ``OrganizeAction`` over its items' actions (``actions``: a record's id -> its
    action; ``people``: a record's id -> its agent; ``when``: epoch seconds as the crate writes times)."""
    made = []
    for number, (sweep, items) in enumerate(sweeps, 1):
        parts = [actions[i.record] for i in items if i.record is not None and i.record in actions]
        if not parts:
            continue
        ident = f"#sweep-{quote(sweep.id, safe='')}"
        first = next(i.record for i in items if i.record is not None and i.record in actions)
        properties: dict[str, Any] = {
            "@type": "OrganizeAction",
            "name": f"a sweep of {sweep.tool} on {sweep.server_name}: {sweep.total:,} items, "
            f"at most {sweep.limit} at once",
            "description": _description(sweep, items, len(parts)),
            "instrument": _engine(graph),
            "agent": people[first],
            "object": parts,
            "result": _plan(graph, number, sweep, items, actions),
            "startTime": when(sweep.created_at),
        }
        status = _status(sweep, items)
        if sweep.finished_at is not None:
            properties["endTime"] = when(sweep.finished_at)
        if status:
            properties["actionStatus"] = SCHEMA + status
        if status == "FailedActionStatus":
            properties["error"] = _how_they_ended(items)
        made.append(graph.add(ident, properties))
    return made


def _status(sweep: SweepRow, items: list[ItemRow]) -> str | None:
    """Completed only when the index holds every item ended completed; None while the sweep is unfinished."""
    if sweep.finished_at is None:
        return None
    if len(items) == sweep.total and all(i.state == ENDED and i.status == COMPLETED for i in items):
        return "CompletedActionStatus"
    return "FailedActionStatus"


def _how_they_ended(items: list[ItemRow]) -> str:
    ended = Counter(i.status or "unknown" for i in items if i.state == ENDED)
    unended = sum(1 for i in items if i.state != ENDED)
    words = [f"{n:,} {status}" for status, n in sorted(ended.items())]
    if unended:
        words.append(f"{unended:,} never ended")
    return f"not every item completed: {', '.join(words)}"


def _description(sweep: SweepRow, items: list[ItemRow], in_crate: int) -> str:
    states = Counter(i.state for i in items)
    again = Counter(i.note for i in items if i.note)
    parts = [
        f"{sweep.total:,} calls of the tool {sweep.tool} on the MCP server {sweep.server_name}, run by "
        f"mcp-tasks-jupyter at most {sweep.limit} at once, each item a task",
        "items by state: " + ", ".join(f"{states[s]:,} {s}" for s in ITEM_STATES if states[s]),
        f"{in_crate:,} of its items' tasks are actions of this crate (its object, in the sweep's order)",
    ]
    parts += [f"{n:,} {note}" for note, n in sorted(again.items())]
    came = Counter(i.came_back for i in items if i.came_back)
    if came:
        parts.append(
            "its latest resume found "
            + ", ".join(f"{came[kind]:,} {CAME_BACK_WORDS[kind]}" for kind in CAME_BACK if came[kind])
        )
    if sweep.notebook:
        parts.append(f"started from the notebook {sweep.notebook}")
    return "; ".join(parts)


def _engine(graph: CrateGraph) -> dict[str, str]:
    def make(_number: int) -> str:
        return graph.add(
            ENGINE_URL,
            {
                "@type": "SoftwareApplication",
                "name": "mcp-tasks-jupyter",
                "softwareVersion": __version__,
                "url": ENGINE_URL,
                "description": "the Jupyter client of MCP tasks that sent the sweep's calls and recorded them",
            },
        )["@id"]

    return graph.once(("engine",), make)


def _plan(
    graph: CrateGraph, number: int, sweep: SweepRow, items: list[ItemRow], actions: Mapping[int, dict[str, str]]
) -> dict[str, str]:
    listed = [
        {
            "position": i.position,
            "arguments": redact_arguments(i.arguments),
            "state": i.state,
            "sends": i.sends,
            "task_id": i.task_id,
            "status": i.status,
            "note": i.note,
            "came_back": i.came_back,
            "action": actions[i.record]["@id"] if i.record is not None and i.record in actions else None,
        }
        for i in items
    ]
    data = canonical_json(scrub_data({"sweep": sweep.id, "tool": sweep.tool, "items": listed})).encode("utf-8")
    return graph.file(
        f"sweeps/sweep-{number}.json",
        data,
        {
            "@type": "File",
            "name": f"the items of sweep {sweep.id}",
            "encodingFormat": "application/json",
            "description": "every item of the sweep in order, as the task index keeps it: its arguments "
            "(secret-looking values redacted, or kept only as a keyed hash), state, sends, task id, status, "
            "note, and the action of its task in this crate",
        },
    )


__all__ = ["RecordedSweep", "sweep_actions", "sweeps_of"]
