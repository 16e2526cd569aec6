"""The host: every use case of Mooring behind one object that the CLI and the window share.

A face (the CLI, the window, a test) builds one :class:`Host` through the composition root,
starts it, reads its views, calls its actions and listens to its typed events on
:attr:`Host.events`. No face re-implements a use case: answering validates against the question,
retrying an unknown outcome abandons the original only when the retry went out, adding a server
puts its secrets in the keyring, and the plain words for a state come from one function.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mooring.core.approval.policy import Guards
from mooring.core.chat import ProviderConfig, ProviderFactory
from mooring.core.clock import Clock
from mooring.core.elicitation import SchemaError, check_reply, decline
from mooring.core.errors import KnownError, NotFound, Remedy
from mooring.core.events import AnswerDidSettle, ConnectionDidChange, EventBus
from mooring.core.host_api import HostApi
from mooring.core.ids import short_id
from mooring.core.issues import Issue, actions_for
from mooring.core.ports import (
    AccountBook,
    AccountSignIn,
    AssistantBook,
    ConfigFiles,
    ConnectionStatus,
    ConversationBook,
    Gateway,
    IssueBoard,
    ProviderBook,
    RuleBook,
    SecretStore,
    ServerCatalog,
    TaskLedger,
)
from mooring.core.resources import ALL_RESOURCES, ResourceView, resource_links, resource_view
from mooring.core.sample import SAMPLE_FILE, SAMPLE_TOOL
from mooring.core.servers import ServerDefinition
from mooring.core.tasks.inputs import TaskInput, is_form
from mooring.core.tasks.polling import PollPolicy
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from mooring.core.tasks.words import state_words
from mooring.core.tools import ToolInfo
from mooring.core.views import SHOWN_MATCHES as SHOWN_MATCHES
from mooring.core.views import AccountView as AccountView
from mooring.core.views import AmbiguousId as AmbiguousId
from mooring.core.views import Cancelled as Cancelled
from mooring.core.views import CancelResult as CancelResult
from mooring.core.views import IssueView as IssueView
from mooring.core.views import ReconcileReport as ReconcileReport
from mooring.core.views import ServerSpec as ServerSpec
from mooring.core.views import ServerView as ServerView
from mooring.core.views import TaskView as TaskView
from mooring.services.approvals import ApprovalBroker, Preview
from mooring.services.assistants import AssistantDesk
from mooring.services.chat import ChatService, ProviderResolver
from mooring.services.chat_branch import Branches
from mooring.services.first_run import ensure_demo_server
from mooring.services.library import Library
from mooring.services.preferences import ProviderDesk, RuleDesk
from mooring.services.reconciler import Reconciler, UnknownOutcomes
from mooring.services.sampling import InputBroker
from mooring.services.server_desk import AccountDesk, ServerDesk, server_called
from mooring.services.server_setup import ENV_SCOPE as ENV_SCOPE
from mooring.services.server_setup import HEADER_SCOPE as HEADER_SCOPE
from mooring.services.server_setup import (
    ServerReachability,
    ServerSetup,
)
from mooring.services.task_monitor import TaskMonitor
from mooring.services.telling import IssueDesk
from mooring.services.tool_index import ToolIndex
from mooring.services.tool_runner import ToolRunner

if TYPE_CHECKING:
    from mooring.core.faces import AskUser

log = logging.getLogger("mooring.host")


@dataclass(frozen=True, slots=True, kw_only=True)
class HostConfig:
    """What the host is told by settings (the composition root reads them)."""

    poll_policy: PollPolicy = field(default_factory=PollPolicy)
    per_server: int = 4
    max_argument_bytes: int = 256 * 1024
    capture_content: bool = False
    demo_server: tuple[str, tuple[str, ...]] | None = None
    """How to start the bundled demo server (command, args), or ``None`` not to configure it."""


class Host:
    """One running Mooring: its services, their start and stop, its views and actions."""

    def __init__(
        self,
        *,
        catalog: ServerCatalog,
        ledger: TaskLedger,
        issues: IssueBoard,
        rules: RuleBook,
        accounts: AccountBook,
        secrets: SecretStore,
        gateway: Gateway,
        clock: Clock,
        config: HostConfig | None = None,
        ask: AskUser | None = None,
        preview: Preview | None = None,
        owner: str | None = None,
        owner_alive: Callable[[str], bool] = lambda _owner: False,
        providers: ProviderBook | None = None,
        provider_factory: ProviderFactory | None = None,
        conversations: ConversationBook | None = None,
        auto_continue: bool = False,
        instructions: Callable[[], str] | None = None,
        resolve_provider: ProviderResolver | None = None,
        inputs: InputBroker | None = None,
        config_files: ConfigFiles | None = None,
        sign_in: AccountSignIn | None = None,
        assistants: AssistantBook | None = None,
    ) -> None:
        self.config = config or HostConfig()
        self.providers = providers
        """Model provider configurations (``None``: this host talks to no model)."""
        self.provider_factory = provider_factory
        """Builds a chat provider with its keyring secrets."""
        self.provider_desk = (
            ProviderDesk(book=providers, factory=provider_factory, secrets=secrets)
            if providers is not None and provider_factory is not None
            else None
        )
        """Adding, testing and removing model providers (``None``: this host has none)."""
        self.rule_desk = RuleDesk(rules=rules, catalog=catalog, clock=clock)
        """Listing, adding and removing approval rules."""
        self.inputs = inputs or InputBroker(rules=rules, clock=clock)
        """Servers' sampling and form requests; the gateway's ``input_handler`` should be its
        ``handle`` (the face sets the askers on it)."""
        self.catalog = catalog
        self.ledger = ledger
        self.issue_board = issues
        self.rules = rules
        self.accounts = accounts
        self.secrets = secrets
        self.gateway = gateway
        self.clock = clock
        self.events = EventBus()
        self.setup = ServerSetup(
            catalog=catalog,
            accounts=accounts,
            secrets=secrets,
            events=self.events,
            clock=clock,
            config_files=config_files,
            sign_in=sign_in,
        )
        """Importing, editing and signing servers in (the server and account desks use it)."""
        self.issues = IssueDesk(board=issues, events=self.events, clock=clock)
        self.reachability = ServerReachability(
            catalog=catalog, board=issues, desk=self.issues, secrets=secrets
        )
        """Keeps an issue open for each server whose connection failed, until it connects."""
        gateway.add_status_listener(self.reachability.on_status)
        self.tools = ToolIndex(gateway=gateway, events=self.events)
        self.library = Library(catalog=catalog, gateway=gateway, events=self.events)
        """Servers' prompts and resources."""
        self.monitor = TaskMonitor(
            ledger=ledger,
            catalog=catalog,
            gateway=gateway,
            events=self.events,
            clock=clock,
            policy=self.config.poll_policy,
            per_server=self.config.per_server,
            issues=self.issues,
        )
        self.broker = ApprovalBroker(
            rules=rules,
            clock=clock,
            guards_for=self._guards_for,
            ask=ask,
            preview=preview,
            events=self.events,
        )
        self.runner = ToolRunner(
            ledger=ledger,
            gateway=gateway,
            monitor=self.monitor,
            broker=self.broker,
            events=self.events,
            clock=clock,
            capture_content=self.config.capture_content,
            owner=owner,
            tool_index=self.tools,
        )
        self.reconciler = Reconciler(
            ledger=ledger,
            catalog=catalog,
            issues=issues,
            rules=rules,
            gateway=gateway,
            monitor=self.monitor,
            events=self.events,
            clock=clock,
            accounts=accounts,
            owner=owner,
            owner_alive=owner_alive,
            desk=self.issues,
            redact=self.reachability.without_secrets,
        )
        self.unknown = UnknownOutcomes(
            ledger=ledger,
            catalog=catalog,
            issues=issues,
            gateway=gateway,
            events=self.events,
            clock=clock,
            tool_index=self.tools,
            desk=self.issues,
        )
        self.server_desk = ServerDesk(
            catalog=catalog,
            secrets=secrets,
            gateway=gateway,
            setup=self.setup,
            tools=self.tools,
            reachability=self.reachability,
            reconciler=self.reconciler,
            events=self.events,
            clock=clock,
        )
        """Adding, editing, importing and removing servers; their tools and connections."""
        self.account_desk = AccountDesk(
            catalog=catalog,
            gateway=gateway,
            setup=self.setup,
            reconciler=self.reconciler,
            events=self.events,
        )
        """Servers' accounts: adding and removing them, signing them in and out."""
        self.chat: ChatService | None = None
        """Conversations with a model (``None`` without conversation storage or providers)."""
        if conversations is not None and provider_factory is not None:
            own_book = providers if resolve_provider is None else None
            self.chat = ChatService(
                conversations=conversations,
                providers=resolve_provider or self._provider_config,
                provider_list=own_book.list_providers if own_book is not None else None,
                stored_providers=own_book is not None,
                provider_factory=provider_factory,
                runner=self.runner,
                monitor=self.monitor,
                ledger=ledger,
                catalog=catalog,
                events=self.events,
                clock=clock,
                tools=self.offered_tools,
                auto_continue_default=auto_continue,
                instructions=instructions,
            )
            self.chat.start()
        self.branches: Branches | None = (
            Branches(conversations=conversations, clock=clock)
            if self.chat is not None and conversations is not None
            else None
        )
        """Branching conversations (with the chat)."""
        self.assistants: AssistantDesk | None = None
        """Saved presets for new conversations (``None``: no chat, or no place to keep them)."""
        if self.chat is not None and conversations is not None and assistants is not None:
            self.assistants = AssistantDesk(
                book=assistants,
                conversations=conversations,
                catalog=catalog,
                providers=resolve_provider or self._provider_config,
                clock=clock,
                auto_continue=lambda: auto_continue,
            )
        self._scheduler: asyncio.Task[None] | None = None
        self._prepared = False
        gateway.add_status_listener(self._on_connection)

    # -- lifecycle -----------------------------------------------------------------------------

    async def prepare(self) -> None:
        """First use of a data folder: configure the bundled demo server (once, ever)."""
        if self._prepared:
            return
        self._prepared = True
        await self.reachability.load()
        if self.config.demo_server is not None:
            command, args = self.config.demo_server
            await ensure_demo_server(self.catalog, self.clock, command=command, args=args)

    def start_monitoring(self) -> None:
        """Run the task monitor's scheduler in the background (idempotent)."""
        if self._scheduler is None or self._scheduler.done():
            self._scheduler = asyncio.ensure_future(self.monitor.run())

    async def reconcile(self) -> ReconcileReport:
        """Re-read every unfinished task from its server; never re-send a call."""
        return await self.reconciler.run()

    async def stop(self) -> None:
        """Stop the chat's background work and monitoring; close every server connection."""
        if self.chat is not None:
            await self.chat.aclose()
        # A factory may run model processes of its own (local models): they end with the host.
        close_factory = getattr(self.provider_factory, "aclose", None)
        if close_factory is not None:
            await close_factory()
        await self.monitor.stop()
        if self._scheduler is not None:
            self._scheduler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._scheduler
            self._scheduler = None
        await self.gateway.aclose()
        await self.reachability.settled()  # a failed connection's issue is written, not lost

    async def _provider_config(self, key: str | None) -> ProviderConfig:
        """A provider by id or name (``None``: the default one), or a clear error."""
        book = self.providers
        found = None
        if book is not None:
            if key is None:
                found = await book.default_provider()
            else:
                found = await book.get_provider(key) or await book.find_provider(key)
        if found is None:
            raise KnownError(
                "No model provider is configured."
                if key is None
                else f"No model provider called {key!r}.",
                code="no_provider",
                remedy=Remedy.ADD_PROVIDER,
            )
        return found

    async def offered_tools(
        self, servers: Sequence[ServerDefinition]
    ) -> list[tuple[ServerDefinition, ToolInfo]]:
        """These servers' tools from the tool index (read concurrently; a server that cannot be
        reached offers nothing now). Hidden and disallowed tools are filtered by the chat, and
        refused by the guards whatever asks."""
        listed = await asyncio.gather(*(self.tools.tools(s) for s in servers))
        return [
            (server, tool)
            for server, tools in zip(servers, listed, strict=True)
            for tool in tools or []
        ]

    def _on_connection(self, status: ConnectionStatus) -> None:
        self.events.emit(ConnectionDidChange(status.server_id, status.state.value, status.reason))

    def _guards_for(self, server: ServerDefinition) -> Guards:
        return Guards(
            max_argument_bytes=self.config.max_argument_bytes,
            allowed_tools=None if server.allowed_tools is None else frozenset(server.allowed_tools),
            hidden_tools=frozenset(server.hidden_tools),
        )

    # -- views ---------------------------------------------------------------------------------

    async def task_view(self, record: TaskRecord, *, result_limit: int | None = None) -> TaskView:
        """Everything a face shows about one task (``result_limit``: as :meth:`tasks`)."""
        return (await self.task_views([record], result_limit=result_limit))[0]

    async def task_views(
        self,
        records: Sequence[TaskRecord],
        *,
        fresh: bool = False,
        result_limit: int | None = None,
    ) -> list[TaskView]:
        """The views of ``records`` in their order, read together in one database round
        whatever their number (a list never costs a read per row). ``fresh``: each record as
        stored now (one no longer stored: as given); ``result_limit``: as :meth:`tasks`."""
        views = [
            TaskView(
                record=p.record,
                server_alias=p.server_alias,
                tool_round=p.tool_round,
                inputs=p.inputs,
                words=state_words(p.record, p.tool_round.result if p.tool_round else None),
            )
            for p in await self.ledger.parts(records, fresh=fresh)
        ]
        if result_limit is None:
            return views
        return [view.result_clipped(result_limit) for view in views]

    async def find_task(self, key: str) -> TaskRecord:
        """The record a person means by ``key``: an id, a task id, or a unique prefix."""
        record = await self.ledger.find(key)
        if record is not None:
            return record
        matches = await self.ledger.matching(key, limit=SHOWN_MATCHES + 1)
        if len(matches) > 1:
            raise AmbiguousId(key, matches)
        raise NotFound("task", key)

    async def tasks(
        self, *, active: bool = False, limit: int | None = None, result_limit: int | None = None
    ) -> list[TaskView]:
        """Task views, newest first (``active``: only unfinished ones); ``result_limit``: each
        result clipped to that many characters of text."""
        if active:
            records = await self.ledger.unfinished()
        else:
            records = await self.ledger.list_records(limit=limit)
        return await self.task_views(records, result_limit=result_limit)

    async def server(self, alias: str) -> ServerDefinition:
        """The server called ``alias``, or a clear error."""
        return await server_called(self.catalog, alias)

    async def record(self, record_id: str) -> TaskRecord | None:
        """One record as stored now (``None``: no such record)."""
        return await self.ledger.get(record_id)

    async def records(self, record_ids: Sequence[str]) -> list[TaskRecord | None]:
        """Records as stored now, in the order asked (read together)."""
        return list(await asyncio.gather(*(self.ledger.get(i) for i in record_ids)))

    async def find_server(self, alias: str) -> ServerDefinition | None:
        """The configured server called ``alias`` (``None``: there is none)."""
        return await self.catalog.find_server(alias)

    async def server_by_id(
        self, server_id: str, *, removed_too: bool = False
    ) -> ServerDefinition | None:
        """A server by its id; a removed one only with ``removed_too`` (its tasks' history
        still names it)."""
        server = await self.catalog.get_server(server_id)
        if server is None or (not removed_too and await self.catalog.is_removed(server_id)):
            return None
        return server

    async def list_servers(self) -> list[ServerDefinition]:
        """The configured servers (without their connections' state; see :meth:`servers`)."""
        return await self.catalog.list_servers()

    async def secrets_durable(self) -> tuple[bool, str]:
        """Whether secrets stored now outlive this process (the keyring's verdict), and why
        not."""
        status = getattr(self.secrets, "status", None)
        return bool(getattr(status, "usable", self.secrets.durable)), str(
            getattr(status, "detail", "")
        )

    async def open_issues(self) -> list[IssueView]:
        """What needs the user, with what they can do about it."""
        return [IssueView(i, actions_for(i)) for i in await self.issue_board.open_issues()]

    # -- actions -------------------------------------------------------------------------------

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
        """Run one tool call: approval first, then the request; returns its record once the
        server answered (or did not). A task goes on in the monitor."""
        return await self.runner.call(
            server,
            tool,
            arguments,
            profile_id=profile_id,
            conversation_id=conversation_id,
            on_persisted=on_persisted,
        )

    async def stop_call(self, record_id: str) -> bool:
        """Stop a plain call that is waiting for its server: the server is told
        (``notifications/cancelled``) and the round says "stopped by you". Tasks are cancelled
        with :meth:`cancel`. Whether such a call was running."""
        return self.runner.stop(record_id)

    async def watch(self, record_ids: Sequence[str], *, soon: bool = False) -> list[TaskRecord]:
        """Have the monitor follow these records to their ends (polled at once with
        ``soon``, else spread over their first interval) and return each as stored now.

        Subscribe to :attr:`events` *before* asking: every change after this read is told
        there, every change before it is in what this returns. A record that is gone is left
        out; one that ended is returned as it ended (nothing to follow).
        """
        self.start_monitoring()
        records = [r for r in await self.records(record_ids) if r is not None]
        for record in records:
            if not record.is_terminal and record.is_monitored:
                self.monitor.track(record, now=soon)
        return records

    async def cancel_delivered(self, record_id: str) -> bool:
        """Whether the server has a cancel request of this task (it acknowledged one)."""
        return self.monitor.cancel_delivered(record_id)

    async def sample_answer(self, record_id: str, key: str) -> AnswerDidSettle:
        """Answer a task's sampling question through the user's model, as a plain call's
        sampling is: shown whole, sent only if approved, the reply reviewed (the asking
        face's prompts); declined, the task hears "decline"."""
        record = await self.ledger.get(record_id)
        if record is None:
            raise NotFound("task", record_id)
        item = next((i for i in await self.ledger.inputs(record_id) if i.key == key), None)
        server = await self.catalog.get_server(record.server_id)
        if item is None or server is None:
            raise KnownError(f"The task did not ask for {key!r}.", code="unknown_input")
        sampled = await self.inputs.sample(server, item.params, task_tool=record.tool)
        return await self.answer(record_id, key, sampled if sampled is not None else decline())

    async def read_resources(self, record_id: str, which: str) -> list[ResourceView]:
        """Read what a task's result links to (``which``: one URI, or ``*`` for all), through
        the task's own server and account; only linked URIs are read."""
        record = await self.ledger.get(record_id)
        if record is None:
            raise NotFound("task", record_id)
        tool_round = await self.ledger.tool_round(record.tool_round_id or "")
        links = resource_links(tool_round.result if tool_round else None)
        if which != ALL_RESOURCES:
            chosen = [link for link in links if link.uri == which]
            if not chosen:
                raise KnownError(
                    f"The result of task {short_id(record.id)} links to no resource {which!r}.",
                    hint="It links to: " + (", ".join(link.uri for link in links) or "nothing"),
                    code="usage",
                )
            links = chosen
        if not links:
            raise KnownError(f"The result of task {short_id(record.id)} links to no resource.")
        server = await self.server_by_id(record.server_id)
        if server is None:
            raise KnownError(
                f"The server of task {short_id(record.id)} was removed; nothing can be read."
            )
        connection = await self.gateway.connect(server, record.credential_profile_id)
        return [resource_view(link, await connection.read_resource(link.uri)) for link in links]

    async def answer(self, record_id: str, key: str, reply: Mapping[str, Any]) -> AnswerDidSettle:
        """Check the reply against the question, save it, then send it.

        An answer the question does not allow (a value outside its choices, a missing
        required field) is refused here: nothing is saved or sent.
        """
        item = next((i for i in await self.ledger.inputs(record_id) if i.key == key), None)
        if item is None:
            raise KnownError(f"The task did not ask for {key!r}.", code="unknown_input")
        try:
            checked = check_reply(item.method, item.params, reply)
        except SchemaError as exc:
            raise KnownError(
                f"The server's question cannot be answered as a form: {exc}.",
                hint="Decline or cancel it instead.",
                code="bad_question",
            ) from exc
        except ValueError as exc:
            raise KnownError(
                f"That answer does not fit the question: {exc}.",
                hint="Nothing was saved or sent.",
                code="invalid_answer",
            ) from exc
        return await self.monitor.answer(record_id, key, checked)

    @staticmethod
    def is_form(item: TaskInput) -> bool:
        """Whether an input request is a form the user fills in (an elicitation)."""
        return is_form(item)

    async def cancel(self, record_id: str) -> Cancelled:
        """Ask the server to cancel a task; the server's answer decides the outcome."""
        record = await self.ledger.get(record_id)
        if record is None:
            raise NotFound("task", record_id)
        if record.is_terminal:
            return Cancelled(CancelResult.ALREADY_OVER, record)
        record = await self.monitor.cancel(record_id)
        delivered = self.monitor.cancel_delivered(record_id)
        if record.is_terminal and not delivered:
            return Cancelled(CancelResult.ALREADY_OVER, record)
        return Cancelled(CancelResult.REQUESTED, record, delivered=delivered)

    async def abandon(self, record_id: str) -> TaskRecord:
        """Give up on a call whose outcome is unknown (nothing is sent)."""
        record = await self.ledger.get(record_id)
        if record is None:
            raise NotFound("task", record_id)
        return await self.unknown.abandon(record)

    async def retry_is_safe(self, record: TaskRecord) -> bool:
        """Whether retrying cannot run the tool twice (idempotent, on a trusted server)."""
        return await self.unknown.retry_is_safe(record)

    async def retry(
        self,
        record_id: str,
        *,
        may_run_twice: bool = False,
        confirm: Callable[[str], Awaitable[bool]] | None = None,
    ) -> TaskRecord | None:
        """Send a call with an unknown outcome again, as a new operation.

        Unless the retry is known safe or ``may_run_twice``, ``confirm`` is asked with the
        warning (without one, the retry is refused). Returns the new record, or ``None`` when
        the user said no. The original is abandoned only if the retry went out.
        """
        record = await self.ledger.get(record_id)
        if record is None:
            raise NotFound("task", record_id)
        if record.state is not LocalState.UNKNOWN_OUTCOME:
            raise KnownError(
                "Only a call with an unknown outcome can be retried; "
                f"this one is {state_words(record).label}.",
                code="not_unknown",
            )
        if not may_run_twice and not await self.unknown.retry_is_safe(record):
            warning = (
                f"{record.tool} is not known to be idempotent on a trusted server: the first "
                "call may have run, and a retry may run it twice."
            )
            if confirm is None:
                raise KnownError(warning, hint="Retry anyway only if that is safe.", code="unsafe")
            if not await confirm(warning):
                return None
        server = await self.catalog.get_server(record.server_id)
        tool_round = await self.ledger.tool_round(record.tool_round_id or "")
        if server is None or tool_round is None:
            raise KnownError("The server or the original arguments of this call are gone.")
        new = await self.runner.call(
            server,
            record.tool,
            tool_round.arguments,
            conversation_id=record.conversation_id,
            profile_id=record.credential_profile_id,
        )
        if new.state is not LocalState.DENIED and not (
            new.state is LocalState.FAILED and new.sent_at is None
        ):
            # Only a retry that went out replaces the original; a refused one leaves it to decide.
            await self.unknown.abandon(record, reason=f"Retried as {short_id(new.id)}.")
        return new

    async def dismiss_issue(self, prefix: str) -> Issue:
        """Mark an open issue resolved (by id or unique prefix)."""
        issues = await self.issue_board.open_issues()
        matches = [i for i in issues if i.id.startswith(prefix)]
        if len(matches) != 1:
            raise KnownError(
                f"No open issue {prefix!r}."
                if not matches
                else f"{prefix!r} matches several open issues.",
                code="not_found",
            )
        await self.issues.dismiss(matches[0])
        return matches[0]

    # -- the first run ---------------------------------------------------------------------------

    async def bundled_server(self) -> ServerDefinition | None:
        """The bundled demo server, while it is configured."""
        return next((s for s in await self.catalog.list_servers() if s.builtin), None)

    async def run_sample_import(
        self, *, on_persisted: Callable[[TaskRecord], None] | None = None
    ) -> TaskRecord:
        """Import the bundled sample suppliers on the bundled demo server: a real task, asked
        for approval like any other call (the welcome's "Try the sample import")."""
        server = await self.bundled_server()
        if server is None:
            raise KnownError(
                "The bundled demo server is not configured.",
                hint="It was removed; the sample import needs it.",
                code="not_found",
            )
        return await self.call(
            server, SAMPLE_TOOL, {"path": SAMPLE_FILE}, on_persisted=on_persisted
        )


if TYPE_CHECKING:

    def _conforms(host: Host) -> HostApi:
        """mypy checks here that the host is what the faces are promised (``core.host_api``)."""
        return host
