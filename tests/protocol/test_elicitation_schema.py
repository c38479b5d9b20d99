from mcp_tasks_jupyter.tasks import elicitation

SCHEMA = {
    "type": "object",
    "properties": {
        "interpretation": {
            "type": "string",
            "oneOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}],
        },
        "colour": {"type": "string", "enum": ["red", "green"], "enumNames": ["Red", "Green"]},
        "depth": {"type": "integer", "minimum": 1, "maximum": 5, "default": 2},
        "ratio": {"type": "number", "minimum": 0},
        "ok": {"type": "boolean", "default": True},
        "email": {"type": "string", "format": "email", "maxLength": 40},
        "when": {"type": "string", "format": "date"},
        "tags": {"type": "array", "items": {"enum": ["x", "y", "z"]}, "minItems": 1, "maxItems": 2},
        "name": {"type": "string", "minLength": 2, "pattern": "^[a-z]+$"},
    },
    "required": ["interpretation"],
}


def test_choices_and_defaults():
    props = elicitation.properties(SCHEMA)
    assert elicitation.choices(props["interpretation"]) == [("a", "A"), ("b", "B")]
    assert elicitation.choices(props["colour"]) == [("red", "Red"), ("green", "Green")]
    assert elicitation.multi_choices(props["tags"]) == [("x", "x"), ("y", "y"), ("z", "z")]
    assert elicitation.choices(props["depth"]) is None
    assert elicitation.defaults(SCHEMA) == {"depth": 2, "ok": True}


def test_valid_content_passes():
    content = {
        "interpretation": "b",
        "colour": "red",
        "depth": 5,
        "ratio": 0.5,
        "ok": False,
        "email": "a@b.org",
        "when": "2026-11-30",
        "tags": ["x", "z"],
        "name": "abc",
    }
    assert elicitation.validate(SCHEMA, content) == []


def test_each_kind_of_problem_is_named():
    errors = elicitation.validate(
        SCHEMA,
        {
            "colour": "blue",
            "depth": 9,
            "ratio": "lots",
            "ok": "yes",
            "email": "nope",
            "when": "30/11/2026",
            "tags": ["x", "y", "z"],
            "name": "A",
        },
    )
    text = "\n".join(errors)
    for expected in [
        "interpretation: is required",
        "colour: 'blue' is not one of",
        "depth: must be at most 5",
        "ratio: must be a number",
        "ok: must be true or false",
        "email: is not a valid email",
        "when: is not a valid date",
        "tags: choose at most 2",
        "name: needs at least 2",
        "name: does not match the pattern",
    ]:
        assert expected in text
    assert elicitation.validate(SCHEMA, {"interpretation": "a", "depth": 2.5}) == ["depth: must be an integer"]


def test_answer_from_fills_defaults_and_refuses_misfits():
    assert elicitation.answer_from(SCHEMA, {"interpretation": "a", "unrelated": 1}) == {
        "interpretation": "a",
        "depth": 2,
        "ok": True,
    }
    assert elicitation.answer_from(SCHEMA, {"interpretation": "c"}) is None
    assert elicitation.answer_from(SCHEMA, {}) is None
