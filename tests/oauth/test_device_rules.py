"""The device authorization grant's rules without a server: which endpoints are used, how the server's
numbers are bounded, when the grant is chosen instead of the browser flow."""

from __future__ import annotations

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.oauth.device import has_browser, parse_authorization, wanted
from mcp_tasks_jupyter.oauth.discovery import ServerMetadata, https_or_loopback
from mcp_tasks_jupyter.redact import scrub

ANSWER = {
    "device_code": "device-code-that-is-a-secret-0123456789",
    "user_code": "WDJB-MJHT",
    "verification_uri": "https://auth.example.com/device",
    "verification_uri_complete": "https://auth.example.com/device?user_code=WDJB-MJHT",
    "expires_in": 900,
    "interval": 5,
}


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://auth.example.com/device", True),
        ("http://127.0.0.1:8080/device", True),
        ("http://localhost/device", True),
        ("http://[::1]:9/device", True),
        ("http://auth.example.com/device", False),
        ("http://127.0.0.1.example.com/device", False),
        ("ftp://auth.example.com/device", False),
        ("https://", False),
        ("https://auth.example.com:99999/device", False),
        (None, False),
        (42, False),
    ],
)
def test_which_device_endpoints_are_used(url: object, ok: bool) -> None:
    assert https_or_loopback(url) is ok


def test_the_answer_is_checked_and_its_numbers_bounded() -> None:
    parsed = parse_authorization(ANSWER, "lab")
    assert (parsed.user_code, parsed.interval, parsed.expires_in) == ("WDJB-MJHT", 5.0, 900.0)
    assert parsed.verification_uri_complete == ANSWER["verification_uri_complete"]
    assert "device-code-that-is-a-secret" not in scrub(f"polling with {parsed.device_code}")
    for interval, used in (
        (0, 1.0),
        (-3, 1.0),
        (3600, 60.0),
        (None, 5.0),
        (True, 5.0),
        ("5", 5.0),
        (float("nan"), 5.0),
    ):
        assert parse_authorization({**ANSWER, "interval": interval}, "lab").interval == used
    for life, used in ((10**9, 1800.0), (0, 1.0), (None, 1800.0)):
        assert parse_authorization({**ANSWER, "expires_in": life}, "lab").expires_in == used
    plain = parse_authorization({**ANSWER, "verification_uri_complete": "http://evil.example.com/d"}, "lab")
    assert plain.verification_uri_complete is None  # the person is sent to the plain URI with the code


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"device_code": ""}, "device_code"),
        ({"user_code": None}, "user_code"),
        ({"user_code": "X" * 65}, "user_code"),
        ({"user_code": "AB\nCD"}, "user_code"),
        ({"verification_uri": "http://auth.example.com/device"}, "not an https URL"),
        ({"verification_uri": None}, "not an https URL"),
    ],
)
def test_an_unusable_answer_is_refused_naming_the_server(change: dict[str, object], why: str) -> None:
    with pytest.raises(mtj.SignInFailed, match=why) as failure:
        parse_authorization({**ANSWER, **change}, "lab")
    assert "lab" in str(failure.value)


@pytest.mark.parametrize(
    ("env", "platform", "browser"),
    [
        ({}, "linux", False),
        ({"DISPLAY": ":0"}, "linux", True),
        ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", True),
        ({"BROWSER": "w3m"}, "linux", True),
        ({}, "darwin", True),
        ({"SSH_CONNECTION": "192.0.2.1 5 192.0.2.2 22"}, "darwin", False),
        ({"SSH_TTY": "/dev/pts/1"}, "win32", False),
    ],
)
def test_whether_a_browser_could_open_here(env: dict[str, str], platform: str, browser: bool) -> None:
    assert has_browser(env, platform) is browser


def test_when_the_device_grant_is_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    offered = ServerMetadata(
        "https://a", "https://a/authorize", "https://a/token", device_authorization_endpoint="https://a/d"
    )
    plain = ServerMetadata("https://a", "https://a/authorize", "https://a/token")
    assert wanted(mtj.OAuth(), offered)  # a terminal without a browser
    assert not wanted(mtj.OAuth(), plain)  # not offered: the printed link, as before
    assert not wanted(mtj.OAuth(open_url=print), offered)  # a link can be shown (a notebook)
    assert wanted(mtj.OAuth(grant="device_code", open_url=print), plain)  # asked for (fails: not offered)
    assert not wanted(mtj.OAuth(grant="client_credentials", client_id="c", client_secret="s-123456"), offered)
    monkeypatch.setenv("DISPLAY", ":0")
    assert not wanted(mtj.OAuth(), offered)  # a desktop: the browser opens


def test_mcp_json_asks_for_the_device_grant() -> None:
    from mcp_tasks_jupyter.oauth.settings import OAuth

    settings = OAuth.from_config({"grant": "device_code", "client_id": "lab-cli"}, "mcp.json servers.lab")
    assert settings.grant == "device_code" and not settings.headless
