"""OAuth for Streamable HTTP servers: the SDK's client provider, tokens in the keyring.

:class:`OAuthProviders` is an ``auth_for`` for :class:`~mooring.mcp.gateway.McpGateway`. For
every HTTP server without a static ``Authorization`` header it attaches the SDK's
``OAuthClientProvider`` (authorization code + PKCE, refresh, dynamic client registration). The
provider does nothing until the server answers ``401``; then it discovers the authorization
server (RFC 9728 / RFC 8414), registers a client, and signs in.

Promises:

* Tokens, the client registration and the discovered metadata live in the
  :class:`~mooring.core.ports.SecretStore` (the OS keyring), as JSON, per (server id, credential
  profile id) — never in SQLite, logs or traces. Log records name servers, never secrets.
* A ``401`` is first answered with a refresh (also for tokens loaded after a restart, whose expiry
  the SDK alone would not know); only when that fails does a sign-in start.
* The interactive part is pluggable (:class:`SignIn`): :class:`LoopbackSignIn` opens the browser
  (or, for a headless CLI, prints the address) and receives the redirect on ``127.0.0.1``;
  ``sign_in=None`` means no interaction is possible.
* A sign-in that cannot happen (no interaction, refused, not completed in time, any OAuth failure)
  ends as the server's own ``401`` reaching the transport, which Mooring already classifies as
  "sign-in needed" (``AuthRequired`` / ``AuthFailed`` / a failed connection with an auth reason).
  Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import time
import webbrowser
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import IO, Any, Final, Protocol
from urllib.parse import parse_qs, urlparse

import anyio
import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.utils import extract_field_from_www_auth
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from pydantic import AnyUrl, ValidationError

from mooring.core.ports import SecretStore
from mooring.core.servers import ServerDefinition, Transport
from mooring.core.text import neutralize

logger = logging.getLogger("mooring.mcp.oauth")

RedirectHandler = Callable[[str], Awaitable[None]]
"""Shows the authorization URL to the user (opens a browser, prints it, ...)."""
CallbackHandler = Callable[[], Awaitable[AuthorizationCodeResult]]
"""Waits for the authorization server's redirect and returns its ``code`` and ``state``."""
HeadersFor = Callable[[ServerDefinition, str | None], Mapping[str, str]]

CALLBACK_PATH: Final = "/callback"
DEFAULT_SIGN_IN_TIMEOUT: Final = 300.0
_REQUEST_HEAD_TIMEOUT: Final = 10.0
_SIGN_IN_HTTP_TIMEOUT: Final = 30.0
_REQUEST_HEAD_LIMIT: Final = 16_384
_SCOPE_PREFIX: Final = "oauth"
_TOKENS: Final = "tokens"
_CLIENT: Final = "client"
_DISCOVERY: Final = "discovery"


class SignInNeededError(Exception):
    """The user has to sign in, and it cannot happen now (no interaction, refused, timed out)."""


class CallbackPortBusyError(SignInNeededError):
    """The loopback port registered for the redirect is taken by another program."""


def oauth_wanted(server: ServerDefinition, extra_headers: Mapping[str, str] | None = None) -> bool:
    """Whether OAuth is attached: an HTTP server with no static ``Authorization`` header.

    Attaching is harmless for servers that never ask: the SDK only starts the flow on a ``401``.
    """
    if server.transport is not Transport.HTTP:
        return False
    headers = {**server.headers, **(extra_headers or {})}
    return not any(name.lower() == "authorization" for name in headers)


def secret_scope(server_id: str, profile_id: str | None) -> str:
    """The :class:`SecretStore` scope of one server and account's OAuth state."""
    return f"{_SCOPE_PREFIX}/{server_id}/{profile_id or 'default'}"


# -- storage ----------------------------------------------------------------------------------


class KeyringTokenStorage:
    """The SDK's ``TokenStorage`` on Mooring's ``SecretStore``, for one server and account.

    Entries (JSON): ``tokens`` (the token response and its absolute expiry), ``client`` (the
    dynamic client registration) and ``discovery`` (protected resource and authorization server
    metadata, so a refresh after a restart reaches the right token endpoint).
    """

    def __init__(self, secrets: SecretStore, server_id: str, profile_id: str | None) -> None:
        self._secrets = secrets
        self.scope = secret_scope(server_id, profile_id)

    def _read(self, name: str) -> dict[str, Any] | None:
        raw = self._secrets.get(self.scope, name)
        if raw is None:
            return None
        try:
            value = json.loads(raw)
        except ValueError:
            logger.warning("unreadable OAuth %s entry for %s: ignored", name, self.scope)
            return None
        return value if isinstance(value, dict) else None

    def _write(self, name: str, value: Mapping[str, Any]) -> None:
        self._secrets.set(self.scope, name, json.dumps(value, separators=(",", ":")))

    async def get_tokens(self) -> OAuthToken | None:
        # The keyring may block (D-Bus, first use detects its backend): off the event loop.
        entry = await anyio.to_thread.run_sync(self._read, _TOKENS)
        try:
            return OAuthToken.model_validate(entry["token"]) if entry else None
        except (KeyError, ValidationError):
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires_at = time.time() + tokens.expires_in if tokens.expires_in is not None else None
        token = tokens.model_dump(mode="json", exclude_none=True)
        entry = {"token": token, "expires_at": expires_at}
        await anyio.to_thread.run_sync(self._write, _TOKENS, entry)

    def token_expiry(self) -> float | None:
        """When the stored access token expires (epoch seconds), if the server said."""
        entry = self._read(_TOKENS)
        expires = entry.get("expires_at") if entry else None
        return float(expires) if isinstance(expires, int | float) else None

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        entry = await anyio.to_thread.run_sync(self._read, _CLIENT)
        try:
            return OAuthClientInformationFull.model_validate(entry) if entry else None
        except ValidationError:
            return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        entry = client_info.model_dump(mode="json", exclude_none=True)
        await anyio.to_thread.run_sync(self._write, _CLIENT, entry)

    def redirect_uri(self) -> str | None:
        """The loopback redirect URI the stored client was registered with, if any."""
        entry = self._read(_CLIENT)
        uris = entry.get("redirect_uris") if entry else None
        if isinstance(uris, list) and uris and isinstance(uris[0], str):
            parsed = urlparse(uris[0])
            if parsed.hostname == "127.0.0.1" and parsed.port:
                return uris[0]
        return None

    def discovery(
        self,
    ) -> tuple[ProtectedResourceMetadata | None, OAuthMetadata | None, str | None]:
        """The stored protected resource metadata, authorization server metadata and URL."""
        entry = self._read(_DISCOVERY) or {}
        try:
            prm = entry.get("prm")
            asm = entry.get("asm")
            url = entry.get("auth_server_url")
            return (
                ProtectedResourceMetadata.model_validate(prm) if prm else None,
                OAuthMetadata.model_validate(asm) if asm else None,
                url if isinstance(url, str) else None,
            )
        except ValidationError:
            return None, None, None

    def set_discovery(
        self,
        prm: ProtectedResourceMetadata | None,
        asm: OAuthMetadata | None,
        auth_server_url: str | None,
    ) -> None:
        self._write(
            _DISCOVERY,
            {
                "prm": prm.model_dump(mode="json", exclude_none=True) if prm else None,
                "asm": asm.model_dump(mode="json", exclude_none=True) if asm else None,
                "auth_server_url": auth_server_url,
            },
        )

    def clear_tokens(self) -> None:
        self._secrets.delete(self.scope, _TOKENS)

    def clear(self) -> None:
        """Forget everything: tokens, registration and discovered metadata (sign out)."""
        for name in (_TOKENS, _CLIENT, _DISCOVERY):
            self._secrets.delete(self.scope, name)


# -- the interactive part ---------------------------------------------------------------------


class SignInFlow(Protocol):
    """One interactive authorization: show the URL, then wait for the redirect (bounded)."""

    async def redirect(self, authorization_url: str) -> None: ...
    async def callback(self) -> AuthorizationCodeResult: ...


class SignIn(Protocol):
    """How Mooring asks the user to sign in; one :class:`SignInFlow` per authorization."""

    def flow(
        self, server: ServerDefinition, profile_id: str | None, redirect_uri: str
    ) -> SignInFlow: ...


@dataclass(frozen=True, slots=True)
class HandlerPair:
    """A :class:`SignIn` from a fixed ``redirect_handler``/``callback_handler`` pair."""

    redirect_handler: RedirectHandler
    callback_handler: CallbackHandler

    def flow(
        self, server: ServerDefinition, profile_id: str | None, redirect_uri: str
    ) -> SignInFlow:
        return _PairFlow(self.redirect_handler, self.callback_handler)


@dataclass(frozen=True, slots=True)
class _PairFlow:
    redirect_handler: RedirectHandler
    callback_handler: CallbackHandler

    async def redirect(self, authorization_url: str) -> None:
        await self.redirect_handler(authorization_url)

    async def callback(self) -> AuthorizationCodeResult:
        return await self.callback_handler()


async def open_in_browser(url: str) -> None:
    """Open ``url`` in the user's browser; :class:`SignInNeededError` when there is none."""
    opened = await anyio.to_thread.run_sync(webbrowser.open, url)
    if not opened:
        raise SignInNeededError("no web browser could be opened to sign in")


@dataclass(frozen=True, slots=True)
class LoopbackSignIn:
    """Show the authorization URL and receive the redirect on ``127.0.0.1`` (RFC 8252).

    ``open_url`` shows the URL (default: the system browser); :meth:`printing` is the headless
    variant for the CLI. The listener is bound before the URL is shown, serves only the
    callback path, and is closed when the flow ends; ``timeout`` bounds the wait for the user.
    """

    open_url: RedirectHandler = open_in_browser
    timeout: float = DEFAULT_SIGN_IN_TIMEOUT

    @classmethod
    def printing(
        cls, stream: IO[str], *, timeout: float = DEFAULT_SIGN_IN_TIMEOUT
    ) -> LoopbackSignIn:
        """Headless: write the URL to ``stream`` for the user to open in any browser."""

        async def show(url: str) -> None:
            # The address comes from the server's metadata: shown inert, on one line.
            shown = neutralize(url, multiline=False)
            stream.write(f"Open this address in a web browser to sign in:\n\n  {shown}\n\n")
            stream.flush()

        return cls(open_url=show, timeout=timeout)

    def flow(
        self, server: ServerDefinition, profile_id: str | None, redirect_uri: str
    ) -> SignInFlow:
        return _LoopbackFlow(redirect_uri, self.open_url, self.timeout, server.alias)


_PAGE: Final = (
    "<!doctype html><meta charset=utf-8><title>Mooring</title>"
    "<p style='font-family:sans-serif'>{message} You can close this tab.</p>"
)


@dataclass
class _LoopbackFlow:
    redirect_uri: str
    open_url: RedirectHandler
    timeout: float
    alias: str
    _server: asyncio.Server | None = None
    _done: anyio.Event = field(default_factory=anyio.Event)
    _result: AuthorizationCodeResult | None = None
    _refusal: str | None = None

    async def redirect(self, authorization_url: str) -> None:
        parsed = urlparse(self.redirect_uri)
        try:
            self._server = await asyncio.start_server(
                self._serve, "127.0.0.1", parsed.port, limit=_REQUEST_HEAD_LIMIT
            )
        except OSError as exc:
            raise CallbackPortBusyError(
                f"the sign-in callback port {parsed.port} is in use"
            ) from exc
        try:
            await self.open_url(authorization_url)
        except BaseException:
            await self._close()
            raise

    async def callback(self) -> AuthorizationCodeResult:
        try:
            with anyio.fail_after(self.timeout):
                await self._done.wait()
        except TimeoutError:
            raise SignInNeededError(
                f"signing in to {self.alias} was not completed within {self.timeout:g} s"
            ) from None
        finally:
            await self._close()
        if self._result is None:
            raise SignInNeededError(f"signing in to {self.alias} was refused ({self._refusal})")
        return self._result

    async def _close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
            with contextlib.suppress(OSError):
                await server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        status, message = "404 Not Found", "Nothing here."
        try:
            async with asyncio.timeout(_REQUEST_HEAD_TIMEOUT):
                head = await reader.readuntil(b"\r\n\r\n")
            method, target, *_ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
            url = urlparse(target)
            if method == "GET" and url.path == urlparse(self.redirect_uri).path:
                status, message = self._accept(parse_qs(url.query))
            body = _PAGE.format(message=message).encode()
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
                f"Content-Length: {len(body)}\r\nCache-Control: no-store\r\n"
                "Connection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        except (TimeoutError, ValueError, OSError, asyncio.IncompleteReadError):
            pass  # a broken or idle connection to the callback port: not the redirect
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    def _accept(self, query: dict[str, list[str]]) -> tuple[str, str]:
        def one(name: str) -> str | None:
            values = query.get(name)
            return values[0] if values else None

        if self._done.is_set():
            return "409 Conflict", "This sign-in is already finished."
        code = one("code")
        if code:
            self._result = AuthorizationCodeResult(code=code, state=one("state"), iss=one("iss"))
            self._done.set()
            return "200 OK", "Signed in to Mooring."
        error = one("error")
        if error:
            self._refusal = error
            self._done.set()
            return "200 OK", "Signing in was refused."
        return "400 Bad Request", "This address expects an authorization response."


def _free_loopback_uri() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}{CALLBACK_PATH}"


# -- the provider -----------------------------------------------------------------------------


class MooringOAuthProvider(OAuthClientProvider):
    """The SDK's provider with Mooring's rules on top.

    * a ``401`` on a request is answered with one refresh before any sign-in;
    * a failed refresh forgets the stored tokens (they are dead);
    * stored tokens come back with their expiry and the discovered endpoints;
    * a flow that fails for any reason re-sends the request unchanged, so the server's own
      ``401`` is the answer the transport sees (never an exception that kills the transport).
    """

    def __init__(
        self,
        server_url: str,
        client_metadata: OAuthClientMetadata,
        storage: KeyringTokenStorage,
        redirect_handler: RedirectHandler,
        callback_handler: CallbackHandler,
        *,
        label: str,
    ) -> None:
        super().__init__(
            server_url,
            client_metadata,
            storage,
            redirect_handler=redirect_handler,
            callback_handler=callback_handler,
        )
        self._storage = storage
        self._label = label
        self._asked = False
        """Whether the server ever refused a request of this provider's (then a request with no
        token takes the locked flow, which signs in)."""

    async def _initialize(self) -> None:
        await super()._initialize()
        # Not yet: until the stored expiry is read, an expired token would look valid to a
        # request that skips the lock (see _auth_flow).
        self._initialized = False
        if self.context.current_tokens is not None:
            self.context.token_expiry_time = await anyio.to_thread.run_sync(
                self._storage.token_expiry
            )
        prm, asm, auth_server_url = await anyio.to_thread.run_sync(self._storage.discovery)
        if self.context.oauth_metadata is None and asm is not None:
            self.context.protected_resource_metadata = prm
            self.context.oauth_metadata = asm
            self.context.auth_server_url = auth_server_url
        self._initialized = True

    async def _remember_discovery(self) -> None:
        # Keyring writes, like its reads, run off the event loop (D-Bus, maybe a prompt).
        await anyio.to_thread.run_sync(
            self._storage.set_discovery,
            self.context.protected_resource_metadata,
            self.context.oauth_metadata,
            self.context.auth_server_url,
        )

    async def _handle_token_response(self, response: httpx2.Response) -> None:
        await super()._handle_token_response(response)
        await self._remember_discovery()
        logger.info("%s: signed in", self._label)

    async def _handle_refresh_response(self, response: httpx2.Response) -> bool:
        refreshed = await super()._handle_refresh_response(response)
        if refreshed:
            await self._remember_discovery()
            logger.info("%s: access token refreshed", self._label)
        else:
            await anyio.to_thread.run_sync(self._storage.clear_tokens)
            logger.info("%s: token refresh refused (HTTP %s)", self._label, response.status_code)
        return refreshed

    async def _auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        # The SDK's flow holds its lock until the response's headers arrive, so an account's
        # requests went one at a time (a JSON answer's headers come when it is complete: one
        # slow answer held back every poll of the account). With a valid token, or with none
        # on a server that never asked for one (OAuth is attached to every HTTP server in case
        # it asks), nothing needs the lock: the request goes at once. A refusal, a refresh or
        # a sign-in takes the SDK's locked flow, as before.
        token = self.context.current_tokens
        if self._initialized and (
            self.context.is_token_valid() if token is not None else not self._asked
        ):
            if token is not None:
                self._add_auth_header(request)
            response = yield request
            if not _refused(response):
                return
            self._asked = True
            await response.aread()  # done with it: it must not hold its connection meanwhile
            if (
                token is not None
                and response.status_code == 401
                and self.context.current_tokens is token
            ):
                # Dead before its time (revoked, or an expiry never told): the locked flow
                # refreshes before it sends again, rather than sending it once more only to be
                # refused. A token another request renewed meanwhile is left alone.
                self.context.token_expiry_time = time.time() - 1.0
            # The SDK's flow only adds the header, with a valid token: a refused one must not
            # go again if no valid one comes of it.
            request.headers.pop("Authorization", None)
        locked = self._locked_flow(request)
        try:
            outgoing = await locked.__anext__()
            while True:
                outgoing = await locked.asend((yield outgoing))
        except StopAsyncIteration:
            return
        finally:
            await locked.aclose()

    async def _locked_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        """The SDK's flow (under its lock), with a refresh before any sign-in and any failure
        answered by the server's own refusal."""
        inner = super()._auth_flow(request)
        refreshed = False
        try:
            outgoing = await inner.__anext__()
            while True:
                response = yield outgoing
                if outgoing is request and _refused(response):
                    self._asked = True
                if (
                    outgoing is request
                    and response.status_code == 401
                    and not refreshed
                    and self.context.can_refresh_token()
                ):
                    # The SDK would go straight to a new sign-in: a refresh is enough when only
                    # the access token died (expired early, revoked, or its expiry unknown).
                    refreshed = True
                    refresh_response = yield await self._refresh_token()
                    if await self._handle_refresh_response(refresh_response):
                        self._add_auth_header(request)
                        response = yield request
                outgoing = await inner.asend(response)
        except StopAsyncIteration:
            return
        except Exception as exc:  # noqa: BLE001  (any OAuth failure means "sign-in needed")
            if isinstance(exc, CallbackPortBusyError):
                # Register anew (with a free port) on the next attempt.
                await anyio.to_thread.run_sync(self._storage.clear)
            logger.info("%s: sign-in needed: %s", self._label, _describe(exc))
            yield request  # the server's own 401 answers the transport
        finally:
            await inner.aclose()


def _refused(response: httpx2.Response) -> bool:
    """Whether the server refused the request's token (the SDK's flow answers these): ``401``,
    or ``403`` asking for more scope."""
    if response.status_code == 401:
        return True
    return (
        response.status_code == 403
        and extract_field_from_www_auth(response, "error") == "insufficient_scope"
    )


def _describe(exc: Exception) -> str:
    """A log-safe description: our own messages, otherwise the exception type only (SDK messages
    may quote authorization-server replies)."""
    if isinstance(exc, SignInNeededError):
        return str(exc)
    return f"the OAuth flow failed ({type(exc).__name__})"


# -- the factory ------------------------------------------------------------------------------

BROWSER_SIGN_IN: Final = LoopbackSignIn()
"""Sign in through the system browser, receiving the redirect on loopback."""


class OAuthProviders:
    """``auth_for`` for the gateway: an OAuth provider per (server, credential profile).

    ``sign_in`` says how to ask the user; ``None`` means no interaction is possible (background
    work, scripts): a needed sign-in fails at once as "sign-in needed". It is read when a flow
    starts, so the host may change it at any time. ``headers_for`` is the gateway's own header
    source: a server whose headers carry an ``Authorization`` gets no OAuth.
    """

    def __init__(
        self,
        secrets: SecretStore,
        *,
        sign_in: SignIn | None = BROWSER_SIGN_IN,
        headers_for: HeadersFor | None = None,
        client_name: str = "Mooring",
    ) -> None:
        self.sign_in = sign_in
        self._secrets = secrets
        self._headers_for = headers_for
        self._client_name = client_name

    def __call__(self, server: ServerDefinition, profile_id: str | None) -> httpx2.Auth | None:
        """The provider for this server and account, or ``None`` when OAuth is not wanted."""
        return self._provider(server, profile_id, lambda: self.sign_in)

    async def sign_in_now(
        self,
        server: ServerDefinition,
        profile_id: str | None,
        sign_in: SignIn,
    ) -> bool:
        """Sign in to this server and account now, outside any MCP connection (for an explicit
        "Sign in" action or ``mooring`` CLI command): ``True`` when the server then accepts
        Mooring's tokens, ``False`` when it still refuses them (or OAuth does not apply).

        One request is sent to the server URL (a JSON-RPC ``ping``); its ``401`` starts the
        flow, with stored tokens refreshed first. Waits are bounded by the sign-in's own timeout
        and per-request HTTP timeouts; an unreachable server raises ``httpx2.HTTPError``.
        """
        provider = self._provider(server, profile_id, lambda: sign_in)
        if provider is None or server.url is None:
            return False
        ping = {"jsonrpc": "2.0", "id": "mooring-sign-in", "method": "ping"}
        headers = {"Accept": "application/json, text/event-stream"}
        async with httpx2.AsyncClient(auth=provider, timeout=_SIGN_IN_HTTP_TIMEOUT) as client:
            response = await client.post(server.url, json=ping, headers=headers)
        return response.status_code not in (401, 403)

    def _provider(
        self,
        server: ServerDefinition,
        profile_id: str | None,
        choose: Callable[[], SignIn | None],
    ) -> httpx2.Auth | None:
        extra = self._headers_for(server, profile_id) if self._headers_for is not None else None
        if not oauth_wanted(server, extra) or server.url is None:
            return None
        storage = self.storage(server.id, profile_id)
        redirect_uri = storage.redirect_uri() or _free_loopback_uri()
        metadata = OAuthClientMetadata(
            redirect_uris=[AnyUrl(redirect_uri)],
            client_name=self._client_name,
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",  # noqa: S106  (a public client: PKCE, no secret)
        )
        redirect, callback = _handlers(server, profile_id, redirect_uri, choose)
        return MooringOAuthProvider(
            server.url, metadata, storage, redirect, callback, label=server.alias
        )

    def storage(self, server_id: str, profile_id: str | None) -> KeyringTokenStorage:
        """Where this server and account's OAuth state is kept."""
        return KeyringTokenStorage(self._secrets, server_id, profile_id)

    def signed_in(self, server_id: str, profile_id: str | None) -> bool:
        """Whether tokens are stored for this server and account (they may still be refused)."""
        return self._secrets.get(secret_scope(server_id, profile_id), _TOKENS) is not None

    def forget(self, server_id: str, profile_id: str | None) -> None:
        """Sign out locally: delete the tokens, the client registration and the metadata."""
        self.storage(server_id, profile_id).clear()


def _handlers(
    server: ServerDefinition,
    profile_id: str | None,
    redirect_uri: str,
    choose: Callable[[], SignIn | None],
) -> tuple[RedirectHandler, CallbackHandler]:
    """The SDK's handler pair, asking ``choose()`` at each flow how (and whether) to sign in."""
    current: list[SignInFlow] = []

    async def redirect(authorization_url: str) -> None:
        sign_in = choose()
        if sign_in is None:
            raise SignInNeededError(f"{server.alias} needs a sign-in")
        flow = sign_in.flow(server, profile_id, redirect_uri)
        current[:] = [flow]
        logger.info("%s: waiting for the user to sign in", server.alias)
        await flow.redirect(authorization_url)

    async def callback() -> AuthorizationCodeResult:
        if not current:
            raise SignInNeededError(f"{server.alias} needs a sign-in")
        return await current.pop().callback()

    return redirect, callback
