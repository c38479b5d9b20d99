"""The authorization response: state, the RFC 9207 iss parameter compared as a plain string, errors."""

from __future__ import annotations

import pytest

from mcp_tasks_jupyter.errors import SignInFailed
from mcp_tasks_jupyter.oauth.discovery import ServerMetadata
from mcp_tasks_jupyter.oauth.mechanics import AuthorizationRequest, authorization_request, code_from
from mcp_tasks_jupyter.oauth.store import ClientRegistration

ISSUER = "http://localhost:3000"


def metadata(iss_supported: bool) -> ServerMetadata:
    return ServerMetadata(ISSUER, f"{ISSUER}/authorize", f"{ISSUER}/token", iss_parameter_supported=iss_supported)


REQUEST = AuthorizationRequest("u", "the-state", "verifier", "http://127.0.0.1:1/callback")


@pytest.mark.parametrize("supported", [True, False])
def test_matching_iss_or_none_when_not_advertised_gives_the_code(supported: bool) -> None:
    answer = {"code": "c", "state": "the-state", "iss": ISSUER}
    assert code_from(answer, REQUEST, metadata(supported), "s") == "c"
    if not supported:
        assert code_from({"code": "c", "state": "the-state"}, REQUEST, metadata(False), "s") == "c"


@pytest.mark.parametrize(
    ("answer", "supported", "words"),
    [
        ({"code": "c", "state": "the-state"}, True, "sent none"),
        ({"code": "c", "state": "the-state", "iss": "https://evil.example.com"}, True, "RFC 9207"),
        ({"code": "c", "state": "the-state", "iss": "https://evil.example.com"}, False, "RFC 9207"),
        ({"code": "c", "state": "the-state", "iss": ISSUER + "/"}, True, "RFC 9207"),  # no normalising
        ({"code": "c", "state": "other"}, False, "state differs"),
        ({"error": "access_denied", "state": "the-state"}, False, "not granted (access_denied"),
        ({"state": "the-state"}, False, "no authorization code"),
    ],
)
def test_answers_that_are_refused(answer: dict[str, str], supported: bool, words: str) -> None:
    with pytest.raises(SignInFailed, match=words.replace("(", r"\(")):
        code_from(answer, REQUEST, metadata(supported), "s")


def test_the_authorization_url_carries_pkce_s256_resource_and_scopes() -> None:
    client = ClientRegistration(ISSUER, "client-1")
    request = authorization_request(metadata(False), client, REQUEST.redirect_uri, ["a", "b"], "http://x/mcp")
    from urllib.parse import parse_qs, urlsplit

    query = parse_qs(urlsplit(request.url).query)
    assert query["code_challenge_method"] == ["S256"]
    assert query["resource"] == ["http://x/mcp"]
    assert query["scope"] == ["a b"]
    assert query["state"] == [request.state]
    assert query["client_id"] == ["client-1"]
    assert len(request.verifier) >= 43
