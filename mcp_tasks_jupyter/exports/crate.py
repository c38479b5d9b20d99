"""A study's tasks as an RO-Crate 1.1 that conforms to Process Run Crate 0.5: what research archives take.

Zenodo and InvenioRDM deposits, WorkflowHub and the Workflow Run RO-Crate profiles take RO-Crate; the
Process Run Crate profile (``https://w3id.org/ro/wfrun/process/0.5``) describes a run of tools, which a
study's MCP tasks are. ``mtj.export(what, "study.crate")`` writes a directory, ``"study.crate.zip"`` a zip
(``mcp-tasks export --ro-crate PATH``); :func:`write_crate` does both. What the crate holds:

- the root dataset: a name and a description, ``datePublished``, the ``license`` when one is given
  (``license=`` or ``--license``, else the ``"license"`` of the setting file ``index/author.py`` reads;
  RO-Crate 1.1 requires one, so without it :func:`write_crate` says so), ``conformsTo`` both profiles
  (Process Run Crate 0.5 and RO-Crate 1.1, which the metadata descriptor names too), the ``author`` and
  ``publisher`` when known, ``mentions`` every action, ``hasPart`` every file;
- one ``CreateAction`` per task (``#task-RECORD``): ``instrument`` the tool as a ``SoftwareApplication``
  (``#tool-N``), part of its server's (``#server-N``, the name and version the server reported);
  ``object`` its arguments as ``PropertyValue`` s (secret-looking values redacted, as the index keeps
  them and as every export shows them) and the questions the server asked (``Question``, answered by an
  ``Answer`` that says who answered: the person, a handler, preset answers, or nobody); ``result`` the
  result as a file of the crate, ``results/task-RECORD.json`` (the canonical JSON the index keeps, with its
  ``sha256`` and ``contentSize``; its text, and its structured content as a ``PropertyValue``, where
  small); ``startTime``, ``endTime``; ``actionStatus`` Completed only for a task the index holds as
  completed, Failed with an ``error`` for a tool error, a declined question, a failure, a cancellation,
  an expiry or a lost task, Active for a task not ended; ``agent`` the person (``index/author.py``: by
  their ORCID iD where given; else the login name the record holds);
- the notebooks the tasks came from, as files of the crate (``notebooks/``) where they are on this
  machine, and for a headless run (``index/notebook_run.py``) its own ``CreateAction``: papermill's,
  with the input notebook and its parameters (from the output notebook's ``metadata.papermill``,
  redacted) as its object and the output notebook as its result;
- for a task that drew an MCP Apps view, ``subjectOf`` its action: a file, ``views/task-RECORD.json``,
  naming the view's resource URI and what it called (``index/view_record.py``); a task a view started says
  so, and which task's view it was, in its description;
- each ``client.map`` / ``%mcp_map`` sweep the tasks belong to as one ``OrganizeAction`` whose object is
  its items' actions, in order, and whose result lists every item (``crate_sweeps.py``).

File names are ours: a record's id, a counter, a notebook's own file name made safe; nothing a server
sends names a file, and every file stays inside the crate's folder. Every string in the crate goes
through ``redact.scrub_data`` (a secret registered in this process never leaves it). The crate is built
with the ``rocrate`` library (the RO-Crate community's Python library, ``pip install
mcp-tasks-jupyter[crate]``), imported only here.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import tempfile
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..errors import UsageError
from ..index.author import Author, current_author, setting
from ..index.notebook_run import NotebookRun
from ..index.task_index import TaskRecord, canonical_json
from ..index.view_record import ViewRecord
from ..protocol.task_state import COMPLETED
from ..redact import redact_arguments, safe_url, scrub_data
from ..release import __version__
from ..tasks.status import FINISHED
from .crate_sweeps import RecordedSweep, sweep_actions

PROCESS_RUN_CRATE = "https://w3id.org/ro/wfrun/process/0.5"
RO_CRATE = "https://w3id.org/ro/crate/1.1"
SCHEMA = "http://schema.org/"
#: Terms the RO-Crate 1.1 context lacks, defined as RO-Crate 1.2 and the Workflow Run Crate terms do.
EXTRA_TERMS = {"sha256": "https://w3id.org/ro/terms/workflow-run#sha256"}
#: A result's text (and its structured content, as JSON) is put in the crate's metadata up to this many
#: characters; the whole result is always its file.
MAX_INLINE_CHARS = 4000
#: A notebook larger than this is named, not copied.
MAX_NOTEBOOK_BYTES = 64 * 1024 * 1024
#: How a crate's path names its form: a zip, else a directory.
ZIP_SUFFIX = ".zip"
NO_LICENSE = (
    "the crate has no license: RO-Crate 1.1 requires one, and archives ask for it; give license= (or "
    'mcp-tasks export --license, or "license" in {settings}), e.g. CC-BY-4.0'
)
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class CrateWritten:
    """What :func:`write_crate` wrote: where, how many tasks, and what the person should still supply."""

    path: Path
    tasks: int
    missing: tuple[str, ...]


def license_entity(given: str) -> dict[str, Any]:
    """A license named by an SPDX id (``CC-BY-4.0``) or a URL, as a contextual entity."""
    text = given.strip()
    if text.startswith(("http://", "https://")):
        return {"@id": text, "@type": "CreativeWork", "name": text}
    return {"@id": f"https://spdx.org/licenses/{text}", "@type": "CreativeWork", "name": text, "identifier": text}


def write_crate(
    records: Iterable[TaskRecord],
    path: str | Path,
    *,
    license: str | None = None,
    name: str | None = None,
    description: str | None = None,
    publisher: str | None = None,
    sweeps: Sequence[RecordedSweep] = (),
) -> CrateWritten:
    """Write ``records`` as an RO-Crate at ``path`` (``.zip``: a zip, else a directory; see the module
    docstring), with ``sweeps`` (``crate_sweeps.sweeps_of``) as actions over their items' actions. Raises
    UsageError when it cannot be written (the ``rocrate`` library missing, a path that is a non-empty
    directory which is no crate, a write that fails)."""
    try:
        from rocrate.rocrate import ROCrate  # type: ignore[import-untyped]
    except ImportError:
        raise UsageError(
            "export: an RO-Crate needs the rocrate library: pip install 'mcp-tasks-jupyter[crate]'"
        ) from None
    chosen = records if isinstance(records, list) else list(records)
    license = license or _setting_license()
    crate = ROCrate(version="1.1")
    crate.metadata.extra_terms.update(EXTRA_TERMS)
    graph = CrateGraph(crate)
    graph.build(chosen, license=license, name=name, description=description, publisher=publisher, sweeps=sweeps)
    target = Path(path)
    missing = () if license else ("license",)
    try:
        if target.name.lower().endswith(ZIP_SUFFIX):
            target.parent.mkdir(parents=True, exist_ok=True)
            crate.write_zip(target)
        else:
            _write_directory(crate, target)
    except OSError as exc:
        raise UsageError(f"export: cannot write the crate {target}: {exc.strerror or exc}") from None
    if not license:
        warnings.warn(NO_LICENSE.format(settings=_settings_name()), UserWarning, stacklevel=3)
    return CrateWritten(target, len(chosen), missing)


def is_crate_path(path: str | os.PathLike[str]) -> bool:
    """Whether an export's path asks for a crate: ``NAME.crate`` (a directory) or ``NAME.crate.zip``."""
    lowered = str(path).lower().rstrip("/")
    return lowered.endswith(".crate") or lowered.endswith(".crate.zip")


def _write_directory(crate: Any, target: Path) -> None:
    """Write into a new directory beside ``target``, then put it in ``target``'s place (a crate written
    before is replaced; a non-empty directory that is no crate is never touched)."""
    if target.exists():
        if not target.is_dir():
            raise UsageError(f"export: {target} exists and is not a directory")
        if any(target.iterdir()) and not (target / "ro-crate-metadata.json").is_file():
            raise UsageError(f"export: {target} is a directory that holds files and no RO-Crate: choose another")
    target.parent.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=".crate-", dir=target.parent))
    try:
        crate.write(fresh)
        if target.exists():
            shutil.rmtree(target)
        fresh.rename(target)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise


def _setting_license() -> str | None:
    given = setting("license")
    return given if isinstance(given, str) and given.strip() else None


def _settings_name() -> str:
    from ..index.author import settings_path

    return str(settings_path())


def _iso(epoch: float | None) -> str | None:
    """Epoch seconds in the profile's ISO 8601 form (milliseconds, a +00:00 offset)."""
    return None if epoch is None else datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds")


def _safe_file_name(path: str, fallback: str) -> str:
    """A file name for the crate from a local path's last part: letters, digits, ``._-`` only."""
    cleaned = _SAFE_NAME.sub("_", Path(path).name).strip("._")
    return cleaned[:100] if cleaned else fallback


class CrateGraph:
    """The crate's entities, made once each (servers, tools, people by their ids)."""

    def __init__(self, crate: Any) -> None:
        from rocrate.model.contextentity import ContextEntity  # type: ignore[import-untyped]

        self.crate = crate
        self._entity = ContextEntity
        self._ids: dict[tuple[Any, ...], str] = {}
        self._files: set[str] = set()

    def add(self, ident: str, properties: Mapping[str, Any]) -> dict[str, str]:
        """Add a contextual entity (its strings scrubbed); a reference to it."""
        self.crate.add(self._entity(self.crate, ident, properties=dict(scrub_data(dict(properties)))))
        return {"@id": ident}

    def once(self, key: tuple[Any, ...], make: Any) -> dict[str, str]:
        """The entity of ``key``, made by ``make(ident_number)`` the first time."""
        if key not in self._ids:
            self._ids[key] = make(len(self._ids) + 1)
        return {"@id": self._ids[key]}

    def file(self, dest: str, data: bytes, properties: Mapping[str, Any]) -> dict[str, str]:
        """A file of the crate at ``dest`` (a name of ours), with its SHA-256 and size."""
        assert dest not in self._files and ".." not in Path(dest).parts and not Path(dest).is_absolute()
        self._files.add(dest)
        props = {
            **scrub_data(dict(properties)),
            "contentSize": str(len(data)),
            "sha256": hashlib.sha256(data).hexdigest(),
        }
        self.crate.add_file(source=io.BytesIO(data), dest_path=dest, properties=props)
        return {"@id": dest}

    # -- the whole crate -------------------------------------------------------------------------

    def build(
        self,
        records: list[TaskRecord],
        *,
        license: str | None,
        name: str | None,
        description: str | None,
        publisher: str | None,
        sweeps: Sequence[RecordedSweep],
    ) -> None:
        root = self.crate.root_dataset
        notebooks = sorted({r.notebook for r in records if r.notebook})
        root["name"] = name or (
            f"MCP tasks of {', '.join(Path(n).name for n in notebooks[:3])}" if notebooks else "MCP tasks"
        )
        root["description"] = description or (
            f"{len(records)} MCP tool call{'' if len(records) == 1 else 's'} run as tasks, each with its server, "
            "arguments, questions and answers, times, outcome and result; recorded by mcp-tasks-jupyter "
            f"{__version__} and exported from its task index."
        )
        root["datePublished"] = datetime.now(UTC).isoformat(timespec="seconds")
        root["conformsTo"] = [
            self.add(PROCESS_RUN_CRATE, {"@type": "CreativeWork", "name": "Process Run Crate", "version": "0.5"}),
            self.add(RO_CRATE, {"@type": "CreativeWork", "name": "RO-Crate", "version": "1.1"}),
        ]
        if license:
            entity = license_entity(license)
            root["license"] = self.add(entity.pop("@id"), entity)
        people = [self.person(r) for r in records]
        authors = [p for p, r in zip(people, records, strict=True) if r.author is not None]
        now = current_author()
        if authors:
            root["author"] = _one_or_list(list({a["@id"]: a for a in authors}.values()))
        elif now is not None:
            root["author"] = self.author_entity(now)
        if publisher:
            root["publisher"] = self.organization(publisher)
        actions = [self.task_action(r, p) for r, p in zip(records, people, strict=True)]
        by_record = {r.id: a for r, a in zip(records, actions, strict=True)}
        agents = {r.id: p for r, p in zip(records, people, strict=True)}
        actions += sweep_actions(self, sweeps, by_record, agents, _iso)
        actions += self.notebook_actions(records)
        root["mentions"] = _one_or_list(actions)

    # -- people ------------------------------------------------------------------------------------

    def author_entity(self, author: Author) -> dict[str, str]:
        def make(number: int) -> str:
            ident = author.orcid_url or f"#person-{number}"
            properties: dict[str, Any] = {"@type": "Person", "name": author.name}
            if author.affiliation:
                properties["affiliation"] = self.organization(author.affiliation)
            self.add(ident, properties)
            return ident

        return self.once(("person", author.orcid or author.name, author.affiliation), make)

    def organization(self, given: str) -> dict[str, str]:
        """An organization named by its name, or by a URL (a ROR id, a web site) that becomes its id."""

        def make(number: int) -> str:
            if given.startswith(("http://", "https://")):
                return self.add(given, {"@type": "Organization", "name": given, "url": given})["@id"]
            return self.add(f"#organization-{number}", {"@type": "Organization", "name": given})["@id"]

        return self.once(("organization", given), make)

    def person(self, record: TaskRecord) -> dict[str, str]:
        """Who ran the task: the person who named themselves, else the login name the record holds."""
        if record.author is not None:
            return self.author_entity(record.author)
        login = f"{record.username or '?'}@{record.hostname or '?'}"

        def make(number: int) -> str:
            return self.add(
                f"#login-{number}",
                {
                    "@type": "Person",
                    "name": login,
                    "description": "a login name and host: this person named no name or ORCID iD (mtj.set_author)",
                },
            )["@id"]

        return self.once(("login", login), make)

    # -- one task ------------------------------------------------------------------------------------

    def server(self, record: TaskRecord) -> dict[str, str]:
        """The MCP server a task ran on: its address is its id where it has one (an HTTP server)."""
        software = record.server_software or record.server_name
        address = _public_url(record.target)

        def make(number: int) -> str:
            properties: dict[str, Any] = {
                "@type": "SoftwareApplication",
                "name": software,
                "description": f"the MCP server of the connection {record.server_name} "
                f"({record.transport or 'unknown transport'}: {address or safe_url(record.target)})",
            }
            if record.server_version:
                properties["softwareVersion"] = record.server_version
            if address:
                properties["url"] = address
            return self.add(address or f"#server-{number}", properties)["@id"]

        return self.once(("server", address or record.target, software, record.server_version), make)

    def tool(self, record: TaskRecord) -> dict[str, str]:
        """The tool a task ran, part of its server (``SERVER_URL#TOOL`` where the server has an address)."""
        server = self.server(record)
        address = _public_url(record.target)

        def make(number: int) -> str:
            properties: dict[str, Any] = {
                "@type": "SoftwareApplication",
                "name": record.tool,
                "description": f"the tool {record.tool} of the MCP server "
                f"{record.server_software or record.server_name}",
                "isPartOf": server,
            }
            if record.server_version:
                properties["softwareVersion"] = record.server_version
            if address:
                properties["url"] = address
            ident = f"{address}#{quote(record.tool, safe='')}" if address else f"#tool-{number}"
            return self.add(ident, properties)["@id"]

        return self.once(("tool", server["@id"], record.tool), make)

    def task_action(self, record: TaskRecord, agent: dict[str, str]) -> dict[str, str]:
        """One task as a ``CreateAction`` (see the module docstring)."""
        ident = f"#task-{record.id}"
        objects = [
            self.add(
                f"{ident}-argument-{n}",
                {"@type": "PropertyValue", "name": str(key), "value": _value(value)},
            )
            for n, (key, value) in enumerate(redact_arguments(record.arguments).items(), 1)
        ]
        objects += [self.question(ident, n, q, agent) for n, q in enumerate(redact_arguments(record.questions), 1)]
        properties: dict[str, Any] = {
            "@type": "CreateAction",
            "name": f"{record.tool} on {record.server_name}"
            + (f" (task {record.task_id})" if record.task_id else ""),
            "description": _task_description(record),
            "instrument": self.tool(record),
            "agent": agent,
        }
        status = _action_status(record.status)
        if status:
            properties["actionStatus"] = SCHEMA + status
        if record.started_at is not None:
            properties["startTime"] = _iso(record.started_at)
        if record.finished_at is not None:
            properties["endTime"] = _iso(record.finished_at)
        if objects:
            properties["object"] = _one_or_list(objects)
        if status == "FailedActionStatus":
            properties["error"] = record.error or record.status_message or f"the task ended {record.status}"
        if record.app_view is not None:
            properties["subjectOf"] = self.view_file(record, record.app_view)
        if record.result is not None:
            properties["result"] = _one_or_list([self.result(record), *self.structured(record)])
        else:
            properties["result"] = self.add(
                f"{ident}-outcome",
                {
                    "@type": "PropertyValue",
                    "name": "outcome",
                    "value": record.status,
                    "description": "the task gave no result: " + (record.status_message or record.status),
                },
            )
        return self.add(ident, properties)

    def question(self, task: str, number: int, asked: Mapping[str, Any], agent: dict[str, str]) -> dict[str, str]:
        """A question the server asked, and its answer, as an input of the task (a ``PropertyValue``)."""
        source = str(asked.get("source") or "no handler")
        action = str(asked.get("action") or "none")
        who = _answerer(source) + (f" ({agent['@id']})" if source == "person" else "")
        return self.add(
            f"{task}-answer-{number}",
            {
                "@type": "PropertyValue",
                "name": f"the answer to the server's question {number}: {asked.get('question') or ''}".rstrip(
                    ": "
                ),
                "value": json.dumps(asked.get("content"), ensure_ascii=False, sort_keys=True, default=str),
                "description": f"{action}, answered by {who}",
            },
        )

    def result(self, record: TaskRecord) -> dict[str, str]:
        raw = scrub_data(record.result)
        data = canonical_json(raw).encode("utf-8")
        properties: dict[str, Any] = {
            "@type": "File",
            "name": f"the result of task {record.id}",
            "encodingFormat": "application/json",
            "description": "the tool's CallToolResult as JSON (sorted keys, no spaces), as the index keeps it",
        }
        text = _result_text(raw)
        if text and len(text) <= MAX_INLINE_CHARS:
            properties["text"] = text
        return self.file(f"results/task-{record.id}.json", data, properties)

    def view_file(self, record: TaskRecord, view: ViewRecord) -> dict[str, str]:
        """What the task's MCP Apps view called, as the index keeps it (``index/view_record.py``), as a file
        about the task's action: the view's resource URI, each call in order, and how many were not kept."""
        data = canonical_json(scrub_data(view.as_data())).encode("utf-8")
        return self.file(
            f"views/task-{record.id}.json",
            data,
            {
                "@type": "File",
                "name": f"what the MCP Apps view {view.uri} of task {record.id} called",
                "encodingFormat": "application/json",
                "description": f"the view {view.uri} drawn while the task ran, and what it called through the "
                f"host in order ({len(view.calls)} kept, {view.more} more not kept): tools/call (the tool, its "
                "arguments redacted, its outcome, the record of the task it started), resources/read, "
                "ui/open-link (and whether the person opened it)",
                "about": {"@id": f"#task-{record.id}"},
            },
        )

    def structured(self, record: TaskRecord) -> list[dict[str, str]]:
        raw = record.result or {}
        structured = raw.get("structuredContent") if isinstance(raw, dict) else None
        if structured is None:
            return []
        text = json.dumps(scrub_data(structured), ensure_ascii=False, sort_keys=True, default=str)
        if len(text) > MAX_INLINE_CHARS:
            return []
        return [
            self.add(
                f"#task-{record.id}-structured",
                {
                    "@type": "PropertyValue",
                    "name": "structuredContent",
                    "value": text,
                    "encodingFormat": "application/json",
                },
            )
        ]

    # -- the notebooks ------------------------------------------------------------------------------

    def notebook_actions(self, records: list[TaskRecord]) -> list[dict[str, str]]:
        """Each notebook the tasks came from as a file where it is here, and a headless run's action."""
        actions = []
        runs: dict[str, NotebookRun | None] = {}
        for record in records:
            if record.notebook and (record.notebook not in runs or runs[record.notebook] is None):
                runs[record.notebook] = record.notebook_run
        for number, (notebook, run) in enumerate(sorted(runs.items(), key=lambda item: item[0]), 1):
            tasks = [r for r in records if r.notebook == notebook]
            source = self.notebook_file(
                notebook, f"notebooks/{number}", "the notebook the tasks were started from"
            )
            if run is None:
                continue
            actions.append(self.run_action(number, run, source, tasks))
        return actions

    def notebook_file(self, path: str, folder: str, description: str) -> dict[str, str] | None:
        local = Path(path)
        try:
            if not local.is_file() or local.stat().st_size > MAX_NOTEBOOK_BYTES:
                return None
            data = local.read_bytes()
            json.loads(data)  # a notebook being written (papermill saves after each cell) is not taken half
        except (OSError, ValueError):
            return None
        dest = f"{folder}/{_safe_file_name(path, 'notebook.ipynb')}"
        if dest in self._files:
            return {"@id": dest}
        return self.file(
            dest,
            data,
            {
                "@type": "File",
                "name": local.name,
                "encodingFormat": "application/x-ipynb+json",
                "description": description,
            },
        )

    def runner(self, number: int, name: str) -> str:
        """The program that ran a notebook headless: its PyPI project where it is installed here."""
        found = _runner_version(name)
        if found is None:
            return self.add(f"#runner-{number}", {"@type": "SoftwareApplication", "name": name})["@id"]
        address = f"https://pypi.org/project/{name}/{found}/"
        return self.add(
            address, {"@type": "SoftwareApplication", "name": name, "softwareVersion": found, "url": address}
        )["@id"]

    def run_action(
        self, number: int, run: NotebookRun, source: dict[str, str] | None, tasks: list[TaskRecord]
    ) -> dict[str, str]:
        """A notebook run headless as a ``CreateAction``: papermill's input and parameters its object, the
        output notebook its result; its status and times from the output notebook's ``metadata.papermill``
        (none claimed while it has no end)."""
        ident = f"#notebook-run-{number}"
        output = (
            self.notebook_file(run.output, f"notebooks/{number}/output", "the notebook papermill wrote")
            if run.output
            else None
        )
        meta = _papermill_metadata(run.output) if run.output else {}
        objects: list[dict[str, str]] = [source] if source else []
        parameters = meta.get("parameters")
        if isinstance(parameters, dict):
            objects += [
                self.add(
                    f"{ident}-parameter-{n}", {"@type": "PropertyValue", "name": str(key), "value": _value(value)}
                )
                for n, (key, value) in enumerate(redact_arguments(parameters).items(), 1)
            ]
        starts = [t.started_at for t in tasks if t.started_at is not None]
        properties: dict[str, Any] = {
            "@type": "CreateAction",
            "name": f"{Path(run.path).name} run headless by {run.runner}",
            "description": f"the notebook {run.path} run by {run.runner}"
            + (f", writing {run.output}" if run.output else "")
            + f"; it started {len(tasks)} of the tasks",
            "instrument": self.once(("runner", run.runner), lambda n: self.runner(n, run.runner)),
            "agent": self.person(tasks[0]),
        }
        status, end = _run_status(meta)
        if status:
            properties["actionStatus"] = SCHEMA + status
        start = _iso_text(meta.get("start_time")) or _iso(min(starts, default=None))
        if start:
            properties["startTime"] = start
        if end:
            properties["endTime"] = end
        if status == "FailedActionStatus":
            properties["error"] = str(meta.get("exception") or "the run failed")
        if objects:
            properties["object"] = _one_or_list(objects)
        if output:
            properties["result"] = output
        return self.add(ident, properties)


def _action_status(status: str) -> str | None:
    """The schema.org ActionStatusType of a task's status, as the index holds it (None: not ended; the
    profile knows only Completed and Failed, so an action still running claims neither)."""
    if status == COMPLETED:
        return "CompletedActionStatus"
    if status in FINISHED:
        return "FailedActionStatus"
    return None


def _run_status(meta: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """A papermill run's status and end from its output notebook (none while it has no end time)."""
    end = _iso_text(meta.get("end_time"))
    if meta.get("exception"):
        return "FailedActionStatus", end
    if end:
        return "CompletedActionStatus", end
    return None, None


def _iso_text(value: Any) -> str | None:
    """An ISO 8601 time papermill wrote, in the profile's form (milliseconds, a +HH:MM offset)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.isoformat(timespec="milliseconds")


def _one_or_list(items: list[dict[str, str]]) -> dict[str, str] | list[dict[str, str]]:
    """One reference as itself, several as a list (RO-Crate 1.1 prefers no one-item lists)."""
    return items[0] if len(items) == 1 else items


def _public_url(target: str) -> str | None:
    """An HTTP server's address as a crate may show it: no user or password, no query, no fragment."""
    if not target.startswith(("http://", "https://")):
        return None
    return safe_url(target).split("#", 1)[0].split("?", 1)[0]


def _runner_version(runner: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(runner)
    except (PackageNotFoundError, ValueError):
        return None


def _task_description(record: TaskRecord) -> str:
    parts = [f"the status the task index holds: {record.status}"]
    if record.server_status and record.server_status != record.status:
        parts.append(f"the server's own last status: {record.server_status}")
    if record.status_message:
        parts.append(f"its message: {record.status_message}")
    if record.notebook:
        parts.append(f"started from the notebook {record.notebook}")
    if record.app_view is not None:
        parts.append(f"drawn with its MCP Apps view {record.app_view.uri} (what the view called: subjectOf)")
    if record.started_by is not None:
        by = record.started_by
        parts.append(
            f"started from the MCP Apps view {by.view} of the tool {by.tool or '?'}"
            + (f" (the view of #task-{by.record})" if by.record is not None else "")
        )
    if record.dialect or record.protocol:
        parts.append(f"MCP {record.protocol or '?'}, task dialect {record.dialect or '?'}")
    return "; ".join(parts)


def _answerer(source: str) -> str:
    return {
        "person": "the person",
        "handler": "the program's answer handler",
        "answers": "answers given in advance",
        "no handler": "nobody (no one could answer)",
    }.get(source, source)


def _value(value: Any) -> Any:
    """A PropertyValue's value: text, a number or a boolean as they are; anything else as JSON text."""
    if value is None:
        return "null"
    if isinstance(value, (str, int, float, bool)):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _result_text(raw: Any) -> str:
    if not isinstance(raw, dict):
        return ""
    blocks = raw.get("content")
    if not isinstance(blocks, list):
        return ""
    return "\n".join(b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str))


def _papermill_metadata(path: str) -> dict[str, Any]:
    """papermill's ``metadata.papermill`` of the output notebook (empty when it cannot be read)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    meta = data.get("metadata", {}).get("papermill") if isinstance(data, dict) else None
    return meta if isinstance(meta, dict) else {}


__all__ = ["PROCESS_RUN_CRATE", "CrateWritten", "is_crate_path", "license_entity", "write_crate"]
