"""The WWW-Authenticate parser: RFC 9110 challenges, and whatever else a server may send."""

import pytest
from hypothesis import given, settings, strategies as st

from mcp_tasks_jupyter.protocol.www_authenticate import bearer_challenge, parse_www_authenticate


def parsed(header):
    return [(c.scheme, c.params, c.token68) for c in parse_www_authenticate(header)]


def test_a_bearer_challenge_with_quoted_and_token_values():
    header = (
        'Bearer realm="example", error="invalid_token", error_description="The token \\"x\\" expired, '
        'sorry", scope=read, resource_metadata="https://rs.example/.well-known/oauth-protected-resource"'
    )
    [challenge] = parse_www_authenticate(header)
    assert challenge.is_bearer and challenge.realm == "example" and challenge.error == "invalid_token"
    assert challenge.error_description == 'The token "x" expired, sorry'
    assert challenge.scope == "read"
    assert challenge.resource_metadata == "https://rs.example/.well-known/oauth-protected-resource"


def test_several_challenges_token68_and_spacing():
    header = 'Newauth realm="apps", type=1,  title="Login to \\"apps\\"", Basic realm="simple", Negotiate a87421=='
    assert parsed(header) == [
        ("Newauth", {"realm": "apps", "type": "1", "title": 'Login to "apps"'}, None),
        ("Basic", {"realm": "simple"}, None),
        ("Negotiate", {}, "a87421=="),
    ]


def test_names_are_case_insensitive_and_the_first_of_repeated_ones_wins():
    assert parsed('bearer REALM = "a" , realm="b", Scope="s"') == [("bearer", {"realm": "a", "scope": "s"}, None)]
    assert bearer_challenge(parse_www_authenticate('Basic realm="x", bEaReR realm="y"')).realm == "y"


def test_a_bare_scheme_and_empty_headers():
    assert parsed("Bearer") == [("Bearer", {}, None)]
    assert parsed("") == [] and parsed(" , ,") == []
    assert bearer_challenge([]) is None


@pytest.mark.parametrize(
    "header",
    [
        'Bearer realm="unterminated',
        "Bearer realm=",
        '=,=="x"',
        '"quoted" Bearer',
        "Bearer realm=\x00\x7f\u2028",
        "Bearer ,,, error",
        "\\",
    ],
)
def test_garbage_never_raises(header):
    parse_www_authenticate(header)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*'Bearer realm="x\\, =\t', "error", "scope", "\u00e9"])).map("".join) | st.text())
def test_any_text_parses_without_raising(header):
    for challenge in parse_www_authenticate(header):
        assert challenge.scheme and all(name == name.lower() for name in challenge.params)
