"""``--auth`` over HTTP: the authorization server's and the protected resource's routes, and the guard in
front of ``/mcp``. Everything lives on the demo's own origin (``http://127.0.0.1:PORT``):

==============================================  ===============================================
``GET /.well-known/oauth-protected-resource/mcp``  protected resource metadata (RFC 9728, path-inserted)
``GET /.well-known/oauth-protected-resource``      the same document (the root form)
``GET /.well-known/oauth-authorization-server``    authorization server metadata (RFC 8414); the
                                                   issuer is ``http://127.0.0.1:PORT``
``POST /register``                                 dynamic client registration (RFC 7591), JSON
``GET|POST /authorize``                            approves at once: 302 to the redirect URI
``POST /token``                                    form-encoded token requests (with
                                                   ``--auth-dpop``: and a ``DPoP`` proof)
``POST /device_authorization``                     a device code and a user code (RFC 8628)
``GET /device?user_code=CODE[&deny=1]``            the person approves (or refuses) the code
==============================================  ===============================================

The logic is in :mod:`.auth_server` and :mod:`.bearer`; this module only reads requests (bounded) and
writes replies.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .auth_server import AuthSettings, DemoAuthorizationServer, Reply, oauth_error
from .bearer import WELL_KNOWN, ProtectedResource

MAX_FORM_BYTES = 16 * 1024
MAX_JSON_BYTES = 64 * 1024
FORM_TYPE = "application/x-www-form-urlencoded"


def to_response(reply: Reply) -> Response:
    """A :class:`Reply` as a starlette response."""
    if reply.body is None:
        return Response(status_code=reply.status, headers=dict(reply.headers))
    return JSONResponse(reply.body, status_code=reply.status, headers=dict(reply.headers))


async def _read(request: Request, limit: int) -> bytes | None:
    """The request body, or None when it is longer than ``limit`` bytes (read no further)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


class DemoAuth:
    """The authorization server and protected resource of one demo server at ``base_url``."""

    def __init__(self, base_url: str, settings: AuthSettings) -> None:
        self.base_url = base_url.rstrip("/")
        self.resource_url = f"{self.base_url}/mcp"
        self.authorization_server = DemoAuthorizationServer(self.base_url, self.resource_url, settings)
        self.resource = ProtectedResource(self.resource_url, self.authorization_server, settings)
        self._parse_calls = bool(settings.tool_scopes)  # only then does the body matter to the check

    @property
    def routes(self) -> list[Route]:
        metadata_path = self.resource.metadata_url.removeprefix(self.base_url)
        return [
            Route(metadata_path, self._resource_metadata, methods=["GET"]),
            Route(WELL_KNOWN, self._resource_metadata, methods=["GET"]),
            Route("/.well-known/oauth-authorization-server", self._server_metadata, methods=["GET"]),
            Route("/register", self._register, methods=["POST"]),
            Route("/authorize", self._authorize, methods=["GET", "POST"]),
            Route("/token", self._token, methods=["POST"]),
            Route("/device_authorization", self._device_authorization, methods=["POST"]),
            Route("/device", self._verify, methods=["GET"]),
        ]

    async def guard(self, request: Request) -> Response | None:
        """None when the request to ``/mcp`` carries a good token; else the 401/403 to answer."""
        message: Any = None
        if self._parse_calls and request.method == "POST":
            try:
                message = json.loads(await request.body())  # starlette keeps the body for the endpoint
            except ValueError:
                message = None  # the endpoint answers the parse error, once the token is checked
        proof = request.headers.get("dpop")
        reply = self.resource.check(
            request.headers.get("authorization"), message, proof=proof, method=request.method
        )
        return None if reply is None else to_response(reply)

    async def _resource_metadata(self, request: Request) -> Response:
        return JSONResponse(self.resource.metadata())

    async def _server_metadata(self, request: Request) -> Response:
        return JSONResponse(self.authorization_server.metadata())

    async def _register(self, request: Request) -> Response:
        body = await _read(request, MAX_JSON_BYTES)
        if body is None:
            return to_response(
                oauth_error(400, "invalid_client_metadata", "the registration request is too large")
            )
        return to_response(self.authorization_server.register(body))

    async def _authorize(self, request: Request) -> Response:
        pairs = list(request.query_params.multi_items())
        if request.method == "POST":
            form = await self._form(request)
            if isinstance(form, Response):
                return form
            pairs += form
        return to_response(self.authorization_server.authorize(pairs))

    async def _token(self, request: Request) -> Response:
        form = await self._form(request)
        if isinstance(form, Response):
            return form
        headers = request.headers
        return to_response(
            self.authorization_server.token(form, headers.get("authorization"), headers.get("dpop"))
        )

    async def _device_authorization(self, request: Request) -> Response:
        form = await self._form(request)
        if isinstance(form, Response):
            return form
        authorization = request.headers.get("authorization")
        return to_response(self.authorization_server.device_authorization(form, authorization))

    async def _verify(self, request: Request) -> Response:
        return to_response(self.authorization_server.verify(list(request.query_params.multi_items())))

    @staticmethod
    async def _form(request: Request) -> list[tuple[str, str]] | Response:
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != FORM_TYPE:
            return to_response(oauth_error(400, "invalid_request", f"the body must be {FORM_TYPE}"))
        body = await _read(request, MAX_FORM_BYTES)
        if body is None:
            return to_response(oauth_error(400, "invalid_request", "the form is too large"))
        try:
            return parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
        except UnicodeDecodeError:
            return to_response(oauth_error(400, "invalid_request", "the form is not UTF-8"))
