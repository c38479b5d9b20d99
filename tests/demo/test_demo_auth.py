"""``demo --http --auth`` as a real subprocess on loopback, driven with plain httpx: the whole OAuth flow
(register, authorize without following the redirect, token, refresh) and the Bearer-protected ``/mcp``."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.auth_demo import (
    REDIRECT_URI,
    AuthDemo,
    Pkce,
    RegisteredClient,
    Tokens,
    authorize,
    redirect_params,
    refresh,
    register,
    sign_in,
    start_auth_demo,
    token_request,
)

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
TIMEOUT = 10.0


@pytest.fixture(scope="module")
def demo() -> Iterator[AuthDemo]:
    with start_auth_demo() as running:
        yield running


def rpc(method: str, params: dict[str, Any] | None = None, id_: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params or {}}


INITIALIZE = rpc(
    "initialize",
    {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "auth-tests", "version": "0"}},
)


class Session:
    """A 2025-11-25 session over HTTP whose every request carries the current access token."""

    def __init__(self, demo: AuthDemo, tokens: Tokens) -> None:
        self.demo = demo
        self.tokens = tokens
        self.session_id = ""
        self.ids = iter(range(2, 10_000))

    def headers(self) -> dict[str, str]:
        headers = {**ACCEPT, **self.tokens.bearer}
        if self.session_id:
            headers |= {"Mcp-Session-Id": self.session_id, "MCP-Protocol-Version": "2025-11-25"}
        return headers

    def post(self, message: dict[str, Any]) -> httpx.Response:
        return httpx.post(self.demo.url, json=message, headers=self.headers(), timeout=TIMEOUT)

    def open(self) -> None:
        answer = self.post(INITIALIZE)
        assert answer.status_code == 200, answer.text
        self.session_id = answer.headers["mcp-session-id"]
        assert self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202

    def result(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        answer = self.post(rpc(method, params, next(self.ids)))
        assert answer.status_code == 200, answer.text
        return answer.json()["result"]


def challenge(answer: httpx.Response) -> str:
    return answer.headers["www-authenticate"]


def test_the_metadata_documents(demo: AuthDemo) -> None:
    issuer = demo.issuer
    for url in (demo.resource_metadata_url, f"{issuer}/.well-known/oauth-protected-resource"):
        document = httpx.get(url, timeout=TIMEOUT).json()
        assert document["resource"] == demo.url
        assert document["authorization_servers"] == [issuer]
        assert document["scopes_supported"] == ["mcp:tools"]
    server = httpx.get(demo.authorization_server_metadata_url, timeout=TIMEOUT).json()
    assert server["issuer"] == issuer
    assert server["authorization_endpoint"] == demo.authorization_endpoint
    assert server["token_endpoint"] == demo.token_endpoint
    assert server["registration_endpoint"] == demo.registration_endpoint
    assert server["code_challenge_methods_supported"] == ["S256"]
    assert server["token_endpoint_auth_methods_supported"] == ["none", "client_secret_basic", "client_secret_post"]
    assert server["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert server["response_types_supported"] == ["code"]
    assert server["scopes_supported"] == ["mcp:tools", "offline_access"]
    assert server["authorization_response_iss_parameter_supported"] is True
    assert server["client_id_metadata_document_supported"] is False


def test_every_mcp_request_needs_a_token(demo: AuthDemo) -> None:
    expected = f'Bearer resource_metadata="{demo.resource_metadata_url}", scope="mcp:tools"'
    answers = [
        httpx.post(demo.url, json=INITIALIZE, headers=ACCEPT, timeout=TIMEOUT),
        httpx.get(demo.url, headers={"Accept": "text/event-stream"}, timeout=TIMEOUT),
        httpx.delete(demo.url, headers={"Mcp-Session-Id": "x"}, timeout=TIMEOUT),
        httpx.post(demo.url, content=b"{not json", headers=ACCEPT, timeout=TIMEOUT),  # the token comes first
    ]
    for answer in answers:
        assert answer.status_code == 401, answer.request
        assert challenge(answer) == expected
    wrong = httpx.post(demo.url, json=INITIALIZE, headers={**ACCEPT, "Authorization": "Bearer x" * 3})
    assert wrong.status_code == 401
    assert challenge(wrong).startswith(expected + ', error="invalid_token"')


@pytest.mark.parametrize("auth_method", ["none", "client_secret_basic", "client_secret_post"])
def test_sign_in_then_post_get_and_delete_with_the_token(demo: AuthDemo, auth_method: str) -> None:
    client = register(demo, auth_method=auth_method)
    assert (client.client_secret is None) == (auth_method == "none")
    pkce = Pkce.new()
    params = redirect_params(authorize(demo, client, pkce, state="xyz"))
    assert params["state"] == "xyz" and params["iss"] == demo.issuer and params["code"]
    form = {
        "grant_type": "authorization_code",
        "code": params["code"],
        "redirect_uri": REDIRECT_URI,
        "code_verifier": pkce.verifier,
        "resource": demo.url,
    }
    answer = token_request(demo, client, form)
    assert answer.status_code == 200 and answer.headers["cache-control"] == "no-store"
    body = answer.json()
    assert body["token_type"] == "Bearer" and body["expires_in"] == 3600
    assert body["scope"] == "mcp:tools offline_access" and body["refresh_token"]
    tokens = Tokens(client, body["access_token"], body["refresh_token"], body["scope"], body["expires_in"])

    session = Session(demo, tokens)
    session.open()
    echoed = session.result("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    assert echoed["content"][0]["text"] == "hi"
    with httpx.stream("GET", demo.url, headers=session.headers(), timeout=TIMEOUT) as stream:
        assert stream.status_code == 200 and stream.headers["content-type"].startswith("text/event-stream")
    assert httpx.delete(demo.url, headers=session.headers(), timeout=TIMEOUT).status_code == 200


def test_authorization_requests_that_are_refused(demo: AuthDemo) -> None:
    client = register(demo)
    pkce = Pkce.new()
    # no redirect URI to trust: a 400, never a redirect
    for params in ({"redirect_uri": "http://127.0.0.1:1/elsewhere"}, {"client_id": "unknown"}):
        answer = authorize(demo, client, pkce, **params)
        assert answer.status_code == 400 and "location" not in answer.headers, params
        assert answer.json()["error"] == "invalid_request"
    # errors the client hears about at its redirect URI, with state and iss
    refusals = [
        ({"resource": "http://127.0.0.1:1/mcp"}, "invalid_target"),
        ({"resource": demo.url + "/"}, "invalid_target"),
        ({"resource": ""}, "invalid_request"),
        ({"code_challenge_method": "plain", "code_challenge": pkce.verifier}, "invalid_request"),
        ({"code_challenge": ""}, "invalid_request"),
        ({"scope": "mcp:tools admin"}, "invalid_scope"),
        ({"response_type": "token"}, "unsupported_response_type"),
    ]
    for params, error in refusals:
        answer = authorize(demo, client, pkce, state="s1", **params)
        assert answer.headers["location"].startswith(REDIRECT_URI + "?"), params
        query = redirect_params(answer)
        assert (query["error"], query["state"], query["iss"]) == (error, "s1", demo.issuer), params
        assert "code" not in query


def test_token_requests_that_are_refused(demo: AuthDemo) -> None:
    client = register(demo)

    def code_and_form(**overrides: str) -> dict[str, str]:
        pkce = Pkce.new()
        code = redirect_params(authorize(demo, client, pkce))["code"]
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT_URI,
            "code_verifier": pkce.verifier,
            "resource": demo.url,
        }
        return {name: value for name, value in {**form, **overrides}.items() if value != ""}

    refusals = [
        ({"code_verifier": Pkce.new().verifier}, "invalid_grant"),
        ({"code_verifier": ""}, "invalid_grant"),
        ({"redirect_uri": "http://127.0.0.1:53682/other"}, "invalid_grant"),
        ({"resource": "http://127.0.0.1:1/mcp"}, "invalid_target"),
        ({"resource": ""}, "invalid_request"),
        ({"code": "made-up"}, "invalid_grant"),
        ({"grant_type": "password"}, "unsupported_grant_type"),
    ]
    for overrides, error in refusals:
        answer = token_request(demo, client, code_and_form(**overrides))
        assert (answer.status_code, answer.json()["error"]) == (400, error), overrides
    # a code is spent by its first redemption, good or bad
    form = code_and_form()
    assert token_request(demo, client, {**form, "code_verifier": Pkce.new().verifier}).status_code == 400
    assert token_request(demo, client, form).json()["error"] == "invalid_grant"


def test_client_authentication_by_the_registered_method_only(demo: AuthDemo) -> None:
    basic = register(demo, auth_method="client_secret_basic")
    post = register(demo, auth_method="client_secret_post")
    assert basic.client_secret and post.client_secret
    form = {"grant_type": "refresh_token", "refresh_token": "x"}
    attempts = [
        {"data": {**form, "client_id": basic.client_id, "client_secret": basic.client_secret}},
        {"data": form, "auth": (post.client_id, post.client_secret)},
        {"data": form, "auth": (basic.client_id, "wrong")},
        {"data": {**form, "client_id": post.client_id}},
        {"data": {**form, "client_id": "unknown"}},
    ]
    for attempt in attempts:
        answer = httpx.post(demo.token_endpoint, timeout=TIMEOUT, **attempt)
        assert (answer.status_code, answer.json()["error"]) == (401, "invalid_client"), attempt
        assert basic.client_secret not in answer.text and post.client_secret not in answer.text
    answer = httpx.post(demo.token_endpoint, data=form, auth=(basic.client_id, "wrong"), timeout=TIMEOUT)
    assert answer.headers["www-authenticate"].startswith("Basic")
    right = httpx.post(
        demo.token_endpoint, data=form, auth=(basic.client_id, basic.client_secret), timeout=TIMEOUT
    )
    assert (right.status_code, right.json()["error"]) == (400, "invalid_grant")  # authenticated, bad token


def test_refresh_rotates_and_a_replayed_refresh_token_ends_the_grant(demo: AuthDemo) -> None:
    first = sign_in(demo)
    second = refresh(demo, first)
    assert second.refresh_token not in (None, first.refresh_token)
    assert second.access_token != first.access_token
    session = Session(demo, second)
    session.open()
    replay = {"grant_type": "refresh_token", "refresh_token": first.refresh_token or "", "resource": demo.url}
    answer = token_request(demo, first.client, replay)
    assert (answer.status_code, answer.json()["error"]) == (400, "invalid_grant")
    cut_off = session.post(rpc("ping", id_=5))  # the grant's tokens are revoked with it
    assert cut_off.status_code == 401 and 'error="invalid_token"' in challenge(cut_off)


def test_a_refresh_token_needs_offline_access_and_the_grant_type(demo: AuthDemo) -> None:
    assert sign_in(demo, scope="mcp:tools").refresh_token is None
    assert sign_in(demo, scope="").scope == "mcp:tools"  # no scope asked: the resource's required ones
    client = register(demo, grant_types=("authorization_code",))
    tokens = sign_in(demo, client=client)
    assert tokens.refresh_token is None and "offline_access" in tokens.scope
    answer = token_request(demo, client, {"grant_type": "refresh_token", "refresh_token": "x"})
    assert answer.json()["error"] == "unauthorized_client"


def test_stateless_requests_need_the_token_too(demo: AuthDemo) -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "auth-tests", "version": "0"},
    }
    message = rpc("server/discover", {"_meta": meta})
    headers = {**ACCEPT, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}
    assert httpx.post(demo.url, json=message, headers=headers, timeout=TIMEOUT).status_code == 401
    tokens = sign_in(demo)
    answer = httpx.post(demo.url, json=message, headers={**headers, **tokens.bearer}, timeout=TIMEOUT)
    assert answer.status_code == 200 and "result" in answer.json(), answer.text


def test_a_task_runs_across_an_expiry_and_no_secret_reaches_the_output() -> None:
    with start_auth_demo("--log-level", "debug", token_ttl=1) as demo:
        client = register(demo, auth_method="client_secret_post")
        pkce = Pkce.new()
        code = redirect_params(authorize(demo, client, pkce))["code"]
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT_URI,
            "code_verifier": pkce.verifier,
            "resource": demo.url,
        }
        body = token_request(demo, client, form).json()
        tokens = Tokens(client, body["access_token"], body["refresh_token"], body["scope"], body["expires_in"])
        secrets = [code, client.client_secret, tokens.access_token, tokens.refresh_token]
        session = Session(demo, tokens)
        session.open()
        task = session.result(
            "tools/call",
            {"name": "slow_compute", "arguments": {"seconds": 2, "steps": 4}, "task": {"ttl": 60_000}},
        )["task"]
        get = {"taskId": task["taskId"]}
        deadline = time.monotonic() + 30
        while (answer := session.post(rpc("tasks/get", get, 7))).status_code == 200:
            assert time.monotonic() < deadline, "the access token never expired"
            time.sleep(0.1)
        assert answer.status_code == 401 and 'error_description="the access token expired"' in challenge(answer)
        while True:  # refresh (as often as the short ttl needs) until the task is done
            session.tokens = refresh(demo, session.tokens)
            secrets += [session.tokens.access_token, session.tokens.refresh_token]
            answer = session.post(rpc("tasks/get", get, 8))
            if answer.status_code == 200 and answer.json()["result"]["status"] == "completed":
                break
            assert time.monotonic() < deadline, answer.text
            time.sleep(0.2)
        session.tokens = refresh(demo, session.tokens)
        answer = session.post(rpc("tasks/result", get, 9))  # an event stream ending with the result
        assert answer.status_code == 200, answer.text
        last = [line for line in answer.text.splitlines() if line.startswith("data: {")][-1]
        assert json.loads(last.removeprefix("data: "))["result"]["structuredContent"]["value"] == 30  # 1+4+9+16
        output = demo.output()
        assert "OAuth client" in output  # the debug log is on, and says what happened
        for secret in secrets:
            assert secret and secret not in output


def test_a_pre_registered_client_signs_in_without_registering() -> None:
    with start_auth_demo(client_id="notebook", client_secret="s3cret") as demo:
        for method in ("client_secret_basic", "client_secret_post"):
            for redirect_uri in (REDIRECT_URI, "http://localhost:8123/any/path"):
                client = RegisteredClient("notebook", "s3cret", method, redirect_uri)
                assert sign_in(demo, client=client).refresh_token
        answer = authorize(demo, RegisteredClient("notebook", None, "none", "https://example.com/cb"), Pkce.new())
        assert answer.status_code == 400 and "location" not in answer.headers
        wrong = RegisteredClient("notebook", "wrong", "client_secret_post", REDIRECT_URI)
        pkce = Pkce.new()
        code = redirect_params(authorize(demo, wrong, pkce))["code"]
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT_URI}
        answer = token_request(demo, wrong, {**form, "code_verifier": pkce.verifier, "resource": demo.url})
        assert (answer.status_code, answer.json()["error"]) == (401, "invalid_client")
        assert "s3cret" not in demo.output()
