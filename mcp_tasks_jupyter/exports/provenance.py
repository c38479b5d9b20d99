"""Provenance: what each task's result rests on, exported from the task index as JSON Lines or CSV.

One row per task (:func:`provenance_row`, the columns in :data:`COLUMNS`): the server's identity
(connection name, target as shown, transport, the software and version it reported, protocol, task
dialect), the tool, its arguments (values of secret-looking keys redacted, as the index keeps them),
every question the server asked and how it was answered (``source``: answers / handler / person / no
handler, ``action``, ``content``: the values given), the server's created time and this client's start
and finish times (ISO 8601, UTC), the outcome (``status``: a tool error is ``error``, a declined
question that ended the task ``declined``, never ``completed``) beside the server's own last status
(``server_status``), its message and the error, the result's SHA-256 and size (of its canonical JSON:
sorted keys, no spaces, UTF-8, as the index stores it), the notebook it came from, and who started it
(``username``, ``hostname``) and, when they named themselves, the person (``author``: ``name``,
``orcid``, ``affiliation``; ``index/author.py``); a task that drew an MCP Apps view names it and what it
called (``app_view``: ``uri``, ``calls``, ``more``), and a task a view started names that view
(``started_by``: ``view``, ``tool``, ``record``, ``task_id``; both as ``index/view_record.py`` keeps them).
A task that is a sweep's item (``%mcp_map``, ``index/sweeps.py``) names the sweep (``sweep``), its place
(``sweep_item``), when it was sent again after a restart, why (``sent_again``), and how the sweep's latest
resume found it (``came_back``: ``before``, ``reattached``, ``lost``, ``in_doubt``, ``fresh``; empty for a
sweep never resumed): counted per sweep, what its resumed view says.
A cached handle exports the record whose result it reused, with ``cached`` true.

``export(what, path)``: ``what`` is handles (or records), or a filter (``{"status": ..., "server":
..., "notebook": ..., "tool": ...}``, None for every record). ``.csv`` writes CSV (lists and mappings
as JSON text), anything else JSON Lines. Pure stdlib: no pandas, no Jupyter.
"""

from __future__ import annotations

import csv
import hashlib
import json
import logging
import os
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..index.author import Author, current_author
from ..index.task_index import (
    TaskIndex,
    TaskRecord,
    canonical_json,
    default_index,
    notebook_path,
)
from ..redact import redact_arguments, safe_url, scrub_data
from ..tasks.status import shown_status

if TYPE_CHECKING:
    from ..tasks.handle import TaskHandle

log = logging.getLogger(__name__)

#: The columns of an export, in order (CSV header; the keys of every JSON Lines row).
COLUMNS = (
    "record",
    "task_id",
    "server",
    "target",
    "transport",
    "server_software",
    "server_version",
    "protocol",
    "dialect",
    "tool",
    "arguments",
    "questions",
    "created_at",
    "started_at",
    "finished_at",
    "duration_s",
    "status",
    "server_status",
    "status_message",
    "error",
    "cached",
    "result_sha256",
    "result_bytes",
    "notebook",
    "out_var",
    "username",
    "hostname",
    "author",
    "app_view",
    "started_by",
    "sweep",
    "sweep_item",
    "sent_again",
    "came_back",
)
#: The columns that hold lists or mappings (JSON text in CSV).
STRUCTURED = ("arguments", "questions", "author", "app_view", "started_by")
#: The keys a filter may hold.
FILTER_KEYS = ("status", "server", "notebook", "tool", "user")

Selection = Mapping[str, str | None] | Iterable["TaskHandle | TaskRecord"] | None


def iso(epoch: float | None) -> str | None:
    """Epoch seconds as ISO 8601 in UTC (None stays None)."""
    return None if epoch is None else datetime.fromtimestamp(epoch, UTC).isoformat()


def result_digest(raw: Mapping[str, Any] | None) -> tuple[str | None, int | None]:
    """(SHA-256 hex, size in bytes) of a result's canonical JSON; (None, None) without a result."""
    if raw is None:
        return None, None
    data = canonical_json(raw).encode("utf-8")
    return hashlib.sha256(data).hexdigest(), len(data)


def matching(
    records: Iterable[TaskRecord],
    *,
    status: str | None = None,
    server: str | None = None,
    notebook: str | None = None,
    tool: str | None = None,
    user: str | None = None,
) -> list[TaskRecord]:
    """The records that match every filter given (``server``: the connection name or the target;
    ``user``: who started the task)."""
    return [
        r
        for r in records
        if (status is None or r.status == status)
        and (server is None or server in (r.server_name, r.target))
        and (notebook is None or r.notebook == notebook or (r.notebook or "").endswith("/" + notebook))
        and (tool is None or r.tool == tool)
        and (user is None or r.username == user)
    ]


def provenance_row(record: TaskRecord, *, cached: bool = False) -> dict[str, Any]:
    """One export row of ``record`` (see :data:`COLUMNS`)."""
    sha, size = result_digest(record.result)
    duration = (
        round(record.finished_at - record.started_at, 3)
        if record.finished_at is not None and record.started_at is not None
        else None
    )
    row = {
        "record": record.id,
        "task_id": record.task_id,
        "server": record.server_name,
        "target": safe_url(record.target),
        "transport": record.transport,
        "server_software": record.server_software,
        "server_version": record.server_version,
        "protocol": record.protocol,
        "dialect": record.dialect,
        "tool": record.tool,
        "arguments": redact_arguments(record.arguments),
        "questions": redact_arguments(record.questions),
        "created_at": record.created_at,
        "started_at": iso(record.started_at),
        "finished_at": iso(record.finished_at),
        "duration_s": duration,
        "status": record.status,
        "server_status": record.server_status,
        "status_message": record.status_message,
        "error": record.error,
        "cached": cached,
        "result_sha256": sha,
        "result_bytes": size,
        "notebook": record.notebook,
        "out_var": record.out_var,
        "username": record.username,
        "hostname": record.hostname,
        "author": author_data(record.author),
        "app_view": record.app_view.as_data() if record.app_view is not None else None,
        "started_by": record.started_by.as_data() if record.started_by is not None else None,
        "sweep": None,
        "sweep_item": None,
        "sent_again": None,
        "came_back": None,
    }
    return dict(scrub_data(row))  # a secret registered in this process never leaves it


def author_data(author: Author | None) -> dict[str, str] | None:
    """An export's ``author``: the person's name, ORCID iD and affiliation where given (None: nobody named)."""
    if author is None:
        return None
    return {k: v for k, v in asdict(author).items() if v is not None}


def handle_row(handle: TaskHandle) -> dict[str, Any]:
    """An export row made from a handle alone (its task has no record: the index was off)."""
    raw = None
    error = None
    if handle.done():
        failure = handle.exception()
        if failure is None:
            raw = handle.result().raw
        else:
            error = f"{type(failure).__name__}: {failure}"
    sha, size = result_digest(raw)
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    row.update(
        task_id=handle.task_id,
        server=handle.server,
        tool=handle.tool,
        arguments=redact_arguments(handle.arguments or {}),
        questions=redact_arguments(handle.questions),
        created_at=handle.created_at,
        started_at=iso(handle.started),
        finished_at=iso(handle.finished),
        duration_s=round(handle.elapsed, 3) if handle.finished is not None else None,
        status=shown_status(handle),
        server_status=handle.server_status,
        status_message=handle.status_message,
        error=error,
        cached=handle.cached,
        result_sha256=sha,
        result_bytes=size,
        out_var=handle.out_var,
        author=author_data(current_author()),
        app_view=handle.app_view,
        started_by=handle.started_by,
    )
    return dict(scrub_data(row))


def rows(what: Selection = None, *, index: TaskIndex | None = None) -> list[dict[str, Any]]:
    """The export rows of ``what`` (see the module docstring), reading ``index`` (default: the one the
    kernels use, ``$MTJ_INDEX``)."""
    from ..tasks.handle import TaskHandle

    if index is None:
        index = default_index()
    if what is None or isinstance(what, Mapping):
        wanted = dict(what or {})
        unknown = sorted(set(wanted) - set(FILTER_KEYS))
        if unknown:
            raise UsageError(f"export: unknown filter key(s) {', '.join(unknown)} (use {', '.join(FILTER_KEYS)})")
        if index is None:
            raise UsageError("export: the task index is off (MTJ_INDEX=off): there are no records to export")
        return with_sweeps([provenance_row(r) for r in matching(index.records(), **wanted)], index)
    if isinstance(what, (TaskHandle, TaskRecord)):
        what = [what]
    out: list[dict[str, Any]] = []
    for item in what:
        if isinstance(item, TaskRecord):
            out.append(provenance_row(item))
        elif isinstance(item, TaskHandle):
            row = item.cached_from if item.cached else item.index_row
            record = index.get(row) if index is not None and row is not None else None
            out.append(provenance_row(record, cached=item.cached) if record else handle_row(item))
        else:
            raise UsageError(
                f"export: expected task handles, records or a filter mapping, got {type(item).__name__}"
            )
    return with_sweeps(out, index)


def with_sweeps(rows_: list[dict[str, Any]], index: TaskIndex | None) -> list[dict[str, Any]]:
    """``rows_`` with, on each row of a sweep's item (``%mcp_map``, issue 33), the sweep, the item's place
    and, when it was sent again, why (the server lost its task, or its send was in flight when its kernel
    stopped): what a resumed sweep's view says, item by item. Read in one query; an index whose sweeps
    cannot be read leaves the rows as they are."""
    from ..index.sweeps import SweepStore, record_items

    ids = [row["record"] for row in rows_ if row.get("record") is not None]
    if index is None or not ids:
        return rows_
    store = SweepStore(index.location, index.describe())
    try:
        found = store.now(record_items, ids)
    except Exception as exc:  # the records export all the same
        log.warning("the sweeps of %s could not be read for the export: %s", index.describe(), exc)
        return rows_
    finally:
        store.close()
    for row in rows_:
        item = found.get(row.get("record"))  # type: ignore[arg-type]
        if item is not None:
            row["sweep"], row["sweep_item"], row["sent_again"], row["came_back"] = item
    return rows_


def write(rows_: Iterable[Mapping[str, Any]], path: str | os.PathLike[str]) -> int:
    """Write export rows to ``path``: CSV when it ends in ``.csv``, else JSON Lines; how many rows."""
    target = Path(path)
    count = 0
    try:
        with target.open("w", encoding="utf-8", newline="") as out:
            if target.suffix.lower() == ".csv":
                writer = csv.DictWriter(out, fieldnames=COLUMNS, extrasaction="ignore")
                writer.writeheader()
                for row in rows_:
                    writer.writerow({k: _cell(row.get(k)) for k in COLUMNS})
                    count += 1
            else:
                for row in rows_:
                    out.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
                    count += 1
    except OSError as exc:
        raise UsageError(f"export: cannot write {target}: {exc.strerror or exc}") from None
    return count


def records(what: Selection = None, *, index: TaskIndex | None = None) -> list[TaskRecord]:
    """The index's records of ``what`` (see :func:`rows`), read after the index wrote what it keeps: a
    crate holds what the index holds. A handle whose task has no record is a UsageError."""
    from ..tasks.handle import TaskHandle

    if index is None:
        index = default_index()
    if index is None:
        raise UsageError("export: the task index is off (MTJ_INDEX=off): a crate is made from its records")
    index.flush()
    if what is None or isinstance(what, Mapping):
        wanted = dict(what or {})
        unknown = sorted(set(wanted) - set(FILTER_KEYS))
        if unknown:
            raise UsageError(f"export: unknown filter key(s) {', '.join(unknown)} (use {', '.join(FILTER_KEYS)})")
        return matching(index.records(), **wanted)
    if isinstance(what, (TaskHandle, TaskRecord)):
        what = [what]
    out: list[TaskRecord] = []
    for item in what:
        if isinstance(item, TaskRecord):
            out.append(item)
        elif isinstance(item, TaskHandle):
            row = item.cached_from if item.cached else item.index_row
            record = index.get(row) if row is not None else None
            if record is None:
                raise UsageError(
                    f"export: the task {item.tool} ({item.task_id or 'no id'}) has no record in the index"
                )
            out.append(record)
        else:
            raise UsageError(
                f"export: expected task handles, records or a filter mapping, got {type(item).__name__}"
            )
    return list({r.id: r for r in out}.values())


def export(
    what: Selection,
    path: str | os.PathLike[str],
    *,
    index: TaskIndex | None = None,
    license: str | None = None,
    name: str | None = None,
    description: str | None = None,
    publisher: str | None = None,
) -> int:
    """Write the provenance of ``what`` (handles, records, or a filter such as ``{"status":
    "completed"}``; None for every record) to ``path``: an RO-Crate for ``NAME.crate`` (a directory) or
    ``NAME.crate.zip`` (``exports/crate.py``: ``license``, ``name``, ``description``, ``publisher`` are
    its root's), else JSON Lines or CSV (by extension). Returns the number of tasks written. See
    :mod:`mcp_tasks_jupyter.exports.provenance` for the columns."""
    from .crate import is_crate_path, write_crate
    from .crate_sweeps import sweeps_of

    if is_crate_path(path):
        chosen = records(what, index=index)
        written = write_crate(
            chosen,
            Path(path),
            license=license,
            name=name,
            description=description,
            publisher=publisher,
            sweeps=sweeps_of(index or default_index(), chosen),
        )
        return written.tasks
    return write(rows(what, index=index), path)


def export_notebook(
    handles: Iterable[TaskHandle],
    index: TaskIndex | None,
    path: str | os.PathLike[str],
    *,
    server: str | None = None,
    notebook: str | None = None,
) -> int:
    """``%mcp_tasks --export PATH``: the provenance of ``handles`` (a kernel's tasks) and of the records
    of ``notebook`` (default: the one this process runs for, when Jupyter says) in ``index``, each task
    once, oldest first; only those of connection ``server`` when given. Returns how many were written."""
    notebook = notebook if notebook is not None else notebook_path()
    picked = [h for h in handles if server is None or h.server == server]
    out = rows(picked, index=index) if index is not None else [handle_row(h) for h in picked]
    if index is not None and notebook is not None:
        seen = {row["record"] for row in out if row["record"] is not None and not row["cached"]}
        earlier = matching(index.records(), notebook=notebook, server=server)
        out = [provenance_row(r) for r in earlier if r.id not in seen] + out
    return write(out, path)


def read_export(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The rows of an export written by :func:`export` (JSON Lines or CSV; CSV cells as text, the
    arguments and questions parsed back from JSON)."""
    target = Path(path)
    try:
        text = target.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"read_export: cannot read {target}: {exc.strerror or exc}") from None
    if target.suffix.lower() == ".csv":
        out = []
        for row in csv.DictReader(text.splitlines()):
            parsed: dict[str, Any] = dict(row)
            for key in STRUCTURED:
                if parsed.get(key):
                    parsed[key] = json.loads(parsed[key])
            out.append(parsed)
        return out
    try:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise UsageError(f"read_export: {target} is not JSON Lines: {exc.msg} at line {exc.lineno}") from None


def _cell(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return "" if value is None else value


__all__ = [
    "COLUMNS",
    "export",
    "export_notebook",
    "handle_row",
    "matching",
    "provenance_row",
    "read_export",
    "records",
    "result_digest",
    "rows",
    "write",
]
