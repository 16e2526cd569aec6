"""Ports: what the services need from the outside world, as Protocols.

Services depend on these, never on SQLAlchemy, the MCP SDK or Qt; the storage, mcp and adapters
packages provide the implementations, and ``bootstrap`` wires them together.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # annotations only: a face that unpickles a ConnectionStatus loads none of it
    from mooring.core.approval.rules import ApprovalAuditEntry, ApprovalRule
    from mooring.core.assistants import Assistant
    from mooring.core.chat import ProviderConfig
    from mooring.core.conversation import (
        Conversation,
        ConversationRound,
        Message,
        SearchHit,
        ToolRound,
        TurnOpening,
        VersionPoint,
    )
    from mooring.core.issues import Issue
    from mooring.core.library import PromptInfo, PromptOutcome, ResourceInfo, Unlisted
    from mooring.core.notifications import Notice
    from mooring.core.resources import ResourceOutcome
    from mooring.core.server_import import ConfigSource
    from mooring.core.servers import CredentialProfile, ServerDefinition
    from mooring.core.tasks.calls import AckOutcome, CallOutcome, Progress
    from mooring.core.tasks.checks import PollMark
    from mooring.core.tasks.inputs import TaskInput
    from mooring.core.tasks.parts import TaskParts
    from mooring.core.tasks.reconcile import Observation, Reconciliation, ServerTask
    from mooring.core.tasks.record import TaskRecord
    from mooring.core.tasks.states import LocalState
    from mooring.core.tasks.wire import TaskWire
    from mooring.core.tools import ToolInfo


class ServerCatalog(Protocol):
    """The user's configured servers."""

    async def list_servers(self) -> list[ServerDefinition]: ...
    async def find_server(self, alias: str) -> ServerDefinition | None: ...
    async def get_server(self, server_id: str) -> ServerDefinition | None: ...
    async def add_server(self, server: ServerDefinition) -> None: ...
    async def remove_server(self, server_id: str) -> None: ...
    async def is_removed(self, server_id: str) -> bool:
        """Whether the user removed this server (its row is kept for history)."""
        ...

    async def builtin_ever_configured(self) -> bool:
        """Whether Mooring ever configured a server of its own (even if since removed)."""
        ...

    async def set_trusted(self, server_id: str, trusted: bool) -> None:
        """Trust (or stop trusting) a server's tool annotations."""
        ...

    async def update_server(self, server: ServerDefinition) -> None:
        """Store a changed definition of a live server (same id; its tasks keep pointing at
        it)."""
        ...


class AccountBook(Protocol):
    """Credential profiles: several accounts per server (their secrets are in the keyring)."""

    async def list_profiles(self, server_id: str) -> list[CredentialProfile]: ...
    async def add_profile(self, profile: CredentialProfile) -> None: ...
    async def remove_profile(self, profile_id: str) -> None: ...
    async def is_profile_removed(self, profile_id: str) -> bool: ...


class TaskLedger(Protocol):
    """The durable record of every operation Mooring started."""

    async def begin_operation(self, tool_round: ToolRound, record: TaskRecord) -> None:
        """Persist a tool round and its operation record together (the intent)."""
        ...

    async def get(self, record_id: str) -> TaskRecord | None: ...
    async def find(self, key: str) -> TaskRecord | None:
        """A record by id, task id or a unique prefix of either: for what people type."""
        ...

    async def by_task_id(self, server_id: str, task_id: str) -> TaskRecord | None:
        """The record of one server's task, exactly: for what arrives on the wire."""
        ...

    async def matching(self, key: str, *, limit: int = 20) -> list[TaskRecord]:
        """Records whose operation or task id starts with ``key`` (to explain an ambiguous
        ``find``), newest first."""
        ...

    async def save(
        self, record: TaskRecord, *, expected_updated_at: datetime | None = None
    ) -> None:
        """Persist a changed record; with ``expected_updated_at``, only over that version
        (else :class:`~mooring.core.errors.RecordChanged`)."""
        ...

    async def apply(self, reconciliation: Reconciliation) -> list[TaskInput]: ...
    async def mark_checked(self, mark: PollMark, *, gather: bool = False) -> bool:
        """Store a check that found nothing new (a few columns, batched with the checks of
        other records); returns once it is on disk. Skipped if the record moved on since the
        version the mark was made against: then ``False``. ``gather``: wait a moment for other
        checks to store it with them (a scheduled poll's check; not one a caller waits on to
        go on, as a launch reconciliation does)."""
        ...

    async def store_checks(self) -> None:
        """Store the checks :meth:`mark_checked` still gathers, now (before stopping)."""
        ...

    async def unfinished(self) -> list[TaskRecord]: ...

    async def list_records(
        self, *, states: Sequence[LocalState] | None = None, limit: int | None = None
    ) -> list[TaskRecord]: ...
    async def counts(self) -> dict[LocalState, int]: ...
    async def parts(self, records: Sequence[TaskRecord], *, fresh: bool = True) -> list[TaskParts]:
        """What a face shows of each record (alias, tool round, inputs), in one read whatever
        their number; ``fresh``: each record as stored now (one no longer stored: as given)."""
        ...

    async def inputs(self, record_id: str) -> list[TaskInput]: ...
    async def inputs_of(self, record_ids: Collection[str]) -> dict[str, list[TaskInput]]:
        """The input requests of many records in one read, by record (none: left out)."""
        ...

    async def with_inputs(self, record_id: str) -> tuple[TaskRecord, list[TaskInput]] | None:
        """A record and its input requests, read together (what a poll starts from)."""
        ...

    async def save_answer(self, record_id: str, key: str, answer: dict[str, Any]) -> None:
        """Persist the user's answer before it is sent; refuses a second answer to a key."""
        ...

    async def settle_answers(
        self, record_id: str, keys: Sequence[str], *, outcome: str | None = None
    ) -> None:
        """Mark answers acknowledged by the server, or (with ``outcome``) undeliverable."""
        ...

    async def tool_round(self, round_id: str) -> ToolRound | None: ...


class RuleBook(Protocol):
    """The user's approval rules and the audit trail of every approval outcome."""

    async def list_rules(self) -> list[ApprovalRule]: ...
    async def add_rule(self, rule: ApprovalRule) -> None: ...
    async def remove_rule(self, rule_id: str) -> bool: ...
    async def record_approval(
        self, entry: ApprovalAuditEntry, *, consumed_rule_id: str | None = None
    ) -> None:
        """Append an audit entry, set the tool round's approval, and use up a "once" rule,
        all in one transaction."""
        ...

    async def audit(self, limit: int = 100) -> list[ApprovalAuditEntry]: ...


class IssueBoard(Protocol):
    """Persistent problems for the user."""

    async def raise_issue(self, issue: Issue) -> Issue: ...
    async def open_issues(self) -> list[Issue]: ...
    async def resolve(self, issue_id: str) -> None: ...


class SecretStore(Protocol):
    """Secrets by (scope, name): the OS keyring, or this session's memory when it is unusable."""

    def get(self, scope: str, name: str) -> str | None: ...
    def set(self, scope: str, name: str, value: str) -> None: ...
    def delete(self, scope: str, name: str) -> None: ...

    @property
    def durable(self) -> bool:
        """Whether a secret set now outlives this process (False: session memory only)."""
        ...


class ConfigFiles(Protocol):
    """Other MCP hosts' configuration files on this machine (Claude Desktop, VS Code,
    Cursor)."""

    def found(self) -> list[ConfigSource]:
        """The known files that exist (blocking: call off the event loop)."""
        ...

    def read(self, path: str) -> str:
        """A file's text (blocking; ``OSError`` when it cannot be read)."""
        ...


OpenUrl = Callable[[str], Awaitable[None]]
"""Shows the user an address to open (the system browser, or a line on the terminal)."""


class AccountSignIn(Protocol):
    """Signing an account of a Streamable HTTP server in and out (OAuth; tokens in the
    keyring)."""

    async def sign_in(
        self, server: ServerDefinition, profile_id: str | None, open_url: OpenUrl
    ) -> bool:
        """Run the sign-in now (``open_url`` shows the authorization address; the redirect
        comes back on loopback): whether the server then accepts Mooring's tokens."""
        ...

    def sign_out(self, server: ServerDefinition, profile_id: str | None) -> None:
        """Forget this account's tokens here."""
        ...

    def signed_in(self, server: ServerDefinition, profile_id: str | None) -> bool:
        """Whether tokens are stored for this account (the server may still refuse them)."""
        ...


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """What one probe of the environment found (``mooring doctor``): the part in use, whether
    it is usable, and why."""

    backend: str
    usable: bool
    detail: str


class ConnectionState(StrEnum):
    """Where a server connection stands (observable in the UI and CLI)."""

    CONNECTING = "connecting"
    READY = "ready"
    FAILED = "failed"
    """Could not start or reach the server; ``ConnectionStatus.reason`` says why."""
    STOPPED = "stopped"


@dataclass(frozen=True, slots=True)
class ConnectionStatus:
    """A connection's state, why, and whether the server speaks the Tasks extension."""

    server_id: str
    state: ConnectionState
    reason: str = ""
    supports_tasks: bool = False
    protocol_version: str | None = None
    task_wire: TaskWire | None = None
    """Which Tasks protocol the server speaks on this connection (``None``: no tasks)."""


@dataclass(frozen=True, slots=True)
class RememberedSession:
    """A Streamable HTTP session a crashed engine left open (:class:`HttpSessions`)."""

    session_id: str
    initialized: str | None = None
    """The server's answer to the ``initialize`` that began the session (a JSON object), for a
    server that refuses a second ``initialize`` in a session it still holds."""


class HttpSessions(Protocol):
    """The Streamable HTTP sessions a crashed engine may have left open, by server and account
    (``profile_id`` ``None``: the server's default account).

    A connection remembers its session (``Mcp-Session-Id``) before it sends anything that
    needs it, and forgets it once the server has taken its end (``DELETE``) or said it does not
    know it (404): what is still remembered when an engine starts is a session its crashed
    predecessor never ended, which the first connection to that server and account resumes.
    The id reaches the server and this table, never a log line or a trace."""

    async def remembered(
        self, server_id: str, profile_id: str | None
    ) -> RememberedSession | None: ...

    async def remember(
        self,
        server_id: str,
        profile_id: str | None,
        session_id: str,
        initialized: str | None = None,
    ) -> None:
        """Record ``session_id`` as this server and account's session (replacing another), and
        ``initialized``, the server's ``initialize`` result that began it (JSON), when known."""
        ...

    async def forget(self, server_id: str, profile_id: str | None, session_id: str) -> None:
        """Forget ``session_id`` (a newer session remembered since is kept)."""
        ...


class ServerConnection(Protocol):
    """Requests to one server under one credential profile.

    Every method returns an outcome value for server-side and transport conditions; none of
    them raises for a dead server, a timeout or a malformed reply.
    """

    @property
    def status(self) -> ConnectionStatus: ...

    async def settled(self) -> ConnectionStatus:
        """Wait for the current connection attempt to end (ready, failed or stopped); the
        connect deadline bounds the wait."""
        ...

    async def list_tools(self) -> list[ToolInfo]: ...

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        on_sending: Callable[[], Awaitable[None]] | None = None,
        on_progress: Callable[[Progress], Awaitable[None]] | None = None,
        call_key: str | None = None,
    ) -> CallOutcome:
        """Send ``tools/call`` declaring the Tasks extension (or the 2025-11-25 ``task`` param).

        ``on_sending`` is awaited immediately before the request is written to the wire (after
        the connection is known to be up), so callers can persist "sent" first. A plain call's
        ``notifications/progress`` reach ``on_progress`` and keep it alive past the idle
        timeout; ``call_key`` names it for :meth:`stop_call`.
        """
        ...

    def stop_call(self, call_key: str) -> bool:
        """Stop a plain call in flight (``notifications/cancelled``); whether one was running."""
        ...

    # ``wire``: the protocol that created the task (the record remembers it); the connection
    # speaks it, so services never need to know the wires apart. ``None``: the 2026 extension.
    async def get_task(self, task_id: str, *, wire: TaskWire | None = None) -> Observation: ...
    async def update_task(
        self,
        task_id: str,
        responses: dict[str, dict[str, Any]],
        *,
        wire: TaskWire | None = None,
    ) -> AckOutcome: ...
    async def cancel_task(self, task_id: str, *, wire: TaskWire | None = None) -> AckOutcome: ...
    async def read_resource(self, uri: str) -> ResourceOutcome:
        """``resources/read`` (a resource a result linked to); never raises."""
        ...

    async def list_prompts(self) -> list[PromptInfo] | Unlisted:
        """``prompts/list`` (empty: the server offers none); never raises."""
        ...

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> PromptOutcome:
        """``prompts/get``: the prompt's messages as text; never raises."""
        ...

    async def list_resources(self) -> list[ResourceInfo] | Unlisted:
        """``resources/list`` and ``resources/templates/list``; never raises."""
        ...


class Gateway(Protocol):
    """Owns every server connection; one long-lived task per (server, credential profile)."""

    async def connect(
        self, server: ServerDefinition, profile_id: str | None = None
    ) -> ServerConnection:
        """The connection for this server and account, started if needed (never raises)."""
        ...

    def statuses(self) -> list[ConnectionStatus]: ...

    def add_task_listener(self, listener: Callable[[str, str, Observation | None], None]) -> None:
        """Be told ``(server_id, task_id, observation)`` when a task notification brings news:
        the full task a ``notifications/tasks`` frame carries, or ``None`` when only
        ``tasks/get`` can say what happened. A frame repeating the last state seen is not
        passed on.
        """
        ...

    def want_task_notifications(self, wanted: bool) -> None:
        """Hold one ``subscriptions/listen`` stream per connection for its running tasks
        (``True``: a long-lived watcher runs), or none (the default: one-shot commands)."""
        ...

    def task_covered(self, server_id: str, profile_id: str | None, task_id: str) -> bool:
        """Whether the server reports ``task_id``'s changes on an open listen stream of this
        server and account (it acknowledged the task): polling it is then only a safety net."""
        ...

    def expect_task(self, server_id: str, profile_id: str | None, seen: ServerTask) -> None:
        """Watch a running task known from the ledger (``seen``: its last known state) on this
        server and account's listen stream, from the stream's next opening, before it is polled:
        the server's replay as the stream opens re-reads it (a repeat of ``seen`` costs
        nothing), and its acknowledgement covers it."""
        ...

    def add_coverage_listener(self, listener: Callable[[str, frozenset[str], bool], None]) -> None:
        """Be told ``(server_id, task_ids, covered)`` when a listen stream starts covering
        tasks, or stops (it ended or failed, the connection went: poll them normally again)."""
        ...

    def add_status_listener(self, listener: Callable[[ConnectionStatus], None]) -> None:
        """Be told every connection's new status when it changes (connecting, ready, ...)."""
        ...

    def add_tools_listener(self, listener: Callable[[str, str | None], None]) -> None:
        """Be told ``(server_id, profile_id)`` when a server says its tool list changed
        (``notifications/tools/list_changed``)."""
        ...

    def add_lists_listener(self, listener: Callable[[str, str | None, str], None]) -> None:
        """Be told ``(server_id, profile_id, kind)`` when a server says its ``"prompts"`` or
        ``"resources"`` list changed (``notifications/*/list_changed``)."""
        ...

    def secrets_changed(self, server_id: str) -> None:
        """The server's header or environment values in the keyring were edited: its
        connections are replaced at their next use. (A connection reads its secrets once,
        as it starts: not at every use.)"""
        ...

    def signed_in(self, server_id: str, profile_id: str | None) -> None:
        """This account has just signed in: its connection, if it failed or is still trying
        with the old credentials, tries again at once (a live one keeps its session)."""
        ...

    async def disconnect(
        self, server_id: str, profile_id: str | None = None, *, every_account: bool = False
    ) -> None:
        """End one account's connection now (a stdio server stopped, an HTTP session ended),
        or with ``every_account`` all of the server's; no-op when there is none."""
        ...

    def idle_connections(self, idle_after: float) -> list[tuple[str, str | None]]:
        """``(server_id, profile_id)`` of each connection unused for ``idle_after`` seconds."""
        ...

    async def end_if_idle(self, server_id: str, profile_id: str | None, idle_after: float) -> bool:
        """End a connection that is still unused for ``idle_after`` seconds; whether it was."""
        ...

    async def aclose(self) -> None: ...


# -- model providers (issue 12) ------------------------------------------------------------


class ProviderBook(Protocol):
    """The user's configured model endpoints (their secrets are in the keyring).

    The first provider added becomes the default; removing the default makes the oldest
    remaining one the default.
    """

    async def list_providers(self) -> list[ProviderConfig]: ...
    async def get_provider(self, provider_id: str) -> ProviderConfig | None: ...
    async def find_provider(self, name: str) -> ProviderConfig | None: ...
    async def add_provider(self, config: ProviderConfig) -> bool:
        """Store a new provider; whether it became the default. A taken name raises
        :class:`~mooring.core.errors.KnownError` (code ``exists``)."""
        ...

    async def update_provider(self, config: ProviderConfig) -> None:
        """Store an edited provider (same id); a name another provider has raises
        :class:`~mooring.core.errors.KnownError` (code ``exists``)."""
        ...

    async def remove_provider(self, provider_id: str) -> None: ...
    async def default_provider(self) -> ProviderConfig | None: ...
    async def set_default_provider(self, provider_id: str) -> None: ...


class AssistantBook(Protocol):
    """Saved assistants (presets for new conversations), by unique name."""

    async def list_assistants(self) -> list[Assistant]:
        """By name."""
        ...

    async def find_assistant(self, key: str) -> Assistant | None:
        """By name (exactly, else ignoring case) or id."""
        ...

    async def add_assistant(self, assistant: Assistant) -> None:
        """Store a new one; a taken name raises :class:`~mooring.core.errors.KnownError`
        (code ``exists``)."""
        ...

    async def update_assistant(self, assistant: Assistant) -> bool:
        """Store an edited one (same id; a taken name: ``exists``); whether it exists."""
        ...

    async def remove_assistant(self, assistant_id: str) -> bool:
        """Remove it (its conversations keep their settings and lose the link)."""
        ...


class ConversationBook(Protocol):
    """Conversations and their messages, with full-text search (kept in step with every write)."""

    async def create_conversation(
        self, conversation: Conversation, messages: Sequence[Message] = ()
    ) -> None:
        """Store a new conversation with ``messages`` (a branch's copies) in one transaction."""
        ...

    async def get_conversation(self, conversation_id: str) -> Conversation | None: ...
    async def find_conversation(self, key: str) -> Conversation | None:
        """By id or a unique prefix of it."""
        ...

    async def list_conversations(self, *, limit: int | None = None) -> list[Conversation]:
        """Most recently active first."""
        ...

    async def update_conversation(self, conversation: Conversation) -> bool:
        """Store title and settings; whether the conversation exists."""
        ...

    async def delete_conversation(self, conversation_id: str) -> bool:
        """Delete it and its messages (its tool rounds stay in the ledger, unlinked)."""
        ...

    async def append_messages(self, messages: Sequence[Message]) -> None:
        """Append in order, in one transaction."""
        ...

    async def append_followup(self, message: Message) -> bool:
        """Append a background task's final result unless its round already has one (another
        window or command may have stored it first); whether it was appended."""
        ...

    async def open_turn(
        self,
        message: Message,
        *,
        title: str | None = None,
        with_provider: bool = True,
        check_waiting: bool = True,
    ) -> TurnOpening | None:
        """In one transaction: read the conversation ``message`` belongs to (by exact id;
        ``None``, with nothing written, when there is none) and, ``with_provider``, its
        provider (its own, or the default one); store the user's ``message`` (``title``
        becomes the conversation's title while it has the default one) and return the
        conversation's messages with it. Nothing is written (``stored`` is ``None``) when the
        provider was asked for and none is stored, or when ``check_waiting`` and a background
        task of the conversation ended with its final result not yet stored (store the
        follow-ups first, then call again)."""
        ...

    async def messages(self, conversation_id: str) -> list[Message]: ...
    async def messages_before(
        self, conversation_id: str, before_id: str | None, limit: int
    ) -> list[Message]:
        """At most ``limit`` messages stored right before ``before_id`` (``None``: the newest
        ones), oldest first: a page of a long transcript."""
        ...

    async def fork(self, conversation_id: str, after_id: str | None) -> bool:
        """Keep the shown messages after ``after_id`` (``None``: all) as a hidden version of
        that place; whether there were any. ``LookupError`` if that message is not shown."""
        ...

    async def version_points(self, conversation_id: str) -> list[VersionPoint]:
        """The places of the shown conversation with more than one version, in order."""
        ...

    async def show_version(self, conversation_id: str, after_id: str | None, number: int) -> bool:
        """Show version ``number`` (1-based) of the place after ``after_id``, keeping the
        shown one as a version; whether anything changed (``LookupError``, ``IndexError``)."""
        ...

    async def awaiting_results(self, conversation_id: str) -> list[Message]:
        """Tool results that said a background task started, with no follow-up stored yet."""
        ...

    async def search(self, words: str, *, limit: int = 50) -> list[SearchHit]:
        """Conversations with a title or a message that contains every word, best first."""
        ...

    async def conversation_rounds(self, conversation_id: str) -> list[ConversationRound]:
        """Its tool rounds, oldest first, with their operation records."""


# -- Notifications and background monitoring ---------------------------------------------------


class NoticeSink(Protocol):
    """Shows notices through the first delivery link that works (desktop notification → system
    tray → in-app toast); it always ends somewhere."""

    async def show(self, notice: Notice) -> str:
        """Deliver ``notice``, replacing an earlier one with the same key; returns the name of
        the link that delivered it."""
        ...
