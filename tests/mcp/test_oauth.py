"""OAuth against real parts: a loopback authorization server and the demo server as a resource.

The authorization server (``tests.helpers.authserver``) runs in this process on 127.0.0.1; the
demo server runs as a subprocess with ``--oauth-issuer`` and verifies every bearer token at the
issuer's introspection endpoint. The "browser" is an HTTP client that follows the authorization
redirects to Mooring's loopback callback, as a real browser would after an instant approval.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import anyio
import httpx2
import keyring
import pytest
from mcp.client import Transport

from mooring.adapters.secrets import KeyringSecrets
from mooring.core.ports import ConnectionState
from mooring.core.servers import ServerDefinition
from mooring.core.tasks.calls import Acknowledged, ImmediateResult, TaskCreated
from mooring.core.tasks.reconcile import AuthRequired, Observation, ServerTask
from mooring.mcp.connection import ConnectionSettings, McpConnection
from mooring.mcp.oauth import LoopbackSignIn, OAuthProviders, oauth_wanted, secret_scope
from mooring.mcp.transport import SdkTransports, StderrLog
from tests.helpers.authserver import AuthServer, running_auth_server
from tests.helpers.memkeyring import MemoryKeyring
from tests.mcp.servers import DemoServer, eventually, http_definition, settled

pytestmark = pytest.mark.anyio

Start = Callable[[ServerDefinition, OAuthProviders, str | None], McpConnection]


class Browser:
    """Stands in for the user's browser: opens the authorization URL and follows the redirects
    (the authorization server approves at once) to Mooring's loopback callback."""

    def __init__(self) -> None:
        self.visits = 0

    async def __call__(self, url: str) -> None:
        self.visits += 1
        async with httpx2.AsyncClient(timeout=10) as client:
            page = await client.get(url, follow_redirects=True)
        assert page.status_code == 200, page.text
        assert "Signed in" in page.text


@pytest.fixture
def auth_server() -> Iterator[AuthServer]:
    with running_auth_server() as server:
        yield server


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[DemoServer]:
    server = DemoServer(tmp_path / "demo")
    server.root.mkdir()
    try:
        yield server
    finally:
        server.stop_all()


@pytest.fixture
def protected_url(demo: DemoServer, auth_server: AuthServer) -> str:
    """The demo server over HTTP, accepting only tokens from ``auth_server``."""
    return demo.start_http("--oauth-issuer", auth_server.issuer)


@pytest.fixture
def secrets() -> KeyringSecrets:
    store = KeyringSecrets()
    assert store.status.usable, store.status  # the suite's in-memory keyring
    return store


@pytest.fixture
def memory_keyring() -> MemoryKeyring:
    backend = keyring.get_keyring()
    assert isinstance(backend, MemoryKeyring)
    return backend


@pytest.fixture
async def start(settings: ConnectionSettings) -> AsyncIterator[Start]:
    """Start connections with OAuth attached; every one is closed at teardown."""
    opened: list[McpConnection] = []

    def open_connection(
        server: ServerDefinition, providers: OAuthProviders, profile_id: str | None
    ) -> McpConnection:
        connection = McpConnection(server, profile_id, settings=settings, auth_for=providers)
        connection.start()
        opened.append(connection)
        return connection

    try:
        yield open_connection
    finally:
        with anyio.fail_after(30):
            for connection in opened:
                await connection.aclose()


async def ready(connection: McpConnection) -> None:
    status = await settled(connection)
    assert status.state is ConnectionState.READY, status


async def waiting_task(connection: McpConnection, filename: str) -> str:
    """A ``confirm_delete`` task, polled until it waits for its answer."""
    outcome = await connection.call_tool("confirm_delete", {"filename": filename})
    assert isinstance(outcome, TaskCreated), outcome
    task_id = outcome.task.task_id
    await reaches(connection, task_id, "input_required")
    return task_id


async def reaches(connection: McpConnection, task_id: str, status: str) -> ServerTask:
    """Poll (bounded) until ``status``; every answer on the way must be a task snapshot."""

    def accept(seen: Observation) -> bool:
        assert isinstance(seen, ServerTask), seen  # never auth-required, gone or unavailable
        return seen.status == status

    found: ServerTask = await eventually(lambda: connection.get_task(task_id), accept)
    return found


async def finish(connection: McpConnection, task_id: str) -> None:
    ack = await connection.update_task(
        task_id, {"confirm-delete": {"action": "accept", "content": {"confirm": True}}}
    )
    assert isinstance(ack, Acknowledged), ack
    done = await reaches(connection, task_id, "completed")
    assert done.result is not None


async def four_polls_together(connection: McpConnection, demo: DemoServer) -> list[dict[str, Any]]:
    """Start four long tasks, poll them all at once; the server's log entries of the polls
    (``inflight``: how many requests it was answering as each arrived)."""
    created = [await connection.call_tool("slow_compute", {"seconds": 60}) for _ in range(4)]
    task_ids = [c.task.task_id for c in created if isinstance(c, TaskCreated)]
    assert len(task_ids) == 4, created
    seen = await asyncio.gather(*(connection.get_task(t) for t in task_ids))
    assert all(isinstance(s, ServerTask) and s.status == "working" for s in seen), seen
    gets = [e for e in demo.log.entries() if e["method"] == "tasks/get"]
    assert len(gets) == 4
    return gets


def files_holding(root: Path, secrets: set[str]) -> list[Path]:
    """Every file under ``root`` that contains one of ``secrets``."""
    return [
        path
        for path in root.rglob("*")
        if path.is_file() and any(secret.encode() in path.read_bytes() for secret in secrets)
    ]


def oauth_entries(backend: MemoryKeyring, server_id: str, profile_id: str) -> dict[str, str]:
    service = f"mooring/{secret_scope(server_id, profile_id)}"
    return {name: value for (svc, name), value in backend.secrets.items() if svc == service}


async def test_a_first_connection_signs_in_via_the_loopback_and_keeps_tokens_in_the_keyring(
    auth_server: AuthServer,
    protected_url: str,
    start: Start,
    secrets: KeyringSecrets,
    memory_keyring: MemoryKeyring,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    browser = Browser()
    providers = OAuthProviders(secrets, sign_in=LoopbackSignIn(open_url=browser, timeout=20))
    server = http_definition(protected_url, alias="protected")
    assert oauth_wanted(server)

    connection = start(server, providers, "alice")
    await ready(connection)
    task_id = await waiting_task(connection, "a.csv")
    await finish(connection, task_id)

    assert browser.visits == 1
    grants = [seen.kind for seen in auth_server.seen() if not seen.kind.startswith("introspect")]
    assert grants == ["register", "authorize", "grant:authorization_code"]
    client_id = auth_server.seen("register")[0].client_id

    stored = oauth_entries(memory_keyring, server.id, "alice")
    assert set(stored) == {"tokens", "client", "discovery"}
    tokens = json.loads(stored["tokens"])["token"]
    assert {tokens["access_token"], tokens["refresh_token"]} <= auth_server.issued_secrets()
    assert json.loads(stored["client"])["client_id"] == client_id
    assert providers.signed_in(server.id, "alice")

    # Nowhere else: no file this test produced (demo store, request log, server logs, Mooring's
    # data folder) and no log record holds a code or a token.
    issued = auth_server.issued_secrets()
    assert len(issued) == 3
    assert files_holding(tmp_path, issued) == []
    # Mooring's loggers and the SDK's (the stand-in browser's own HTTP client logs the redirect
    # it follows, code included, as any browser history would).
    ours = [r for r in caplog.records if r.name.split(".")[0] in {"mooring", "mcp"}]
    assert any(r.name == "mooring.mcp.oauth" and "signed in" in r.getMessage() for r in ours)
    leaks = [
        record.name
        for record in ours
        if any(secret in logging.Formatter().format(record) for secret in issued)
    ]
    assert leaks == []


async def test_an_access_token_expiring_mid_task_is_refreshed_and_the_request_retried(
    auth_server: AuthServer,
    protected_url: str,
    start: Start,
    secrets: KeyringSecrets,
    memory_keyring: MemoryKeyring,
) -> None:
    browser = Browser()
    providers = OAuthProviders(secrets, sign_in=LoopbackSignIn(open_url=browser, timeout=20))
    server = http_definition(protected_url)
    connection = start(server, providers, "alice")
    await ready(connection)
    task_id = await waiting_task(connection, "b.csv")
    before = json.loads(oauth_entries(memory_keyring, server.id, "alice")["tokens"])["token"]

    auth_server.expire_access_tokens()
    seen = await connection.get_task(task_id)

    assert isinstance(seen, ServerTask), seen
    assert seen.status == "input_required"
    assert len(auth_server.seen("grant:refresh_token")) == 1
    assert browser.visits == 1  # a refresh, not a new sign-in
    after = json.loads(oauth_entries(memory_keyring, server.id, "alice")["tokens"])["token"]
    assert after["access_token"] != before["access_token"]
    assert after["refresh_token"] != before["refresh_token"]  # rotated, and the new one kept
    await finish(connection, task_id)


async def test_a_revoked_sign_in_without_interaction_ends_as_sign_in_needed(
    auth_server: AuthServer,
    protected_url: str,
    start: Start,
    secrets: KeyringSecrets,
) -> None:
    browser = Browser()
    interactive = LoopbackSignIn(open_url=browser, timeout=20)
    providers = OAuthProviders(secrets, sign_in=interactive)
    server = http_definition(protected_url)
    connection = start(server, providers, "alice")
    await ready(connection)
    task_id = await waiting_task(connection, "c.csv")

    auth_server.revoke_all()
    providers.sign_in = None  # e.g. background polling: nobody to ask
    with anyio.fail_after(10):
        seen = await connection.get_task(task_id)

    assert isinstance(seen, AuthRequired), seen
    assert auth_server.seen("refused:refresh_token")
    assert not providers.signed_in(server.id, "alice")  # the dead tokens are forgotten
    assert browser.visits == 1

    # A new connection (say, after a restart) fails with an auth reason within its deadline.
    fresh = start(server, providers, "alice")
    with anyio.fail_after(15):
        status = await fresh.settled()
    assert status.state is ConnectionState.FAILED
    assert "credentials" in status.reason
    await fresh.aclose()  # a failed connection retries (and would sign in once it may)

    # Signing in again (same client, same account) finds the task where it was.
    providers.sign_in = interactive
    back = await connection.get_task(task_id)
    assert isinstance(back, ServerTask), back
    assert back.status == "input_required"
    assert browser.visits == 2
    assert len(auth_server.seen("register")) == 1


async def test_two_credential_profiles_keep_separate_tokens_and_their_own_tasks(
    auth_server: AuthServer,
    demo: DemoServer,
    protected_url: str,
    start: Start,
    secrets: KeyringSecrets,
    memory_keyring: MemoryKeyring,
) -> None:
    providers = OAuthProviders(secrets, sign_in=LoopbackSignIn(open_url=Browser(), timeout=20))
    server = http_definition(protected_url)
    alice = start(server, providers, "alice")
    bob = start(server, providers, "bob")
    await ready(alice)
    await ready(bob)
    alice_task = await waiting_task(alice, "alice.csv")
    bob_task = await waiting_task(bob, "bob.csv")
    auth_server.expire_access_tokens()  # both refresh on their next request
    await finish(alice, alice_task)
    await finish(bob, bob_task)

    clients = {
        profile: json.loads(oauth_entries(memory_keyring, server.id, profile)["client"])[
            "client_id"
        ]
        for profile in ("alice", "bob")
    }
    assert clients["alice"] != clients["bob"]
    tokens = {
        profile: json.loads(oauth_entries(memory_keyring, server.id, profile)["tokens"])["token"]
        for profile in ("alice", "bob")
    }
    assert tokens["alice"]["access_token"] != tokens["bob"]["access_token"]
    assert {seen.client_id for seen in auth_server.seen("grant:refresh_token")} == set(
        clients.values()
    )

    # What the demo server saw: each task was created and queried only with its owner's token.
    for owner, task_id in (("alice", alice_task), ("bob", bob_task)):
        asked = [entry for entry in demo.log.entries() if entry.get("taskId") == task_id]
        assert {entry["method"] for entry in asked} >= {"tasks/get", "tasks/update"}
        assert {entry["client"] for entry in asked} == {clients[owner]}
    calls = [entry for entry in demo.log.entries() if entry["method"] == "tools/call"]
    assert sorted(entry["client"] for entry in calls) == sorted(clients.values())


async def test_a_signed_in_connections_requests_are_in_flight_together_not_one_by_one(
    auth_server: AuthServer, demo: DemoServer, start: Start, secrets: KeyringSecrets
) -> None:
    """The SDK's provider holds its lock until each response's headers arrive: a slow answer
    (a JSON reply comes with its headers at the end) held every other request of the account
    back, so polls went one by one however many were due. With a valid token, requests go
    together; only a refresh or a sign-in takes the lock."""
    url = demo.start_http("--oauth-issuer", auth_server.issuer, "--fault-slow-get-ms", "400")
    providers = OAuthProviders(secrets, sign_in=LoopbackSignIn(open_url=Browser(), timeout=20))
    connection = start(http_definition(url), providers, None)
    await ready(connection)
    gets = await four_polls_together(connection, demo)
    assert max(e["inflight"] for e in gets) > 1  # the four overlapped at the server
    assert len({e["client"] for e in gets}) == 1
    assert len(auth_server.seen("register")) == 1  # one sign-in, not one per request


async def test_a_server_that_never_asked_for_sign_in_gets_its_requests_in_flight_together(
    demo: DemoServer, start: Start, secrets: KeyringSecrets
) -> None:
    """OAuth is attached to every HTTP server without an ``Authorization`` header, in case it
    asks. Without a token, every request took the SDK's locked flow, which holds its lock
    until the response's headers arrive: a plain server's polls went one by one behind one
    slow answer. They go together until the server refuses one."""
    url = demo.start_http("--fault-slow-get-ms", "400")
    providers = OAuthProviders(secrets, sign_in=None)
    connection = start(http_definition(url), providers, None)
    await ready(connection)
    gets = await four_polls_together(connection, demo)
    assert max(e["inflight"] for e in gets) > 1  # the four overlapped at the server


async def test_headless_sign_in_prints_the_address_and_completes_when_it_is_opened(
    auth_server: AuthServer, protected_url: str, start: Start, secrets: KeyringSecrets
) -> None:
    printed = io.StringIO()
    providers = OAuthProviders(secrets, sign_in=LoopbackSignIn.printing(printed, timeout=20))
    connection = start(http_definition(protected_url), providers, None)

    def address() -> str | None:
        words = printed.getvalue().split()
        return next((word for word in words if word.startswith("http")), None)

    url = await eventually(address, lambda found: found is not None)
    assert url.startswith(auth_server.issuer + "/authorize?")
    await Browser()(url)  # the user opens it in any browser on this machine
    await ready(connection)


async def test_a_refused_authorization_ends_as_sign_in_needed_without_hanging(
    protected_url: str, start: Start, secrets: KeyringSecrets
) -> None:
    async def refuse(url: str) -> None:
        """The user clicks "deny": the redirect carries an error instead of a code."""
        query = parse_qs(urlparse(url).query)
        redirect = query["redirect_uri"][0]
        answer = urlencode({"error": "access_denied", "state": query["state"][0]})
        async with httpx2.AsyncClient(timeout=10) as client:
            page = await client.get(f"{redirect}?{answer}")
        assert page.status_code == 200

    providers = OAuthProviders(secrets, sign_in=LoopbackSignIn(open_url=refuse, timeout=20))
    connection = start(http_definition(protected_url), providers, "alice")
    with anyio.fail_after(15):
        status = await connection.settled()
    assert status.state is ConnectionState.FAILED
    assert "credentials" in status.reason


async def test_an_explicit_sign_in_lets_a_later_connection_start_without_interaction(
    auth_server: AuthServer, protected_url: str, start: Start, secrets: KeyringSecrets
) -> None:
    browser = Browser()
    providers = OAuthProviders(secrets, sign_in=None)  # connections never ask the user
    server = http_definition(protected_url)

    with anyio.fail_after(30):
        assert await providers.sign_in_now(server, "alice", LoopbackSignIn(open_url=browser))
    connection = start(server, providers, "alice")

    await ready(connection)
    assert browser.visits == 1
    assert len(auth_server.seen("grant:authorization_code")) == 1


async def test_a_sign_in_made_while_a_connection_retries_serves_the_next_request_at_once(
    auth_server: AuthServer,
    protected_url: str,
    settings: ConnectionSettings,
    secrets: KeyringSecrets,
) -> None:
    """``mooring accounts login`` while the engine's connection keeps failing for want of a
    sign-in: the call made next must not be answered "sign-in needed" by an attempt that began
    before the tokens existed (it was, under load: the login test failed in CI)."""
    providers = OAuthProviders(secrets, sign_in=None)  # the engine never asks the user
    server = http_definition(protected_url)
    real = SdkTransports(connect_timeout=settings.connect_timeout, auth_for=providers)
    attempts: list[int] = []
    stale_attempt = anyio.Event()

    async def open_transport(
        stack: AsyncExitStack, server: ServerDefinition, profile_id: str | None, stderr: StderrLog
    ) -> Transport:
        attempts.append(len(attempts) + 1)
        if len(attempts) == 2:  # the retry under way when the user signs in
            stale_attempt.set()
            await anyio.sleep_forever()
        return await real(stack, server, profile_id, stderr)

    connection = McpConnection(server, "alice", settings=settings, open_transport=open_transport)
    connection.start()
    try:
        with anyio.fail_after(15):
            first = await connection.settled()
            assert first.state is ConnectionState.FAILED
            assert "credentials" in first.reason
            await stale_attempt.wait()
            assert await providers.sign_in_now(server, "alice", LoopbackSignIn(open_url=Browser()))
            connection.credentials_changed()  # what the host does once the sign-in completed
            outcome = await connection.call_tool("list_suppliers", {})
        assert isinstance(outcome, ImmediateResult), outcome
        assert attempts == [1, 2, 3]
        assert connection.status.state is ConnectionState.READY
    finally:
        with anyio.fail_after(30):
            await connection.aclose()


async def test_a_live_connection_refused_after_a_revocation_takes_up_a_new_explicit_sign_in(
    auth_server: AuthServer, protected_url: str, start: Start, secrets: KeyringSecrets
) -> None:
    """The window's "Sign in" (or ``accounts login``) runs its own OAuth flow: a connection
    that is refused afterwards uses the tokens it stored, keeping its session and its task."""
    browser = Browser()
    providers = OAuthProviders(secrets, sign_in=None)
    server = http_definition(protected_url)
    with anyio.fail_after(30):
        assert await providers.sign_in_now(server, "alice", LoopbackSignIn(open_url=browser))
    connection = start(server, providers, "alice")
    await ready(connection)
    task_id = await waiting_task(connection, "d.csv")

    auth_server.revoke_all()
    with anyio.fail_after(10):
        refused = await connection.get_task(task_id)
    assert isinstance(refused, AuthRequired), refused

    with anyio.fail_after(30):
        assert await providers.sign_in_now(server, "alice", LoopbackSignIn(open_url=browser))
    with anyio.fail_after(10):
        back = await connection.get_task(task_id)
    assert isinstance(back, ServerTask), back
    assert back.status == "input_required"
    assert browser.visits == 2
