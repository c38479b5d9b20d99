"""What a task's record keeps of its MCP Apps view (issue 32 item 6; schema version 7).

Two columns of ``tasks``, each JSON text (None where there is nothing to say):

``app_view``, on the record of a task whose tool drew a view (:class:`ViewRecord`)::

    {"uri": "ui://demo/live-chart.html",
     "calls": [{"at": 1764921600.25, "method": "tools/call", "name": "steer_chart",
                "arguments": {"label": "waves", "api_key": "[redacted]"}, "outcome": "answered",
                "record": 4711},
               {"at": ..., "method": "resources/read", "uri": "ui://demo/extra.json", "outcome": "answered"},
               {"at": ..., "method": "ui/open-link", "url": "https://example.org/", "outcome": "opened"}],
     "more": 0}

What the view called, in order: ``at`` this client's epoch seconds; ``method`` one of :data:`METHODS`;
``name`` and ``arguments`` of a ``tools/call`` (values of secret-looking keys redacted and registered secrets
scrubbed, as every record's arguments; arguments longer than :data:`MAX_ARGUMENTS_CHARS` of JSON are not
kept but said so), ``record`` the record of the task such a call started (None when it ran as a plain call
or the index is off); ``uri`` of a ``resources/read``; ``url`` of an ``ui/open-link`` (without a password,
the values of secret-looking query keys redacted;
``outcome`` ``asked``, ``opened`` when the person clicked it, ``dismissed``); ``outcome`` of a call
``answered``, ``refused`` (the host refused it: visibility, size, too many at once) or ``failed``.
At most :data:`MAX_CALLS` calls are kept; ``more`` counts those that were not.

``started_by``, on the record of a task a view started with ``tools/call`` (:class:`StartedBy`)::

    {"view": "ui://demo/live-chart.html", "tool": "live_chart", "record": 1234, "task_id": "t-9"}

the view's resource URI, its tool, and the record (and task id) of the task whose view it was.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..redact import REDACTED, redact_arguments, safe_url, scrub, scrub_data
from .json_column import json_object

#: What a view may have called, as kept.
METHODS = ("tools/call", "resources/read", "ui/open-link")
#: Outcomes a call may have.
OUTCOMES = ("asked", "answered", "refused", "failed", "opened", "dismissed")
#: Calls kept per view (the rest are counted in ``more``).
MAX_CALLS = 200
#: A call's arguments longer than this (JSON) are not kept.
MAX_ARGUMENTS_CHARS = 4000
#: A name, URI or URL is cut to this many characters.
MAX_TEXT_CHARS = 500


def _text(value: Any) -> str | None:
    return scrub(value)[:MAX_TEXT_CHARS] if isinstance(value, str) else None


def link_url(url: str) -> str:
    """A link as kept: no userinfo, and the values of secret-looking query keys (``token``, ...) redacted."""
    url = safe_url(url)
    try:
        parts = urlsplit(url)
        pairs = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError:
        return url
    if not pairs:
        return url
    kept = [(k, REDACTED if redact_arguments({k: v})[k] != v else v) for k, v in pairs]
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(kept), parts.fragment))


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def view_call(
    method: str,
    *,
    name: str | None = None,
    arguments: dict[str, Any] | None = None,
    uri: str | None = None,
    url: str | None = None,
    outcome: str = "answered",
    record: int | None = None,
    at: float | None = None,
) -> dict[str, Any]:
    """One call of a view as a record keeps it (see the module docstring): redacted, scrubbed, bounded."""
    call: dict[str, Any] = {"at": round(time.time() if at is None else at, 3), "method": method}
    if name is not None:
        call["name"] = _text(name)
    if arguments is not None:
        kept = scrub_data(redact_arguments(dict(arguments)))
        text = json.dumps(kept, ensure_ascii=False, default=str)
        call["arguments"] = kept if len(text) <= MAX_ARGUMENTS_CHARS else {"[not kept]": f"{len(text)} characters"}
    if uri is not None:
        call["uri"] = _text(uri)
    if url is not None:
        call["url"] = _text(link_url(url))
    call["outcome"] = outcome if outcome in OUTCOMES else "failed"
    if record is not None:
        call["record"] = record
    return call


@dataclass(frozen=True)
class ViewRecord:
    """A task's view: its resource URI and what it called (``calls``, oldest first; ``more`` not kept)."""

    uri: str
    calls: tuple[dict[str, Any], ...] = field(default=())
    more: int = 0

    def with_call(self, call: dict[str, Any]) -> ViewRecord:
        """This record with ``call`` (from :func:`view_call`) added, or counted once :data:`MAX_CALLS` are kept."""
        if len(self.calls) >= MAX_CALLS:
            return replace(self, more=self.more + 1)
        return replace(self, calls=(*self.calls, call))

    def with_outcome(self, index: int, outcome: str, **more: Any) -> ViewRecord:
        """This record with call ``index``'s outcome (and ``more`` keys, such as ``record``) changed."""
        if not 0 <= index < len(self.calls) or outcome not in OUTCOMES:
            return self
        calls = list(self.calls)
        calls[index] = {**calls[index], "outcome": outcome, **more}
        return replace(self, calls=tuple(calls))

    def as_data(self) -> dict[str, Any]:
        return {"uri": self.uri, "calls": [dict(c) for c in self.calls], "more": self.more}

    def as_json(self) -> str:
        return json.dumps(self.as_data(), ensure_ascii=False, separators=(",", ":"), default=str)

    @classmethod
    def from_json(cls, text: str | None) -> ViewRecord | None:
        """The record a column holds (None: empty or not ours)."""
        data = json_object(text)
        if data is None or not isinstance(data.get("uri"), str):
            return None
        calls = data.get("calls")
        kept = tuple(c for c in calls if isinstance(c, dict))[:MAX_CALLS] if isinstance(calls, list) else ()
        return cls(data["uri"], kept, _int(data.get("more")) or 0)


@dataclass(frozen=True)
class StartedBy:
    """The view a task was started from: its resource URI and tool, and the record (and task id) of the
    task whose view it was."""

    view: str
    tool: str | None = None
    record: int | None = None
    task_id: str | None = None

    def as_data(self) -> dict[str, Any]:
        return {"view": self.view, "tool": self.tool, "record": self.record, "task_id": self.task_id}

    def as_json(self) -> str:
        return json.dumps(self.as_data(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | None) -> StartedBy | None:
        data = json_object(text)
        if data is None or not isinstance(data.get("view"), str):
            return None
        task_id = data.get("task_id")
        task = task_id if isinstance(task_id, str) else None
        return cls(data["view"], _text(data.get("tool")), _int(data.get("record")), task)
