"""The RO-Crate community's validator (``roc-validator``) run on a crate with no network.

The validator fetches the JSON-LD context a crate names (and warms up addresses its profiles name);
:func:`validate` answers every HTTP request it makes in this process from ``tests/data/ro-crate/``
(:data:`CONTEXTS`) and anything else with a 404, so nothing leaves the machine. Each issue found at the
``REQUIRED`` and ``RECOMMENDED`` levels comes back as one line (severity, check, message, entity).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import requests
from requests.adapters import HTTPAdapter

from tests.support import REPO_ROOT

DATA = REPO_ROOT / "tests" / "data" / "ro-crate"
CONTEXTS = {"https://w3id.org/ro/crate/1.1/context": DATA / "ro-crate-1.1-context.jsonld"}
PROFILES = ("ro-crate-1.1", "process-run-crate-0.5")
#: What only the person can supply (the issue's words): a publisher, and an organization's web address.
PERSONS_TO_SUPPLY = ("ro-crate-1.1_22.3", "ro-crate-1.1_31.2")


@contextmanager
def local_web(asked: list[str]) -> Iterator[None]:
    """Every request sent through ``requests`` answered from :data:`CONTEXTS`, else 404 (``asked`` lists them)."""
    original = HTTPAdapter.send

    def send(self: HTTPAdapter, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
        url = str(request.url)
        asked.append(url)
        response = requests.Response()
        response.url, response.request, response.encoding = url, request, "utf-8"
        local = CONTEXTS.get(url.rstrip("/"))
        if local is None:
            response.status_code, response._content = 404, b"not here: the tests run with no network"
        else:
            response.status_code, response._content = 200, local.read_bytes()
            response.headers["Content-Type"] = "application/ld+json"
        return response

    HTTPAdapter.send = send  # type: ignore[method-assign]
    try:
        yield
    finally:
        HTTPAdapter.send = original  # type: ignore[method-assign]


def validate(crate: Path, profiles: tuple[str, ...] = PROFILES) -> tuple[list[str], list[str]]:
    """The issues ``roc-validator`` finds in ``crate`` (a directory or a zip) at the REQUIRED and
    RECOMMENDED levels of each profile, as lines; and the addresses it asked for."""
    from rocrate_validator import models, services

    asked: list[str] = []
    issues: list[str] = []
    with local_web(asked):
        for profile in profiles:
            settings = services.ValidationSettings(
                rocrate_uri=str(crate),
                profile_identifier=profile,
                requirement_severity=models.Severity.RECOMMENDED,
                no_cache=True,
            )
            result = services.validate(settings)
            for issue in result.get_issues():
                check = issue.check.identifier if issue.check else "?"
                entity = getattr(issue, "violatingEntity", None)
                issues.append(f"{profile}: {issue.severity.name} {check} {issue.message} [{entity}]")
    return sorted(set(issues)), asked


def without_persons_part(issues: list[str]) -> list[str]:
    """The issues left once those only the person can settle (a publisher, an organization's URL) are out."""
    return [i for i in issues if not any(f" {check} " in i for check in PERSONS_TO_SUPPLY)]


def metadata(crate: Path) -> dict[str, Any]:
    """A crate directory's ``ro-crate-metadata.json``, its graph by id."""
    data = json.loads((crate / "ro-crate-metadata.json").read_text())
    return {entity["@id"]: entity for entity in data["@graph"]}
