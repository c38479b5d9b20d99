"""OAuth 2.1 sign-in for remote MCP servers (the MCP authorization spec): ``mtj.OAuth``.

``settings`` (what users say), ``discovery`` (protected resource and authorization server
metadata), ``registration`` (pre-registered, Client ID Metadata Documents, dynamic registration),
``mechanics`` (PKCE, token requests: authlib), ``loopback`` (the redirect listener), ``answers``
(where the sign-in's answer arrives: the listener, or an address pasted by hand), ``store``
(tokens on disk, 0600), ``sign_in`` (the connection's auth hook that ties them together).
"""

from .answers import finish_sign_in
from .settings import OAuth
from .sign_in import OAuthSignIn
from .store import TokenStore

__all__ = ["OAuth", "OAuthSignIn", "TokenStore", "finish_sign_in"]
