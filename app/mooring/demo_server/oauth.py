"""Opt-in OAuth protection of the HTTP endpoint (``--oauth-issuer``): a resource server.

With an issuer configured, ``/mcp`` only answers requests carrying a bearer token that the
issuer's introspection endpoint (RFC 7662, ``<issuer>/introspect``) reports active and issued
for this server; anything else gets ``401`` with ``WWW-Authenticate: Bearer ...,
resource_metadata="..."``. Protected resource metadata (RFC 9728) names the issuer, at
``/.well-known/oauth-protected-resource/mcp`` and, for clients that look there, at
``/.well-known/oauth-protected-resource``.

Tasks are bound to the token's principal (client, issuer, subject), not to the token string, so a
refreshed token still sees the tasks created under the previous one.
"""

from __future__ import annotations

import logging
from typing import Any, Final

import httpx2
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.shared.auth import ProtectedResourceMetadata
from pydantic import AnyHttpUrl, ConfigDict, TypeAdapter
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

logger = logging.getLogger("mooring.demo_server.oauth")

INTROSPECTION_PATH: Final = "/introspect"
INTROSPECTION_TIMEOUT_S: Final = 10.0
_URL = TypeAdapter(AnyHttpUrl, config=ConfigDict(url_preserve_empty_path=True))


class IntrospectionVerifier:
    """A ``TokenVerifier`` that asks the issuer about every token (no caching: revocation and
    expiry at the issuer take effect on the next request)."""

    def __init__(self, issuer: str) -> None:
        self.issuer = issuer.rstrip("/")
        self.endpoint = self.issuer + INTROSPECTION_PATH

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's grant, or ``None`` when the issuer says it is not active (or is down)."""
        try:
            async with httpx2.AsyncClient(timeout=INTROSPECTION_TIMEOUT_S) as client:
                response = await client.post(self.endpoint, data={"token": token})
        except httpx2.HTTPError as exc:
            logger.warning("token introspection failed: %s", type(exc).__name__)
            return None
        if response.status_code != 200:
            logger.warning("token introspection answered HTTP %s", response.status_code)
            return None
        try:
            body: dict[str, Any] = response.json()
        except ValueError:
            logger.warning("token introspection answered something that is not JSON")
            return None
        if not body.get("active") or not isinstance(body.get("client_id"), str):
            return None
        scope = body.get("scope")
        expires = body.get("exp")
        audience = body.get("aud")
        return AccessToken(
            token=token,
            client_id=body["client_id"],
            scopes=scope.split() if isinstance(scope, str) else [],
            expires_at=int(expires) if isinstance(expires, int | float) else None,
            resource=audience if isinstance(audience, str) else None,
            subject=body["sub"] if isinstance(body.get("sub"), str) else None,
            claims={"iss": body["iss"]} if isinstance(body.get("iss"), str) else None,
        )


def auth_settings(issuer: str, resource_url: str) -> AuthSettings:
    """The SDK's resource-server settings: tokens must be issued for ``resource_url``."""
    return AuthSettings(
        issuer_url=_URL.validate_python(issuer.rstrip("/")),
        resource_server_url=_URL.validate_python(resource_url),
        validate_token_resource=True,
    )


def root_metadata_endpoint(issuer: str, resource_url: str) -> Any:
    """``GET /.well-known/oauth-protected-resource``: the same metadata as the path-specific one."""
    metadata = ProtectedResourceMetadata(
        resource=_URL.validate_python(resource_url),
        authorization_servers=[_URL.validate_python(issuer.rstrip("/"))],
    )
    body = metadata.model_dump(mode="json", exclude_none=True)

    async def endpoint(_request: Request) -> Response:
        return JSONResponse(body, headers={"Cache-Control": "no-store"})

    return endpoint
