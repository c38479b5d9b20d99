"""Where OAuth metadata is looked for, in the spec's order, and which resources name a server."""

from __future__ import annotations

import pytest

from mcp_tasks_jupyter.oauth.discovery import covers, resource_metadata_urls, server_metadata_urls


def test_resource_metadata_challenge_first_then_path_inserted_then_root() -> None:
    urls = resource_metadata_urls("https://api.example.com/v1/mcp", "https://api.example.com/meta")
    assert urls == [
        "https://api.example.com/meta",
        "https://api.example.com/.well-known/oauth-protected-resource/v1/mcp",
        "https://api.example.com/.well-known/oauth-protected-resource",
    ]


def test_resource_metadata_at_the_root_only_once() -> None:
    assert resource_metadata_urls("http://127.0.0.1:9/", None) == [
        "http://127.0.0.1:9/.well-known/oauth-protected-resource"
    ]


def test_server_metadata_with_a_path_tries_the_three_variants_in_order() -> None:
    assert server_metadata_urls("https://auth.example.com/tenant1") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration",
    ]
    assert server_metadata_urls("https://auth.example.com") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration",
    ]


@pytest.mark.parametrize(
    ("resource", "server", "ok"),
    [
        ("http://localhost:3000/mcp", "http://localhost:3000/mcp", True),
        ("http://localhost:3000", "http://localhost:3000/mcp", True),  # a parent path
        ("http://LOCALHOST:3000/", "http://localhost:3000/mcp", True),
        ("https://evil.example.com/mcp", "http://localhost:3000/mcp", False),
        ("http://localhost:3001/mcp", "http://localhost:3000/mcp", False),
        ("https://localhost:3000/mcp", "http://localhost:3000/mcp", False),
        ("http://localhost:3000/mc", "http://localhost:3000/mcp", False),  # not on a / boundary
        ("http://localhost:3000/mcp/deeper", "http://localhost:3000/mcp", False),
        ("http://localhost:3000/mcp?x=1", "http://localhost:3000/mcp", False),
    ],
)
def test_which_resources_name_the_server(resource: str, server: str, ok: bool) -> None:
    assert covers(resource, server) is ok
