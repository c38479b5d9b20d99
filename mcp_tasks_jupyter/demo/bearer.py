"""The demo's MCP endpoint as an OAuth protected resource: its metadata (RFC 9728) and the Bearer check
(RFC 6750) every request to ``/mcp`` passes with ``--auth``. Framework-free, like :mod:`.auth_server`.

* No ``Authorization: Bearer`` header: 401 with ``WWW-Authenticate: Bearer
  resource_metadata="<base>/.well-known/oauth-protected-resource/mcp", scope="<required scopes>"``.
* A token the authorization server did not issue for this resource, or one that expired: the same
  401 plus ``error="invalid_token"`` and an ``error_description``.
* A valid token without every scope the request needs (the required scopes; for a ``tools/call``
  of a tool with a ``--auth-tool-scope``, that scope too): 403 with ``error="insufficient_scope"``
  and ``scope`` listing all the scopes the request needs.

* A DPoP-bound token (``--auth-dpop``) only as ``Authorization: DPoP TOKEN`` with a ``DPoP`` proof
  for this request (``htm``, ``htu``, ``ath``) signed by the key it is bound to; else 401 with
  ``WWW-Authenticate: DPoP error="invalid_token"`` (or ``invalid_dpop_proof``, ``use_dpop_nonce``
  with a ``DPoP-Nonce``). A Bearer token presented as DPoP is refused too.

Tokens never appear in an answer or a log line.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from . import dpop_check
from .auth_server import AuthSettings, DemoAuthorizationServer, Reply
from .dpop_check import ProofError

WELL_KNOWN = "/.well-known/oauth-protected-resource"


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class ProtectedResource:
    """The MCP endpoint ``resource`` (its URL), protected by ``authorization_server``."""

    def __init__(
        self, resource: str, authorization_server: DemoAuthorizationServer, settings: AuthSettings
    ) -> None:
        self.resource = resource
        self.authorization_server = authorization_server
        self.settings = settings
        base, _, path = resource.partition("://")
        host, slash, rest = path.partition("/")
        #: The path-inserted well-known URL of the metadata (RFC 9728 §3.1), the one the 401 names.
        self.metadata_url = f"{base}://{host}{WELL_KNOWN}{slash}{rest}"

    def metadata(self) -> dict[str, Any]:
        """The protected resource metadata (RFC 9728 §2)."""
        return {
            "resource": self.resource,
            "authorization_servers": [self.authorization_server.issuer],
            "scopes_supported": list(self.settings.required),
            "bearer_methods_supported": ["header"],
            "resource_name": "mcp-tasks-jupyter demo server",
        }

    def needed_scopes(self, message: Any) -> tuple[str, ...]:
        """The scopes a request needs: the required ones, plus the tool's for a ``tools/call``."""
        needed = self.settings.required
        if isinstance(message, dict) and message.get("method") == "tools/call":
            params = message.get("params")
            name = params.get("name") if isinstance(params, dict) else None
            extra = self.settings.tool_scopes.get(name) if isinstance(name, str) else None
            if extra is not None and extra not in needed:
                needed = (*needed, extra)
        return needed

    def check(
        self, authorization: str | None, message: Any = None, *, proof: str | None = None, method: str = "POST"
    ) -> Reply | None:
        """None when ``authorization`` (the header's value) carries a token good for ``message``
        (the parsed JSON-RPC message of a POST; None for GET and DELETE) and, for a DPoP-bound token,
        ``proof`` (the ``DPoP`` header) proves it for ``method`` on this resource; else the 401/403."""
        scheme, _, token = (authorization or "").strip().partition(" ")
        if scheme.lower() not in ("bearer", "dpop"):
            return self._challenge(
                401, None, "this MCP server needs an OAuth access token", self.settings.required
            )
        token = token.strip()
        record = self.authorization_server.lookup(token) if token else None
        if record is None or record.resource != self.resource:
            return self._challenge(
                401, "invalid_token", "the access token is not valid here", self.settings.required
            )
        if self.authorization_server.expired(record):
            return self._challenge(401, "invalid_token", "the access token expired", self.settings.required)
        refused = self._dpop_problem(scheme.lower() == "dpop", token, record.jkt, proof, method)
        if refused is not None:
            return refused
        needed = self.needed_scopes(message)
        missing = [scope for scope in needed if scope not in record.scope]
        if missing:
            description = f"this request needs the scope {' '.join(missing)}"
            return self._challenge(403, "insufficient_scope", description, needed)
        return None

    def _dpop_problem(
        self, as_dpop: bool, token: str, jkt: str | None, proof: str | None, method: str
    ) -> Reply | None:
        """None when the token is presented as it is bound (Bearer, or DPoP with a good proof)."""
        if jkt is None:
            if as_dpop:
                return self._dpop_challenge(
                    "invalid_token", "this access token is not DPoP-bound: send it as Bearer"
                )
            return None
        if not as_dpop:
            return self._dpop_challenge("invalid_token", "this access token is DPoP-bound: send it as DPoP")
        checked = self.authorization_server.proofs.check(proof, method, self.resource, token)
        if isinstance(checked, ProofError):
            return self._dpop_challenge(checked.error, checked.description)
        if checked != jkt:
            return self._dpop_challenge("invalid_dpop_proof", "the DPoP proof is signed by another key")
        return None

    def _dpop_challenge(self, error: str, description: str) -> Reply:
        params = [
            f"error={_quoted(error)}",
            f"error_description={_quoted(description)}",
            f"algs={_quoted(' '.join(dpop_check.ALGORITHMS))}",
            f"resource_metadata={_quoted(self.metadata_url)}",
        ]
        headers = {"WWW-Authenticate": "DPoP " + ", ".join(params), **self.authorization_server.nonce_header}
        return Reply(401, {"error": error, "error_description": description}, headers)

    def _challenge(self, status: int, error: str | None, description: str, scopes: Iterable[str]) -> Reply:
        params = [f"resource_metadata={_quoted(self.metadata_url)}"]
        scope = " ".join(scopes)
        if scope:
            params.append(f"scope={_quoted(scope)}")
        if error is not None:
            params += [f"error={_quoted(error)}", f"error_description={_quoted(description)}"]
        body = {"error": error or "unauthorized", "error_description": description}
        return Reply(status, body, {"WWW-Authenticate": "Bearer " + ", ".join(params)})
