"""The one door the faces use: the host's views and actions as the window and the commands see
them.

A face (the window, a command) holds a :class:`HostApi`: the engine's host through the link
(``link.client.Remote``), or, for a command that runs the host in its own process, the
:class:`~mooring.services.host.Host` itself, which satisfies this protocol (mypy checks it in
``services/host.py``). Every method is a coroutine: over the link each one is a request to
the engine. The engine serves exactly the methods named here (:data:`HOST_CALLS`,
:data:`PART_CALLS`), so what a face may ask is declared once.

Every type a face sees here is a value from ``mooring.core``: the faces import nothing of
``mooring.services`` (an import-linter contract).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

from mooring.core.approval.rules import ApprovalRule, Decision, Scope
from mooring.core.assistants import Assistant, AssistantDraft, AssistantEdit, AssistantView
from mooring.core.chat import ProviderConfig, TurnResult
from mooring.core.conversation import (
    Conversation,
    ConversationRound,
    Message,
    SearchHit,
    VersionPoint,
)
from mooring.core.events import AnswerDidSettle, EventBus
from mooring.core.files import FileAttachment
from mooring.core.issues import Issue
from mooring.core.library import Attachment, PromptInfo, PromptText, ResourceInfo
from mooring.core.ports import ConnectionStatus, OpenUrl
from mooring.core.providers import ProviderAdded, ProviderDraft, ProviderView, Verdict
from mooring.core.resources import ResourceView
from mooring.core.server_import import ConfigPreview, ImportEntry, ImportOutcome
from mooring.core.servers import CredentialProfile, ServerDefinition
from mooring.core.tasks.record import TaskRecord
from mooring.core.tools import ToolInfo
from mooring.core.views import (
    AccountView,
    Cancelled,
    IssueView,
    ReconcileReport,
    RuleView,
    ServerSpec,
    ServerView,
    TaskView,
)


class ChatApi(Protocol):
    """Conversations with a model (the host's ``chat`` part)."""

    async def create(
        self,
        *,
        title: str | None = None,
        provider: str | None = None,
        model: str | None = None,
        auto_continue: bool | None = None,
    ) -> Conversation:
        """Start a conversation with a provider (by id or name; ``None``: the default)."""
        ...

    async def provider_choices(self) -> list[ProviderConfig]:
        """The providers a conversation can use, the default one first (empty: none)."""
        ...

    async def models_of(self, provider_id: str) -> list[str]:
        """The models a provider's endpoint lists (a ``KnownError`` when it cannot be asked)."""
        ...

    async def get(self, key: str) -> Conversation:
        """A conversation by id or unique id prefix (else ``NotFound``)."""
        ...

    async def list_conversations(self, *, limit: int | None = None) -> list[Conversation]:
        """Conversations, most recently active first."""
        ...

    async def messages(self, conversation_id: str) -> list[Message]:
        """A conversation's stored messages in order."""
        ...

    async def messages_before(
        self, conversation_id: str, before_id: str | None = None, *, limit: int = 200
    ) -> list[Message]:
        """A page of a conversation, oldest first, before ``before_id`` (``None``: newest)."""
        ...

    async def rounds(
        self, conversation_id: str, *, result_limit: int | None = None
    ) -> list[ConversationRound]:
        """A conversation's tool rounds with their operation records; ``result_limit``: each
        result clipped to that many characters of text (:func:`mooring.core.results.clipped`)."""
        ...

    async def search(self, words: str, *, limit: int = 50) -> list[SearchHit]:
        """Conversations with a title or a message that contains every word."""
        ...

    async def rename(self, key: str, title: str) -> Conversation:
        """Give a conversation a new title."""
        ...

    async def configure(
        self,
        key: str,
        *,
        auto_continue: bool | None = None,
        muted: bool | None = None,
        model: str | None = None,
        provider: str | None = None,
        system_prompt: str | None = None,
        default_system_prompt: bool = False,
    ) -> Conversation:
        """Change a conversation's settings (only those given). ``system_prompt`` sets its
        own instructions to the model (``""``: none); ``default_system_prompt`` makes it
        follow the default of Settings again."""
        ...

    async def delete(self, key: str) -> Conversation:
        """Delete a conversation and its messages (what ran stays in the task ledger)."""
        ...

    async def export(self, key: str, fmt: str) -> str:
        """The conversation's record as ``json`` or ``md``."""
        ...

    async def send(
        self,
        conversation_id: str,
        text: str,
        *,
        attachments: Sequence[Attachment] = (),
        files: Sequence[FileAttachment] = (),
    ) -> TurnResult:
        """Store the user's message (with the text of the resources attached to it, and the
        ``files`` attached to it) and run a model turn on it. Files too big, or an image for a
        model that takes none, are refused with nothing stored."""
        ...

    async def regenerate(self, conversation_id: str, message_id: str) -> TurnResult:
        """Answer the user's message at or before ``message_id`` again; what followed is kept
        as a version. A tool the new reply calls asks again."""
        ...

    async def edit(self, conversation_id: str, message_id: str, text: str) -> TurnResult:
        """Send ``text`` in place of the user's message; it and what followed are kept as a
        version."""
        ...

    async def versions(self, conversation_id: str) -> list[VersionPoint]:
        """The places of the conversation with more than one version, in order."""
        ...

    async def show_version(self, conversation_id: str, after_id: str | None, number: int) -> bool:
        """Show version ``number`` (1-based) of the place after ``after_id``."""
        ...

    async def continue_with_result(self, conversation_id: str) -> TurnResult:
        """Start a model turn on the background results stored since the model last spoke."""
        ...

    async def catch_up(self, conversation_id: str) -> list[Message]:
        """Store the results of this conversation's tasks that ended while no one listened."""
        ...

    async def stop(self, conversation_id: str) -> bool:
        """Stop the running turn; whether one was running."""
        ...

    async def answer_input(self, record_id: str, key: str, answer: dict[str, Any]) -> bool:
        """The user answers a task's question (never the model); whether it was delivered."""
        ...

    async def idle(self) -> list[TurnResult]:
        """Wait until follow-ups (and the turns they started) are done; those turns."""
        ...


class BranchApi(Protocol):
    """Branching conversations (the host's ``branches`` part)."""

    async def branch(self, key: str, message_id: str) -> Conversation:
        """A new conversation holding copies of the shown messages of ``key`` up to and
        including ``message_id`` (hidden versions are not copied), with the same provider,
        model and system prompt, titled "<title> (branch)" and starting with a note of where
        it came from. Tool rounds in the copy are history: nothing runs again."""
        ...


class AssistantDeskApi(Protocol):
    """Saved assistants, presets for new conversations (the host's ``assistants`` part).

    A conversation started from one gets a copy of its settings: editing or removing the
    assistant later changes no conversation already started."""

    async def assistants(self) -> list[AssistantView]:
        """Every assistant, by name."""
        ...

    async def get(self, name: str) -> AssistantView:
        """An assistant by name (or id), else ``NotFound``."""
        ...

    async def add(self, draft: AssistantDraft) -> AssistantView:
        """Store a new assistant (its provider and servers must exist; names are unique)."""
        ...

    async def edit(self, name: str, edit: AssistantEdit) -> AssistantView:
        """Change what ``edit`` gives (conversations already started keep their settings)."""
        ...

    async def remove(self, name: str) -> Assistant:
        """Remove an assistant (its conversations keep their settings)."""
        ...

    async def start(self, name: str, *, title: str | None = None) -> Conversation:
        """A new conversation from an assistant: its system prompt, provider and model, and
        only its servers' and tools' tools offered to the model."""
        ...


class ProviderDeskApi(Protocol):
    """Adding, testing and removing model providers (the host's ``provider_desk`` part)."""

    async def providers(self) -> list[ProviderView]:
        """Every provider, the default marked."""
        ...

    async def add(self, draft: ProviderDraft) -> ProviderAdded:
        """Store a provider: its secrets in the keyring first, then its configuration."""
        ...

    async def find(self, name: str | None) -> ProviderConfig:
        """A provider by name (``None``: the default), or a clear error."""
        ...

    async def edit(self, config: ProviderConfig, draft: ProviderDraft) -> ProviderConfig:
        """Store an edited provider: name, kind, address and model; a new key, a variable to
        read it from, or neither (the stored key is kept)."""
        ...

    async def remove(self, config: ProviderConfig) -> ProviderConfig | None:
        """Remove a provider and its secrets; the default afterwards (if any)."""
        ...

    async def set_default(self, config: ProviderConfig) -> None:
        """Make a provider the default for new conversations."""
        ...

    async def models(self, config: ProviderConfig) -> list[str]:
        """The models the endpoint lists (may be empty)."""
        ...

    async def test(self, config: ProviderConfig) -> Verdict:
        """One tiny request: what works, in plain terms."""
        ...


class RuleDeskApi(Protocol):
    """Listing, adding and removing approval rules (the host's ``rule_desk`` part)."""

    async def rules(self) -> list[RuleView]:
        """Every rule, with its server's name."""
        ...

    async def servers(self) -> list[ServerDefinition]:
        """The servers a rule can be made for."""
        ...

    async def add(
        self, server: ServerDefinition, tool_pattern: str, decision: Decision, scope: Scope
    ) -> ApprovalRule:
        """Add a rule for a server's tools (the pattern may be ``*`` or ``list_*``)."""
        ...

    async def remove(self, rule_id: str) -> bool:
        """Remove a rule; whether it was there."""
        ...


class ServerDeskApi(Protocol):
    """Setting servers up: adding, editing, importing and removing them, their tools and
    connections (the host's ``server_desk`` part)."""

    async def servers(self) -> list[ServerView]:
        """Every configured server with its connection state."""
        ...

    async def tools(
        self, server: ServerDefinition, *, refresh: bool = False
    ) -> list[ToolInfo] | None:
        """A server's tools (``None``: it cannot be reached now)."""
        ...

    async def connection_status(
        self, server: ServerDefinition, profile_id: str | None = None
    ) -> ConnectionStatus:
        """The state of the connection to a server and account (connecting it)."""
        ...

    async def add(self, spec: ServerSpec) -> ServerDefinition:
        """Add a stdio or Streamable HTTP server (secret values to the keyring only)."""
        ...

    async def update(self, alias: str, spec: ServerSpec) -> ServerDefinition:
        """Edit a server: its name, command or URL, environment, headers, trust, tool lists."""
        ...

    async def set_trusted(self, alias: str, trusted: bool) -> ServerDefinition:
        """Trust (or stop trusting) a server's tool annotations."""
        ...

    async def set_tool_access(
        self,
        alias: str,
        tool: str,
        *,
        enabled: bool | None = None,
        hidden: bool | None = None,
    ) -> ServerDefinition:
        """Enable or disable one tool, hide or show it; the server as it is now."""
        ...

    async def remove(self, alias: str) -> ServerDefinition:
        """Remove a server (its past tasks keep their history) and forget its secrets."""
        ...

    async def find_configs(self) -> list[ConfigPreview]:
        """Other hosts' server configuration files found here, each with what importing it
        would do."""
        ...

    async def preview_file(self, path: str) -> ConfigPreview:
        """What importing one configuration file would do."""
        ...

    async def import_entries(self, entries: Sequence[ImportEntry]) -> ImportOutcome:
        """Add the chosen entries of previews; what cannot be added is skipped, with why."""
        ...


class AccountDeskApi(Protocol):
    """A server's accounts: adding and removing them, signing them in and out (the host's
    ``account_desk`` part)."""

    async def accounts(self, alias: str) -> list[AccountView]:
        """A server's accounts (the default one first) and whether each is signed in."""
        ...

    async def add(self, alias: str, label: str) -> CredentialProfile:
        """Add an account to a server."""
        ...

    async def remove(self, alias: str, label: str) -> None:
        """Remove an account and its tokens; its unfinished tasks become issues."""
        ...

    async def account_id(self, alias: str, label: str | None) -> str | None:
        """The profile id of a server's account (``None``: the default account)."""
        ...

    async def sign_in(self, alias: str, label: str | None, open_url: OpenUrl) -> None:
        """Sign an account of a Streamable HTTP server in with OAuth."""
        ...

    async def sign_out(self, alias: str, label: str | None) -> None:
        """Forget an account's tokens."""


class LibraryApi(Protocol):
    """The prompts and resources servers offer (the host's ``library`` part). Their texts come
    from servers: a face shows them inert."""

    async def prompts(self, server: str | None = None) -> list[PromptInfo]:
        """The prompts of one server (by alias), or of every server that can be reached now."""
        ...

    async def get_prompt(
        self, server: str, name: str, arguments: Mapping[str, str] | None = None
    ) -> PromptText:
        """A prompt's messages with these arguments (a ``KnownError`` when it cannot be had)."""
        ...

    async def resources(self, server: str | None = None) -> list[ResourceInfo]:
        """The resources and resource templates of one server, or of every server reachable."""
        ...

    async def attach(self, server: str, uri: str) -> Attachment:
        """Read a resource to attach to a message (its text, size-limited)."""
        ...


class HostApi(Protocol):
    """The host's views and actions, as every face reaches them."""

    # -- parts and events ----------------------------------------------------------------------

    @property
    def events(self) -> EventBus:
        """The host's events, told on the face's loop after what they report is stored."""
        ...

    @property
    def chat(self) -> ChatApi | None:
        """Conversations with a model (``None``: this host talks to no model)."""
        ...

    @property
    def branches(self) -> BranchApi | None:
        """Branching conversations (``None``: this host has no conversations)."""
        ...

    @property
    def assistants(self) -> AssistantDeskApi | None:
        """Saved assistants (``None``: this host talks to no model)."""
        ...

    @property
    def provider_desk(self) -> ProviderDeskApi | None:
        """Model providers (``None``: this host has none)."""
        ...

    @property
    def rule_desk(self) -> RuleDeskApi:
        """Approval rules."""
        ...

    @property
    def server_desk(self) -> ServerDeskApi:
        """Setting servers up."""
        ...

    @property
    def account_desk(self) -> AccountDeskApi:
        """Servers' accounts."""
        ...

    @property
    def library(self) -> LibraryApi:
        """Servers' prompts and resources."""
        ...

    # -- lifecycle -----------------------------------------------------------------------------

    async def prepare(self) -> None:
        """First use of a data folder: configure the bundled demo server (once, ever)."""
        ...

    async def reconcile(self) -> ReconcileReport:
        """Re-read every unfinished task from its server; never re-send a call."""
        ...

    # -- tasks ---------------------------------------------------------------------------------

    async def task_view(self, record: TaskRecord, *, result_limit: int | None = None) -> TaskView:
        """Everything a face shows about one task (``result_limit``: as :meth:`tasks`)."""
        ...

    async def task_views(
        self,
        records: Sequence[TaskRecord],
        *,
        fresh: bool = False,
        result_limit: int | None = None,
    ) -> list[TaskView]:
        """The views of ``records`` in their order (``fresh``: each as stored now;
        ``result_limit``: as :meth:`tasks`)."""
        ...

    async def find_task(self, key: str) -> TaskRecord:
        """The record a person means by ``key``: an id, a task id, or a unique prefix."""
        ...

    async def tasks(
        self, *, active: bool = False, limit: int | None = None, result_limit: int | None = None
    ) -> list[TaskView]:
        """Task views, newest first (``active``: only unfinished ones); ``result_limit``: each
        result clipped to that many characters of text (:func:`mooring.core.results.clipped`)."""
        ...

    async def record(self, record_id: str) -> TaskRecord | None:
        """One record as stored now (``None``: no such record)."""
        ...

    async def records(self, record_ids: Sequence[str]) -> list[TaskRecord | None]:
        """Records as stored now, in the order asked."""
        ...

    async def call(
        self,
        server: ServerDefinition,
        tool: str,
        arguments: dict[str, Any],
        *,
        profile_id: str | None = None,
        conversation_id: str | None = None,
        on_persisted: Callable[[TaskRecord], None] | None = None,
    ) -> TaskRecord:
        """Run one tool call: approval first, then the request; its record once the server
        answered (or did not). A task goes on in the engine."""
        ...

    async def stop_call(self, record_id: str) -> bool:
        """Stop a plain call that is waiting for its server; whether one was running."""
        ...

    async def watch(self, record_ids: Sequence[str], *, soon: bool = False) -> list[TaskRecord]:
        """Have the engine follow these records to their ends; each as stored now."""
        ...

    async def cancel_delivered(self, record_id: str) -> bool:
        """Whether the server has a cancel request of this task (it acknowledged one)."""
        ...

    async def sample_answer(self, record_id: str, key: str) -> AnswerDidSettle:
        """Answer a task's sampling question through the user's model."""
        ...

    async def read_resources(self, record_id: str, which: str) -> list[ResourceView]:
        """Read what a task's result links to (one URI, or ``*``), through its own server."""
        ...

    async def answer(self, record_id: str, key: str, reply: Mapping[str, Any]) -> AnswerDidSettle:
        """Check the reply against the question, save it, then send it."""
        ...

    async def cancel(self, record_id: str) -> Cancelled:
        """Ask the server to cancel a task; the server's answer decides the outcome."""
        ...

    async def abandon(self, record_id: str) -> TaskRecord:
        """Give up on a call whose outcome is unknown (nothing is sent)."""
        ...

    async def retry_is_safe(self, record: TaskRecord) -> bool:
        """Whether retrying cannot run the tool twice (idempotent, on a trusted server)."""
        ...

    async def retry(
        self,
        record_id: str,
        *,
        may_run_twice: bool = False,
        confirm: Callable[[str], Awaitable[bool]] | None = None,
    ) -> TaskRecord | None:
        """Send a call with an unknown outcome again, as a new operation."""
        ...

    async def run_sample_import(
        self, *, on_persisted: Callable[[TaskRecord], None] | None = None
    ) -> TaskRecord:
        """Import the bundled sample suppliers on the bundled demo server (a real task)."""
        ...

    # -- issues --------------------------------------------------------------------------------

    async def open_issues(self) -> list[IssueView]:
        """What needs the user, with what they can do about it."""
        ...

    async def dismiss_issue(self, prefix: str) -> Issue:
        """Mark an open issue resolved (by id or unique prefix)."""
        ...

    # -- servers -------------------------------------------------------------------------------

    async def server(self, alias: str) -> ServerDefinition:
        """The server called ``alias``, or a clear error."""
        ...

    async def find_server(self, alias: str) -> ServerDefinition | None:
        """The configured server called ``alias`` (``None``: there is none)."""
        ...

    async def server_by_id(
        self, server_id: str, *, removed_too: bool = False
    ) -> ServerDefinition | None:
        """A server by its id; a removed one only with ``removed_too``."""
        ...

    async def list_servers(self) -> list[ServerDefinition]:
        """The configured servers (without their connections' state)."""
        ...

    async def bundled_server(self) -> ServerDefinition | None:
        """The bundled demo server, while it is configured."""
        ...

    async def secrets_durable(self) -> tuple[bool, str]:
        """Whether secrets stored now outlive this process, and why not."""
        ...


def calls_of(protocol: type[Any]) -> frozenset[str]:
    """The names of a protocol's methods (its properties are not calls)."""
    return frozenset(
        name
        for name, value in vars(protocol).items()
        if not name.startswith("_") and callable(value)
    )


def parts_of(protocol: type[Any]) -> frozenset[str]:
    """The names of a protocol's properties that are themselves parts with calls."""
    return frozenset(
        name
        for name, value in vars(protocol).items()
        if isinstance(value, property) and name != "events"
    )


HOST_CALLS = calls_of(HostApi)
"""The host's methods a face may call (``"tasks"``)."""

PART_CALLS: Mapping[str, frozenset[str]] = {
    "chat": calls_of(ChatApi),
    "branches": calls_of(BranchApi),
    "assistants": calls_of(AssistantDeskApi),
    "provider_desk": calls_of(ProviderDeskApi),
    "rule_desk": calls_of(RuleDeskApi),
    "server_desk": calls_of(ServerDeskApi),
    "account_desk": calls_of(AccountDeskApi),
    "library": calls_of(LibraryApi),
}
"""Each part's methods a face may call (``"chat.send"``)."""
