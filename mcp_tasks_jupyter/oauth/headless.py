"""The headless grants: tokens without a person (papermill, CI, a scheduled job, a managed workload).

- ``client_credentials``: the client's own credentials, a secret or a ``private_key_jwt`` assertion;
- ``jwt_bearer`` (workload identity federation, RFC 7523 section 2.1): the token the platform gives
  the workload, read afresh for every sign-in;
- ``enterprise`` (enterprise-managed authorization): the identity provider's ID token exchanged there
  for an authorization grant for this server (RFC 8693, an ID-JAG), then the JWT bearer grant with it
  at the server's authorization server.

None of them waits for anyone, retries or falls back to another grant: a refusal raises
:class:`~mcp_tasks_jupyter.errors.SignInFailed` at once, naming the grant and the server's error.
"""

from __future__ import annotations

import httpx

from ..errors import SignInFailed, UsageError
from . import discovery, mechanics
from .assertions import private_key
from .discovery import ServerMetadata
from .mechanics import PRIVATE_KEY_JWT, Proofs
from .registration import issuer_key, secret_method
from .settings import OAuth
from .store import ClientRegistration, Tokens


def client_registration(settings: OAuth, metadata: ServerMetadata) -> ClientRegistration:
    """Who the client is at the server's authorization server (the secret as it is now; no key)."""
    issuer = issuer_key(metadata)
    if settings.private_key is not None or settings.private_key_file is not None:
        return ClientRegistration(issuer, settings.client_id or "", None, PRIVATE_KEY_JWT)
    secret = settings.secret()
    method = secret_method(metadata) if secret else "none"
    return ClientRegistration(issuer, settings.client_id or "", secret, method)


async def headless_tokens(
    http: httpx.AsyncClient,
    settings: OAuth,
    metadata: ServerMetadata,
    scopes: list[str],
    resource: str,
    server: str,
    proofs: Proofs,
) -> tuple[ClientRegistration, Tokens]:
    """Tokens by the settings' headless grant (a refusal raises SignInFailed naming it)."""
    grant = settings.grant
    try:
        client = client_registration(settings, metadata)
        if client.auth_method == PRIVATE_KEY_JWT:
            proofs.signing_key = private_key(
                settings.private_key, settings.private_key_file, settings.signing_algorithm
            )
        if grant == "client_credentials":
            tokens = await mechanics.client_credentials(http, metadata, client, scopes, resource, server, proofs)
        elif grant == "jwt_bearer":
            assertion = settings.identity_assertion()
            tokens = await mechanics.jwt_bearer(
                http, metadata, client, assertion, scopes, resource, server, proofs
            )
        else:
            authorization_grant = await _id_jag(http, settings, metadata, scopes, resource, server)
            tokens = await mechanics.jwt_bearer(
                http, metadata, client, authorization_grant, scopes, resource, server, proofs, grant="enterprise"
            )
    except UsageError as exc:
        raise SignInFailed(f"the {grant} grant cannot start: {exc.detail}", server=server) from None
    # The secret and the key stay in the settings (or their files): the store keeps only whose tokens these are.
    return ClientRegistration(client.issuer, client.client_id, None, client.auth_method), tokens


async def _id_jag(
    http: httpx.AsyncClient,
    settings: OAuth,
    metadata: ServerMetadata,
    scopes: list[str],
    resource: str,
    server: str,
) -> str:
    """The identity provider's authorization grant for this server, for its ID token."""
    assert settings.idp_client_id is not None
    token_endpoint = settings.idp_token_endpoint
    method = "client_secret_basic"
    if settings.idp_issuer is not None:
        idp = await discovery.discover_server(http, settings.idp_issuer, server)
        token_endpoint = idp.token_endpoint
        method = secret_method(idp)
    assert token_endpoint is not None
    secret = settings.idp_client_secret
    idp_client = ClientRegistration(
        settings.idp_issuer or token_endpoint, settings.idp_client_id, secret, method if secret else "none"
    )
    audience = metadata.issuer or metadata.token_endpoint
    subject = settings.identity_assertion()
    return await mechanics.token_exchange(
        http, token_endpoint, idp_client, subject, audience, resource, scopes, server
    )
