"""Signing accounts in and out of OAuth-protected Streamable HTTP servers, for the host
(``core.ports.AccountSignIn``): the flow runs on loopback, the face decides how the address
is shown (the system browser, a terminal line)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mooring.core.errors import KnownError
from mooring.core.ports import OpenUrl
from mooring.core.servers import ServerDefinition, Transport

if TYPE_CHECKING:
    from mooring.mcp.oauth import OAuthProviders


class OAuthSignIn:
    """Implements ``AccountSignIn`` over the gateway's :class:`OAuthProviders`, given as a
    function: the MCP SDK loads only when an account is first asked about."""

    def __init__(
        self, oauth: Callable[[], OAuthProviders], *, timeout: float | None = None
    ) -> None:
        self._oauth = oauth
        self._timeout = timeout

    async def sign_in(
        self, server: ServerDefinition, profile_id: str | None, open_url: OpenUrl
    ) -> bool:
        import httpx2

        from mooring.mcp.oauth import DEFAULT_SIGN_IN_TIMEOUT, LoopbackSignIn, SignInNeededError

        if server.transport is not Transport.HTTP:
            return False
        flow = LoopbackSignIn(open_url=open_url, timeout=self._timeout or DEFAULT_SIGN_IN_TIMEOUT)
        try:
            return await self._oauth().sign_in_now(server, profile_id, flow)
        except SignInNeededError as exc:
            raise KnownError(
                f"Signing in did not complete: {exc}.", hint="Try again.", code="sign_in"
            ) from exc
        except httpx2.HTTPError as exc:
            raise KnownError(
                f"{server.alias} could not be reached to sign in ({type(exc).__name__}).",
                hint="Check that the server runs and that its URL is right.",
                code="unreachable",
            ) from exc

    def sign_out(self, server: ServerDefinition, profile_id: str | None) -> None:
        self._oauth().forget(server.id, profile_id)

    def signed_in(self, server: ServerDefinition, profile_id: str | None) -> bool:
        if server.transport is not Transport.HTTP:
            return False
        return self._oauth().signed_in(server.id, profile_id)
