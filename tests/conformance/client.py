"""The client under test for the official conformance suite (see SCENARIOS.md).

    conformance client --command "python tests/conformance/client.py" --scenario NAME [--spec-version V]

The runner appends the scripted server's URL as the last argument and sets
MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_PROTOCOL_VERSION and, for some scenarios,
MCP_CONFORMANCE_CONTEXT (JSON). Exit 0 when the scenario's steps ran.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import httpx

import mcp_tasks_jupyter as mtj

TIMEOUT = 25  # seconds; the runner kills the client at 30
STATEFUL_VERSIONS = {"2025-03-26", "2025-06-18", "2025-11-25"}


async def accept_with_defaults(request: dict[str, Any]) -> dict[str, Any]:
    """Accept every elicitation, answering each field that has a schema default with that default."""
    properties = (request.get("requestedSchema") or {}).get("properties") or {}
    return {"action": "accept", "content": {k: p["default"] for k, p in properties.items() if "default" in p}}


async def initialize(client: Any, context: dict) -> None:
    pass  # connecting is the whole scenario


async def tools_call(client: Any, context: dict) -> None:
    await client.list_tools()
    await client.call_tool("add_numbers", {"a": 5, "b": 3})


async def elicitation_defaults(client: Any, context: dict) -> None:
    await client.list_tools()
    await client.call_tool("test_client_elicitation_defaults", {})


async def sse_retry(client: Any, context: dict) -> None:
    await client.list_tools()
    await client.call_tool("test_reconnection", {})


async def schema_preservation(client: Any, context: dict) -> None:
    tools = {tool.name: tool for tool in await client.list_tools()}
    await client.call_tool("json_schema_echo", {"schema": tools["json_schema_2020_12_tool"].input_schema})


async def list_only(client: Any, context: dict) -> None:
    await client.list_tools()


async def request_state(client: Any, context: dict) -> None:
    await client.list_tools()
    for name in ("test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"):
        await client.call_tool(name, {})


async def call_every_tool(client: Any, context: dict) -> None:
    """Call each tool the client kept, with a placeholder for each required argument."""
    for tool in await client.list_tools():
        await client.call_tool(tool.name, {name: "x" for name in tool.input_schema.get("required", [])})


async def custom_headers(client: Any, context: dict) -> None:
    await client.list_tools()
    for call in context["toolCalls"]:
        await client.call_tool(call["name"], call["arguments"])


SCENARIOS = {
    "initialize": initialize,
    "tools_call": tools_call,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
    "json-schema-2020-12-preservation": schema_preservation,
    "request-metadata": list_only,
    "sep-2322-client-request-state": request_state,
    "http-standard-headers": call_every_tool,
    "http-custom-headers": custom_headers,
    "http-invalid-tool-headers": call_every_tool,
    "json-schema-ref-no-deref": list_only,
}


# -- authorization (auth/*): the suite's authorization server approves at once -------------------------

#: The Client ID Metadata Document URL the suite's basic-cimd scenario expects us to publish.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


async def follow_sign_in(url: str) -> None:
    """Stand in for the person: open the authorization URL, then take its redirect (the code) to our
    loopback listener, as a browser would."""
    async with httpx.AsyncClient(timeout=10, follow_redirects=False) as http:
        answer = await http.get(url)
        location = answer.headers.get("location")
        if answer.status_code not in (301, 302, 303, 307) or not location:
            raise RuntimeError(f"the authorization endpoint answered {answer.status_code} without a redirect")
        await http.get(location)


def oauth_for(scenario: str, context: dict, store: str) -> mtj.OAuth:
    """The settings each scenario's context calls for (the [extension] ones sign in headless; DPoP
    needs no setting: the authorization server's metadata offers it)."""
    if scenario == "auth/client-credentials-basic":
        return mtj.OAuth(
            grant="client_credentials",
            client_id=context.get("client_id"),
            client_secret=context.get("client_secret"),
            token_store=store,
        )
    if scenario == "auth/client-credentials-jwt":
        return mtj.OAuth(
            grant="client_credentials",
            client_id=context["client_id"],
            private_key=context["private_key_pem"],
            signing_algorithm=context.get("signing_algorithm"),
            token_store=store,
        )
    if scenario == "auth/wif-jwt-bearer":
        # The workload's token as a platform hands it over: a file, read at each sign-in.
        # MTJ_CONFORMANCE_WIF_TOKEN picks another of the context's tokens (expired_jwt, wrong_audience_jwt).
        token_file = os.path.join(store, "workload-token")
        with open(token_file, "w", encoding="utf-8") as f:
            f.write(context[os.environ.get("MTJ_CONFORMANCE_WIF_TOKEN", "valid_jwt")])
        return mtj.OAuth(
            grant="jwt_bearer", client_id=context.get("client_id"), assertion_file=token_file, token_store=store
        )
    if scenario == "auth/enterprise-managed-authorization":
        return mtj.OAuth(
            grant="enterprise",
            client_id=context["client_id"],
            client_secret=context["client_secret"],
            assertion=context["idp_id_token"],
            idp_issuer=context["idp_issuer"],
            idp_client_id=context["idp_client_id"],
            token_store=store,
        )
    return mtj.OAuth(
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
        open_url=follow_sign_in,
        client_metadata_url=CLIENT_METADATA_URL if scenario == "auth/basic-cimd" else None,
        token_store=store,
        sign_in_timeout=15,
    )


async def auth_flow(client: Any, context: dict) -> None:
    await client.list_tools()
    for tool in await client.list_tools():
        await client.call_tool(tool.name, {name: "x" for name in tool.input_schema.get("required", [])})
        break


async def main() -> int:
    scenario = os.environ["MCP_CONFORMANCE_SCENARIO"]
    if scenario.startswith("auth/"):
        return await main_auth(scenario)
    if scenario not in SCENARIOS:
        print(f"client.py: no steps for scenario {scenario!r}", file=sys.stderr)
        return 2
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    url = sys.argv[-1]
    # The stateful wire (initialize) is the library's default; the stateless one must be asked for.
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "2025-11-25")
    options = {} if version in STATEFUL_VERSIONS else {"protocol_version": version}
    async with asyncio.timeout(TIMEOUT):
        async with mtj.connect(url, elicitation_handler=accept_with_defaults, **options) as client:
            await SCENARIOS[scenario](client, context)
    return 0


async def main_auth(scenario: str) -> int:
    import tempfile

    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    url = sys.argv[-1]
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "2025-11-25")
    options = {} if version in STATEFUL_VERSIONS else {"protocol_version": version}
    with tempfile.TemporaryDirectory() as store:
        auth = oauth_for(scenario, context, store)
        async with asyncio.timeout(TIMEOUT):
            async with mtj.connect(url, auth=auth, elicitation_handler=accept_with_defaults, **options) as client:
                await auth_flow(client, context)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
