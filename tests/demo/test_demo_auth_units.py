"""The demo's authorization server and Bearer check as plain objects (no HTTP), on a clock the tests move."""

from __future__ import annotations

import base64
import json
from urllib.parse import parse_qs, urlsplit

import pytest

from mcp_tasks_jupyter.demo.__main__ import main
from mcp_tasks_jupyter.demo.auth_server import (
    AuthSettings,
    DemoAuthorizationServer,
    Reply,
    parse_tool_scopes,
)
from mcp_tasks_jupyter.demo.bearer import ProtectedResource
from tests.support.auth_demo import Pkce

ISSUER = "http://127.0.0.1:9"
RESOURCE = f"{ISSUER}/mcp"
REDIRECT = "http://127.0.0.1:4242/callback"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def make(clock: Clock, **settings: object) -> tuple[DemoAuthorizationServer, ProtectedResource]:
    auth_settings = AuthSettings(**settings)  # type: ignore[arg-type]
    server = DemoAuthorizationServer(ISSUER, RESOURCE, auth_settings, clock=clock)
    return server, ProtectedResource(RESOURCE, server, auth_settings)


def register(server: DemoAuthorizationServer, **meta: object) -> dict[str, object]:
    reply = server.register(
        json.dumps({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none", **meta}).encode()
    )
    assert reply.status == 201, reply.body
    assert reply.body is not None
    return reply.body


def location(reply: Reply) -> dict[str, str]:
    assert reply.status == 302, reply.body
    return {k: v[0] for k, v in parse_qs(urlsplit(reply.headers["Location"]).query).items()}


def sign_in(server: DemoAuthorizationServer, client_id: str, scope: str = "mcp:tools offline_access") -> dict:
    pkce = Pkce.new()
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "code_challenge": pkce.challenge,
        "code_challenge_method": "S256",
        "resource": RESOURCE,
        "scope": scope,
    }
    code = location(server.authorize(list(query.items())))["code"]
    form = {
        "grant_type": "authorization_code",
        "client_id": client_id,
        "code": code,
        "redirect_uri": REDIRECT,
        "code_verifier": pkce.verifier,
        "resource": RESOURCE,
    }
    reply = server.token(list(form.items()), None)
    assert reply.status == 200, reply.body
    assert reply.body is not None
    return reply.body


def refresh(server: DemoAuthorizationServer, client_id: str, token: str, **extra: str) -> Reply:
    form = {"grant_type": "refresh_token", "client_id": client_id, "refresh_token": token, **extra}
    return server.token(list(form.items()), None)


def test_settings_derive_the_required_and_supported_scopes() -> None:
    settings = AuthSettings(scopes=("mcp:tools", "offline_access"), tool_scopes={"make_chart": "mcp:charts"})
    assert settings.required == ("mcp:tools",)  # never offline_access (the spec's SHOULD NOT)
    assert settings.supported == ("mcp:tools", "offline_access", "mcp:charts")
    with pytest.raises(ValueError, match="token-ttl"):
        AuthSettings(token_ttl=0)
    with pytest.raises(ValueError, match="scope"):
        AuthSettings(scopes=('bad"scope',))
    with pytest.raises(ValueError, match="TOOL=SCOPE"):
        parse_tool_scopes(["make_chart"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--auth"], "--auth needs --http"),
        (["--http", "--auth", "--token-ttl", "0"], "at least 1 second"),
        (["--http", "--auth", "--auth-tool-scope", "=x"], "TOOL=SCOPE"),
        (["--http", "--auth", "--auth-client-secret", "x"], "needs --auth-client-id"),
    ],
)
def test_bad_auth_flags_are_usage_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_an_access_token_expires_and_then_says_so(clock: Clock) -> None:
    server, resource = make(clock, token_ttl=5)
    client_id = str(register(server, grant_types=["authorization_code", "refresh_token"])["client_id"])
    tokens = sign_in(server, client_id)
    assert tokens["expires_in"] == 5 and tokens["scope"] == "mcp:tools offline_access"
    header = f"Bearer {tokens['access_token']}"
    assert resource.check(header) is None
    assert resource.check(f"bearer   {tokens['access_token']}  ") is None  # the scheme is case-insensitive
    clock.now += 5
    refused = resource.check(header)
    assert refused is not None and refused.status == 401
    assert 'error="invalid_token"' in refused.headers["WWW-Authenticate"]
    assert refused.body == {"error": "invalid_token", "error_description": "the access token expired"}
    fresh = refresh(server, client_id, tokens["refresh_token"])
    assert fresh.status == 200 and fresh.body is not None
    assert resource.check(f"Bearer {fresh.body['access_token']}") is None


def test_the_challenge_names_the_metadata_and_the_scopes(clock: Clock) -> None:
    _, resource = make(clock)
    plain = (
        'Bearer resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"'
    )
    for header in (None, "", "Basic dXNlcjpwYXNz"):  # no token: no error code (RFC 6750 §3.1)
        refused = resource.check(header)
        assert refused is not None and refused.status == 401, header
        assert refused.headers["WWW-Authenticate"] == plain
    for header in ("Bearer", "Bearer made-up-token"):
        refused = resource.check(header)
        assert refused is not None and refused.status == 401, header
        challenge = refused.headers["WWW-Authenticate"]
        assert challenge.startswith(plain + ', error="invalid_token", error_description="')
        assert "made-up" not in json.dumps(refused.body) + challenge


def test_a_tool_scope_is_a_403_naming_every_scope_the_call_needs(clock: Clock) -> None:
    server, resource = make(
        clock, scopes=("mcp:tools", "offline_access"), tool_scopes={"make_chart": "mcp:charts"}
    )
    client_id = str(register(server)["client_id"])
    header = f"Bearer {sign_in(server, client_id, 'mcp:tools')['access_token']}"
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "make_chart"}}
    assert resource.check(header, {**call, "params": {"name": "echo"}}) is None
    refused = resource.check(header, call)
    assert refused is not None and refused.status == 403
    challenge = refused.headers["WWW-Authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="mcp:tools mcp:charts"' in challenge
    header = f"Bearer {sign_in(server, client_id, 'mcp:tools mcp:charts')['access_token']}"
    assert resource.check(header, call) is None


def test_a_rotated_refresh_token_presented_again_revokes_the_grant(clock: Clock) -> None:
    server, resource = make(clock)
    client_id = str(register(server, grant_types=["authorization_code", "refresh_token"])["client_id"])
    first = sign_in(server, client_id)
    second = refresh(server, client_id, first["refresh_token"])
    assert second.status == 200 and second.body is not None
    assert second.body["refresh_token"] != first["refresh_token"]
    again = refresh(server, client_id, first["refresh_token"])
    assert again.status == 400 and again.body is not None and again.body["error"] == "invalid_grant"
    for token in (first["access_token"], second.body["access_token"]):
        assert resource.check(f"Bearer {token}") is not None
    assert refresh(server, client_id, second.body["refresh_token"]).status == 400
    other = sign_in(server, client_id)  # another grant of the same client is untouched
    assert resource.check(f"Bearer {other['access_token']}") is None


def test_a_refresh_may_narrow_the_scope_but_not_widen_it(clock: Clock) -> None:
    server, _ = make(clock, scopes=("mcp:tools", "mcp:extra", "offline_access"))
    client_id = str(register(server, grant_types=["authorization_code", "refresh_token"])["client_id"])
    tokens = sign_in(server, client_id, "mcp:tools offline_access")
    wider = refresh(server, client_id, tokens["refresh_token"], scope="mcp:tools mcp:extra")
    assert wider.status == 400 and wider.body is not None and wider.body["error"] == "invalid_scope"
    narrower = refresh(server, client_id, tokens["refresh_token"], scope="mcp:tools")  # still valid after the 400
    assert narrower.status == 200 and narrower.body is not None
    assert narrower.body["scope"] == "mcp:tools" and "refresh_token" in narrower.body  # the grant keeps offline


def test_codes_are_single_use_and_expire(clock: Clock) -> None:
    server, _ = make(clock)
    client_id = str(register(server)["client_id"])
    pkce = Pkce.new()
    query = [
        ("response_type", "code"),
        ("client_id", client_id),
        ("code_challenge", pkce.challenge),
        ("code_challenge_method", "S256"),
        ("resource", RESOURCE),
    ]
    form = [("grant_type", "authorization_code"), ("client_id", client_id), ("code_verifier", pkce.verifier)]
    form.append(("resource", RESOURCE))
    code = location(server.authorize(query))["code"]  # one registered redirect URI: it may be left out
    assert server.token([*form, ("code", code)], None).status == 200
    assert server.token([*form, ("code", code)], None).status == 400  # spent
    code = location(server.authorize(query))["code"]
    clock.now += 61
    answer = server.token([*form, ("code", code)], None)
    assert answer.status == 400 and answer.body is not None and answer.body["error"] == "invalid_grant"


def test_redirect_uris_registered_and_matched(clock: Clock) -> None:
    server, _ = make(clock)
    for uris in ([], ["http://example.com/cb"], ["https://x.example/cb#frag"], ["ftp://127.0.0.1/"], "x"):
        reply = server.register(json.dumps({"redirect_uris": uris}).encode())
        assert reply.status == 400 and reply.body is not None, uris
        assert reply.body["error"] == "invalid_redirect_uri"
    body = register(server, redirect_uris=["http://127.0.0.1:4242/callback", "http://localhost:4242/cb"])
    client_id = str(body["client_id"])
    pkce = Pkce.new()

    def authorize(redirect_uri: str | None) -> Reply:
        query = [
            ("response_type", "code"),
            ("client_id", client_id),
            ("code_challenge", pkce.challenge),
            ("code_challenge_method", "S256"),
            ("resource", RESOURCE),
        ]
        return server.authorize(query + ([("redirect_uri", redirect_uri)] if redirect_uri else []))

    assert authorize("http://127.0.0.1:5555/callback").status == 302  # a loopback IP: any port (RFC 8252)
    assert authorize("http://localhost:4242/cb").status == 302
    for refused in ("http://localhost:5555/cb", "http://127.0.0.1:4242/other", None):
        reply = authorize(refused)
        assert reply.status == 400 and "Location" not in reply.headers, refused


def test_registration_defaults_and_secrets(clock: Clock) -> None:
    server, _ = make(clock)
    reply = server.register(json.dumps({"redirect_uris": [REDIRECT]}).encode())
    assert reply.status == 201 and reply.body is not None
    assert reply.body["token_endpoint_auth_method"] == "client_secret_basic"  # RFC 7591's default
    assert reply.body["grant_types"] == ["authorization_code"] and reply.body["client_secret"]
    for bad in (b"[1]", b"{", json.dumps({"redirect_uris": [REDIRECT], "grant_types": ["password"]}).encode()):
        assert server.register(bad).status == 400
    assert server.register(b" " * (64 * 1024 + 1)).status == 400


def test_basic_credentials_are_form_encoded_and_checked(clock: Clock) -> None:
    server, _ = make(clock)
    body = register(server, token_endpoint_auth_method="client_secret_basic")
    client_id, secret = str(body["client_id"]), str(body["client_secret"])
    form = [("grant_type", "refresh_token"), ("refresh_token", "nope")]

    def basic(user: str, password: str) -> str:
        return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    assert server.token(form, basic(client_id, secret)).status == 400  # authenticated; then invalid_grant
    wrong = server.token(form, basic(client_id, secret + "x"))
    assert wrong.status == 401 and wrong.headers["WWW-Authenticate"].startswith("Basic")
    assert server.token([*form, ("client_id", client_id), ("client_secret", secret)], None).status == 401
    assert server.token(form, "Basic !!!").status == 401


def test_tables_stay_bounded(clock: Clock) -> None:
    server, _ = make(clock)
    client_id = str(register(server)["client_id"])
    pkce = Pkce.new()
    query = [
        ("response_type", "code"),
        ("client_id", client_id),
        ("code_challenge", pkce.challenge),
        ("code_challenge_method", "S256"),
        ("resource", RESOURCE),
    ]
    for _ in range(1100):
        server.authorize(query)
    assert len(server.codes) == 1000


# -- the device authorization grant (RFC 8628) ---------------------------------------------------

DEVICE_CODE = "urn:ietf:params:oauth:grant-type:device_code"


def device_client(server: DemoAuthorizationServer) -> str:
    """A public client registered for the device grant alone (no redirect URI)."""
    reply = server.register(
        json.dumps(
            {
                "token_endpoint_auth_method": "none",
                "grant_types": [DEVICE_CODE, "refresh_token"],
                "response_types": [],
            }
        ).encode()
    )
    assert reply.status == 201, reply.body
    assert reply.body is not None and reply.body.get("redirect_uris") in (None, [])
    return str(reply.body["client_id"])


def poll(server: DemoAuthorizationServer, client_id: str, device_code: str) -> Reply:
    form = [
        ("grant_type", DEVICE_CODE),
        ("device_code", device_code),
        ("client_id", client_id),
        ("resource", RESOURCE),
    ]
    return server.token(form, None)


def start_device(server: DemoAuthorizationServer, client_id: str) -> dict[str, object]:
    form = [("client_id", client_id), ("scope", "mcp:tools offline_access"), ("resource", RESOURCE)]
    reply = server.device_authorization(form, None)
    assert reply.status == 200, reply.body
    assert reply.body is not None
    return reply.body


def test_device_grant_pending_then_approved_on_time(clock: Clock) -> None:
    server, resource = make(clock, device_interval=2)
    client_id = device_client(server)
    started = start_device(server, client_id)
    assert started["interval"] == 2 and started["expires_in"] == 600
    assert started["verification_uri"] == f"{ISSUER}/device"
    assert started["verification_uri_complete"] == f"{ISSUER}/device?user_code={started['user_code']}"
    device_code = str(started["device_code"])
    clock.now += 2
    assert (poll(server, client_id, device_code).body or {})["error"] == "authorization_pending"
    typed = str(started["user_code"]).lower().replace("-", "")  # as a person might type it
    assert server.verify([("user_code", typed)]).status == 200
    clock.now += 2
    tokens = poll(server, client_id, device_code)
    assert tokens.status == 200 and tokens.body is not None and tokens.body["refresh_token"]
    assert resource.check(f"Bearer {tokens.body['access_token']}", None) is None
    assert (poll(server, client_id, device_code).body or {})["error"] == "invalid_grant"  # used once


def test_device_polls_too_soon_slow_down_and_the_interval_grows(clock: Clock) -> None:
    server, _ = make(clock, device_interval=1)
    client_id = device_client(server)
    device_code = str(start_device(server, client_id)["device_code"])
    clock.now += 0.5
    assert (poll(server, client_id, device_code).body or {})["error"] == "slow_down"  # interval now 6 s
    clock.now += 1
    assert (poll(server, client_id, device_code).body or {})["error"] == "slow_down"  # interval now 11 s
    clock.now += 11
    assert (poll(server, client_id, device_code).body or {})["error"] == "authorization_pending"


def test_device_slow_down_first_poll_when_asked(clock: Clock) -> None:
    server, _ = make(clock, device_interval=1, device_slow_down=True)
    client_id = device_client(server)
    device_code = str(start_device(server, client_id)["device_code"])
    clock.now += 1
    assert (poll(server, client_id, device_code).body or {})["error"] == "slow_down"
    clock.now += 6
    assert (poll(server, client_id, device_code).body or {})["error"] == "authorization_pending"


def test_device_code_refused_or_expired(clock: Clock) -> None:
    server, _ = make(clock, device_interval=1, device_ttl=5)
    client_id = device_client(server)
    refused = start_device(server, client_id)
    assert server.verify([("user_code", str(refused["user_code"])), ("deny", "1")]).status == 200
    clock.now += 1
    assert (poll(server, client_id, str(refused["device_code"])).body or {})["error"] == "access_denied"
    expired = start_device(server, client_id)
    clock.now += 5
    assert (poll(server, client_id, str(expired["device_code"])).body or {})["error"] == "expired_token"
    assert server.verify([("user_code", str(expired["user_code"]))]).status == 400
    assert server.verify([]).status == 400


def test_device_grant_needs_a_client_registered_for_it(clock: Clock) -> None:
    server, _ = make(clock)
    client_id = str(register(server, grant_types=["authorization_code", "refresh_token"])["client_id"])
    form = [("client_id", client_id), ("resource", RESOURCE)]
    assert (server.device_authorization(form, None).body or {})["error"] == "unauthorized_client"
    without_uri = json.dumps({"token_endpoint_auth_method": "none", "grant_types": ["authorization_code"]})
    assert server.register(without_uri.encode()).status == 400  # a redirect flow still needs its URI
