"""A real OAuth 2.1 authorization server on loopback, for tests.

Built from the MCP SDK's server-side pieces (``create_auth_routes`` over an
``OAuthAuthorizationServerProvider``) on a starlette app that uvicorn serves from a background
thread on ``127.0.0.1`` and a free port:

* dynamic client registration (public clients, ``token_endpoint_auth_method: none``), PKCE S256,
  authorization codes, rotating refresh tokens, access tokens with a configurable lifetime;
* an authorize endpoint that approves at once (no human): it redirects straight back to the
  client's ``redirect_uri`` with a code;
* ``POST /introspect`` (RFC 7662), which a resource server (the demo server's
  ``--oauth-issuer``) uses to verify bearer tokens;
* switches to expire every access token (forcing a refresh) or revoke every token (forcing a
  failed refresh), and a journal of what it saw (grants, refusals, introspections) for assertions.

The socket is bound and listening before the serving thread starts, so clients can connect at once
(the kernel queues them): nothing waits for start-up. :meth:`AuthServer.stop` ends the thread.
"""

from __future__ import annotations

import secrets
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    IdentityAssertionParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl, ConfigDict, TypeAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

CODE_LIFETIME_S = 300
_URL = TypeAdapter(AnyHttpUrl, config=ConfigDict(url_preserve_empty_path=True))
"""URLs as the SDK's client compares issuers: ``http://127.0.0.1:PORT`` without a trailing slash."""


@dataclass(frozen=True, slots=True)
class Seen:
    """One thing the authorization server did: ``kind`` and the client it concerned."""

    kind: str
    """``register``, ``authorize``, ``grant:authorization_code``, ``grant:refresh_token``,
    ``refused:refresh_token`` (unknown/revoked refresh token), ``introspect:active`` or
    ``introspect:inactive``."""
    client_id: str | None


class _Provider:
    """The ``OAuthAuthorizationServerProvider``: every table in memory, behind one lock."""

    def __init__(self, access_ttl_s: int) -> None:
        self.access_ttl_s = access_ttl_s
        self.lock = threading.Lock()
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.journal: list[Seen] = []
        self.issued: set[str] = set()
        """Every code, access token and refresh token ever issued."""

    def note(self, kind: str, client_id: str | None) -> None:
        with self.lock:
            self.journal.append(Seen(kind, client_id))

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        with self.lock:
            return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        with self.lock:
            self.clients[client_info.client_id] = client_info
        self.note("register", client_info.client_id)

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        """Approve at once: the resource owner is the client itself (one account per client)."""
        assert client.client_id is not None
        code = AuthorizationCode(
            code=secrets.token_urlsafe(32),
            scopes=params.scopes or [],
            expires_at=time.time() + CODE_LIFETIME_S,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject=client.client_id,
        )
        with self.lock:
            self.codes[code.code] = code
            self.issued.add(code.code)
        self.note("authorize", client.client_id)
        return construct_redirect_uri(str(params.redirect_uri), code=code.code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        with self.lock:
            code = self.codes.get(authorization_code)
        return code if code is not None and code.client_id == client.client_id else None

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        with self.lock:
            if self.codes.pop(authorization_code.code, None) is None:
                raise TokenError("invalid_grant", "the authorization code was already used")
        self.note("grant:authorization_code", authorization_code.client_id)
        return self._issue(
            authorization_code.client_id,
            authorization_code.scopes,
            authorization_code.resource,
            authorization_code.subject,
        )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        with self.lock:
            token = self.refresh.get(refresh_token)
        if token is None or token.client_id != client.client_id:
            self.note("refused:refresh_token", client.client_id)
            return None
        return token

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        with self.lock:  # rotate: the old refresh token is spent
            self.refresh.pop(refresh_token.token, None)
        self.note("grant:refresh_token", refresh_token.client_id)
        return self._issue(
            refresh_token.client_id, scopes, refresh_token.resource, refresh_token.subject
        )

    async def load_access_token(self, token: str) -> AccessToken | None:
        with self.lock:
            access = self.access.get(token)
        if access is None or (access.expires_at is not None and access.expires_at < time.time()):
            return None
        return access

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        with self.lock:
            self.access.pop(token.token, None)
            self.refresh.pop(token.token, None)

    async def exchange_identity_assertion(
        self, client: OAuthClientInformationFull, params: IdentityAssertionParams
    ) -> OAuthToken:
        raise TokenError("unsupported_grant_type", "identity assertions are not supported")

    def _issue(
        self, client_id: str, scopes: list[str], resource: str | None, subject: str | None
    ) -> OAuthToken:
        access = AccessToken(
            token=secrets.token_urlsafe(32),
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + self.access_ttl_s,
            resource=resource,
            subject=subject,
        )
        refresh = RefreshToken(
            token=secrets.token_urlsafe(32),
            client_id=client_id,
            scopes=scopes,
            resource=resource,
            subject=subject,
        )
        with self.lock:
            self.access[access.token] = access
            self.refresh[refresh.token] = refresh
            self.issued |= {access.token, refresh.token}
        return OAuthToken(
            access_token=access.token,
            expires_in=self.access_ttl_s,
            scope=" ".join(scopes) or None,
            refresh_token=refresh.token,
        )


class AuthServer:
    """An authorization server at :attr:`issuer` (``http://127.0.0.1:PORT``)."""

    def __init__(self, *, access_ttl_s: int = 3600) -> None:
        self.provider = _Provider(access_ttl_s)
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self.port: int = self._sock.getsockname()[1]
        self.issuer = f"http://127.0.0.1:{self.port}"
        routes = create_auth_routes(
            self.provider,
            _URL.validate_python(self.issuer),
            client_registration_options=ClientRegistrationOptions(enabled=True),
            revocation_options=RevocationOptions(enabled=True),
        )
        routes.append(Route("/introspect", self._introspect, methods=["POST"]))
        self._server = uvicorn.Server(
            uvicorn.Config(
                Starlette(routes=routes),
                log_level="warning",
                access_log=False,
                lifespan="off",
                timeout_graceful_shutdown=1,
            )
        )
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )

    # -- switches ---------------------------------------------------------------------------------

    def expire_access_tokens(self) -> None:
        """Every access token issued so far stops being valid (refresh tokens still work)."""
        with self.provider.lock:
            self.provider.access.clear()

    def revoke_all(self) -> None:
        """Every access and refresh token stops being valid: only a new sign-in helps."""
        with self.provider.lock:
            self.provider.access.clear()
            self.provider.refresh.clear()

    # -- what it saw ------------------------------------------------------------------------------

    def seen(self, kind: str | None = None) -> list[Seen]:
        """The journal, optionally only entries of one ``kind``."""
        with self.provider.lock:
            entries = list(self.provider.journal)
        return [entry for entry in entries if kind is None or entry.kind == kind]

    def issued_secrets(self) -> set[str]:
        """Every code, access token and refresh token ever issued (for "never leaked" checks)."""
        with self.provider.lock:
            return set(self.provider.issued)

    # -- lifecycle --------------------------------------------------------------------------------

    def start(self) -> AuthServer:
        """Serve from a background thread (the socket already listens)."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and join the thread (bounded)."""
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()

    async def _introspect(self, request: Request) -> Response:
        form = await request.form()
        token = form.get("token")
        access = await self.provider.load_access_token(token) if isinstance(token, str) else None
        if access is None:
            self.provider.note("introspect:inactive", None)
            return JSONResponse({"active": False})
        self.provider.note("introspect:active", access.client_id)
        body: dict[str, Any] = {
            "active": True,
            "client_id": access.client_id,
            "sub": access.subject,
            "scope": " ".join(access.scopes),
            "exp": access.expires_at,
            "iss": self.issuer,
            "token_type": "Bearer",
        }
        if access.resource is not None:
            body["aud"] = access.resource
        return JSONResponse(body)


@contextmanager
def running_auth_server(*, access_ttl_s: int = 3600) -> Iterator[AuthServer]:
    """An :class:`AuthServer` for the duration of the block."""
    server = AuthServer(access_ttl_s=access_ttl_s).start()
    try:
        yield server
    finally:
        server.stop()
