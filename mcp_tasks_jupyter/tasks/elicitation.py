"""Elicitation schemas: check answers against a ``requestedSchema`` and fill defaults. No I/O.

MCP restricts ``requestedSchema`` to a flat object whose properties are primitives: string (with
``minLength``/``maxLength``/``format``/``pattern``), number/integer (``minimum``/``maximum``), boolean,
single-choice enums (``enum`` or ``oneOf``/``anyOf`` of ``{const, title}``) and multi-choice arrays
(``type: array`` with ``items.enum`` or ``items.anyOf``, ``minItems``/``maxItems``).
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def properties(schema: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    props = (schema or {}).get("properties")
    return {k: v for k, v in props.items() if isinstance(v, dict)} if isinstance(props, dict) else {}


def required(schema: dict[str, Any] | None) -> list[str]:
    req = (schema or {}).get("required")
    return [r for r in req if isinstance(r, str)] if isinstance(req, list) else []


def choices(prop: dict[str, Any]) -> list[tuple[Any, str]] | None:
    """``(value, label)`` pairs of a single-choice field, or None when it is not one."""
    if isinstance(prop.get("enum"), list):
        names = prop.get("enumNames")
        labels = names if isinstance(names, list) and len(names) == len(prop["enum"]) else prop["enum"]
        return [(v, str(label)) for v, label in zip(prop["enum"], labels, strict=True)]
    for key in ("oneOf", "anyOf"):
        options = prop.get(key)
        if isinstance(options, list) and options and all(isinstance(o, dict) and "const" in o for o in options):
            return [(o["const"], str(o.get("title", o["const"]))) for o in options]
    return None


def multi_choices(prop: dict[str, Any]) -> list[tuple[Any, str]] | None:
    """``(value, label)`` pairs of a multi-choice (array) field, or None."""
    if prop.get("type") != "array" or not isinstance(prop.get("items"), dict):
        return None
    return choices(prop["items"])


def defaults(schema: dict[str, Any] | None) -> dict[str, Any]:
    """Every field's ``default``, by name."""
    return {name: prop["default"] for name, prop in properties(schema).items() if "default" in prop}


def field_errors(name: str, prop: dict[str, Any], value: Any) -> list[str]:
    """What is wrong with ``value`` for one field (empty when it is fine)."""
    kind = prop.get("type")
    errors: list[str] = []
    options = choices(prop)
    if options is not None:
        if value not in [v for v, _ in options]:
            errors.append(f"{name}: {value!r} is not one of {[v for v, _ in options]}")
        return errors
    multi = multi_choices(prop)
    if multi is not None:
        allowed = [v for v, _ in multi]
        if not isinstance(value, list) or any(v not in allowed for v in value):
            return [f"{name}: must be a list drawn from {allowed}"]
        if len(set(map(repr, value))) != len(value):
            errors.append(f"{name}: repeats a choice")
        if isinstance(prop.get("minItems"), int) and len(value) < prop["minItems"]:
            errors.append(f"{name}: choose at least {prop['minItems']}")
        if isinstance(prop.get("maxItems"), int) and len(value) > prop["maxItems"]:
            errors.append(f"{name}: choose at most {prop['maxItems']}")
        return errors
    if kind == "boolean":
        return [] if isinstance(value, bool) else [f"{name}: must be true or false"]
    if kind in ("number", "integer"):
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or (kind == "integer" and not float(value).is_integer())
        ):
            return [f"{name}: must be {'an integer' if kind == 'integer' else 'a number'}"]
        if isinstance(prop.get("minimum"), (int, float)) and value < prop["minimum"]:
            errors.append(f"{name}: must be at least {prop['minimum']}")
        if isinstance(prop.get("maximum"), (int, float)) and value > prop["maximum"]:
            errors.append(f"{name}: must be at most {prop['maximum']}")
        return errors
    if kind == "string":
        if not isinstance(value, str):
            return [f"{name}: must be text"]
        if isinstance(prop.get("minLength"), int) and len(value) < prop["minLength"]:
            errors.append(f"{name}: needs at least {prop['minLength']} characters")
        if isinstance(prop.get("maxLength"), int) and len(value) > prop["maxLength"]:
            errors.append(f"{name}: allows at most {prop['maxLength']} characters")
        fmt = prop.get("format")
        if fmt and not _format_ok(fmt, value):
            errors.append(f"{name}: is not a valid {fmt}")
        pattern = prop.get("pattern")
        if isinstance(pattern, str):
            try:
                if not re.search(pattern, value):
                    errors.append(f"{name}: does not match the pattern {pattern}")
            except re.error:
                pass
        return errors
    return errors  # a type this client does not know: accept what is given


def _format_ok(fmt: str, value: str) -> bool:
    try:
        if fmt == "email":
            return bool(_EMAIL.match(value))
        if fmt == "uri":
            return bool(re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:\S+$", value))
        if fmt == "date":
            date.fromisoformat(value)
        elif fmt == "date-time":
            datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def validate(schema: dict[str, Any] | None, content: dict[str, Any]) -> list[str]:
    """Every problem with ``content`` against ``schema``: missing required fields, bad values."""
    props = properties(schema)
    errors = [f"{name}: is required" for name in required(schema) if name not in content]
    for name, value in content.items():
        if name in props:
            errors.extend(field_errors(name, props[name], value))
    return errors


def answer_from(schema: dict[str, Any] | None, answers: dict[str, Any]) -> dict[str, Any] | None:
    """An accepted answer built from ``answers`` (defaults fill the gaps), or None if it does not fit.

    Only the schema's own fields are sent; ``answers`` may hold answers for other questions too.
    """
    props = properties(schema)
    content = {name: value for name, value in {**defaults(schema), **answers}.items() if name in props}
    if not content and props:
        return None
    return content if not validate(schema, content) else None


def errors_by_field(schema: dict[str, Any] | None, content: dict[str, Any]) -> dict[str, list[str]]:
    """The problems :func:`validate` finds, by field name and without the name in front (a form
    shows each under its field), but for a missing one, which says which ("Topic is required");
    fields that are fine are left out."""
    props = properties(schema)
    errors: dict[str, list[str]] = {}
    for name in required(schema):
        if name not in content:
            title = props.get(name, {}).get("title") if isinstance(props.get(name), dict) else None
            errors.setdefault(name, []).append(
                f"{title if isinstance(title, str) and title else name} is required"
            )
    for name, value in content.items():
        if name in props:
            for problem in field_errors(name, props[name], value):
                errors.setdefault(name, []).append(problem.removeprefix(f"{name}: "))
    return errors
