"""The chat engine: conversations, model turns, tool rounds and background tasks — Qt-free.

A turn: the user's message is stored; the model's reply streams (``ReplyDidStream``) and is
stored whole (``MessageDidAppend``) — a stop keeps the partial text marked interrupted, a
provider failure is stored as a readable error; each tool call the model asks for is mapped
back to exactly one (server, tool) and goes through the :class:`ToolRunner` (approval, guards,
audit — nothing bypasses it); its result is stored as a tool message and given to the model,
until the model stops calling tools (bounded rounds). A call that became a background task is
answered at once with "the work started" (the model can tell the user, and the turn ends
without waiting for the task: the user can keep chatting); when the task ends, its final
result is stored in the conversation as a follow-up and, with *continue automatically* on, a new
turn starts with it. ``input_required`` is never answered by the model: it waits for the user.

Everything is written before anyone is told ("write, then tell").
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fnmatch
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, Status, StatusCode

from mooring.core.assistants import ToolOffering
from mooring.core.chat import (
    ChatRequest,
    ProviderConfig,
    ProviderError,
    ProviderFactory,
    ProviderFailure,
    ReplyDone,
    StopReason,
    TextDelta,
    ToolCallRequest,
    ToolOffer,
    TurnResult,
    failure_remedy,
)
from mooring.core.chat_export import export_json, export_markdown
from mooring.core.clock import Clock
from mooring.core.conversation import (
    DEFAULT_TITLE,
    Conversation,
    ConversationRound,
    Message,
    MessageStatus,
    Role,
    SearchHit,
    VersionPoint,
)
from mooring.core.errors import KnownError, NotFound
from mooring.core.events import (
    Event,
    EventBus,
    MessageDidAppend,
    ReplyDidStream,
    TaskDidChange,
    TurnDidEnd,
    TurnDidStart,
    VersionsDidChange,
)
from mooring.core.files import FileAttachment, accepts_images, check_total
from mooring.core.ids import is_whole_id, new_id
from mooring.core.library import Attachment, with_attachments
from mooring.core.ports import ConversationBook, ServerCatalog, TaskLedger
from mooring.core.servers import ServerDefinition
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from mooring.core.tool_names import ToolKey, assign_names
from mooring.core.tools import ToolInfo
from mooring.services.chat_context import (
    FOLLOWUP_PREFIX,
    MAX_RESULT_CHARS,
    NOT_RECORDED,
    build_context,
    failure_words,
    followup_text,
    result_for_model,
    tool_result_text,
)
from mooring.services.chat_files import guard_images
from mooring.services.keyed_locks import KeyedLocks
from mooring.services.provider_clients import ProviderClients
from mooring.services.task_monitor import TaskMonitor
from mooring.services.tool_runner import ToolRunner
from mooring.services.tracing import tracer

__all__ = [
    "FOLLOWUP_PREFIX",
    "MAX_RESULT_CHARS",
    "NOT_RECORDED",
    "ChatService",
    "TurnResult",
    "build_context",
    "failure_words",
    "followup_text",
    "result_for_model",
    "tool_result_text",
]

log = logging.getLogger("mooring.chat")

ToolSource = Callable[
    [Sequence[ServerDefinition]], Awaitable[list[tuple[ServerDefinition, ToolInfo]]]
]
"""The tools of these servers (each enabled one's, as its tool index lists them; hidden and
disallowed ones are filtered by the chat)."""

ProviderResolver = Callable[[str | None], Awaitable[ProviderConfig]]
"""A provider's configuration by id or name (``None``: the default one). Raises a
:class:`KnownError` when none is configured or the name is unknown."""

ProviderList = Callable[[], Awaitable[list[ProviderConfig]]]
"""Every configured provider (for choosing one per conversation)."""

CHAT_TURN = "mooring.chat.turn"
"""Span of one turn: its own trace (the tool rounds it ran keep theirs, see tracing.md)."""
MODEL_CALL = "mooring.chat.model_call"
"""Span of one streamed model call, with the time to its first token."""

MAX_TOOL_ROUNDS = 8
"""Model calls with tool use per turn at most (a model that keeps calling tools is stopped)."""
RATE_LIMIT_WAIT_LIMIT = 60.0
"""A rate limit is waited out once when the provider asks for at most this many seconds."""

SYSTEM_PROMPT = (
    "You are the assistant in Mooring, a desktop app that runs tools on the user's MCP "
    "servers. Every tool call is shown to the user and may need their approval. Some tools "
    "start background tasks: when a tool result says a task started, tell the user it is "
    "running and do not call the tool again; its final result arrives later in this "
    "conversation. Never answer a task's questions yourself: the user answers them. When a "
    "call is refused, explain that to the user instead of retrying it."
)
MAX_SYSTEM_PROMPT = 20_000
"""Characters of a conversation's own system prompt at most (it goes with every request)."""
NOT_RUN_STOPPED = "Not run: the user stopped this turn before the call was made."


@dataclass(slots=True)
class _ActiveTurn:
    stopped: bool = False
    stream: asyncio.Task[None] | None = None
    redo: bool = False
    """A regenerated or edited turn: approvals remembered for the conversation do not count."""


@dataclass(slots=True)
class _Streamed:
    text: str = ""
    done: ReplyDone | None = None
    failure: ProviderError | None = None
    stopped: bool = False


@dataclass(slots=True)
class _Offers:
    offers: tuple[ToolOffer, ...] = ()
    names: dict[str, ToolKey] = field(default_factory=dict)
    servers: dict[str, ServerDefinition] = field(default_factory=dict)


def offered(server: ServerDefinition, tool: str) -> bool:
    """Whether the model may see this tool: not hidden, and allowed where a list is set."""
    if server.hides(tool):
        return False
    return server.allowed_tools is None or any(
        fnmatch.fnmatchcase(tool, p) for p in server.allowed_tools
    )


def system_prompt(
    guidance: str, conversation: Conversation, default: Callable[[], str] | None
) -> str:
    """The system prompt a turn of ``conversation`` sends: Mooring's ``guidance``, then the
    user's instructions (the conversation's own, else ``default()``, Settings' default)."""
    own = conversation.system_prompt
    if own is None and default is not None:
        own = default()
    own = (own or "").strip()
    if not own:
        return guidance
    return f"{guidance}\n\nThe user's instructions for this conversation:\n\n{own}"


def _reply_message(
    now: datetime, conversation_id: str, message_id: str, model: str, streamed: _Streamed
) -> Message:
    """The reply as stored: whole, interrupted, or failed with what arrived."""
    base = {
        "id": message_id,
        "conversation_id": conversation_id,
        "role": Role.ASSISTANT,
        "created_at": now,
        "model": model,
    }
    if streamed.stopped:
        return Message(
            content=streamed.text,
            status=MessageStatus.INTERRUPTED,
            **base,  # type: ignore[arg-type]
        )
    if streamed.failure is not None:
        return Message(
            content=streamed.text,
            status=MessageStatus.ERROR,
            error_kind=streamed.failure.kind.value,
            error=failure_words(streamed.failure),
            **base,  # type: ignore[arg-type]
        )
    if streamed.done is None:
        return Message(
            content=streamed.text,
            status=MessageStatus.ERROR,
            error_kind=ProviderFailure.STREAM_BROKEN.value,
            error="The reply ended without finishing; what arrived is kept.",
            **base,  # type: ignore[arg-type]
        )
    done = streamed.done
    return Message(
        content=streamed.text,
        tool_calls=done.tool_calls if done.stop_reason is not StopReason.MAX_TOKENS else (),
        **base,  # type: ignore[arg-type]
    )


def _tool_message(
    now: datetime,
    conversation_id: str,
    call: ToolCallRequest,
    text: str,
    *,
    is_error: bool = True,
    tool_round_id: str | None = None,
    awaits_task: bool = False,
) -> Message:
    """A tool result for the model (an error unless ``is_error`` says otherwise)."""
    return Message(
        id=new_id(),
        conversation_id=conversation_id,
        role=Role.TOOL,
        content=text,
        created_at=now,
        tool_call_id=call.id,
        tool_round_id=tool_round_id,
        is_error=is_error,
        awaits_task=awaits_task,
    )


def _asked_at(stored: Sequence[Message], message_id: str) -> Message | None:
    """The user's own message at or before ``message_id`` (not a task result)."""
    at = next((n for n, m in enumerate(stored) if m.id == message_id), None)
    if at is None:
        return None
    return next(
        (m for m in reversed(stored[: at + 1]) if m.role is Role.USER and not m.followup), None
    )


def _title_from(text: str) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), DEFAULT_TITLE)
    return line if len(line) <= 60 else line[:59].rstrip() + "…"


class ChatService:
    """Conversations with a model, on the host's tool runner and task monitor."""

    def __init__(
        self,
        *,
        conversations: ConversationBook,
        providers: ProviderResolver,
        provider_factory: ProviderFactory,
        runner: ToolRunner,
        monitor: TaskMonitor,
        ledger: TaskLedger,
        catalog: ServerCatalog,
        events: EventBus,
        clock: Clock,
        tools: ToolSource,
        max_rounds: int = MAX_TOOL_ROUNDS,
        system_prompt: str = SYSTEM_PROMPT,
        instructions: Callable[[], str] | None = None,
        auto_continue_default: bool = False,
        provider_list: ProviderList | None = None,
        stored_providers: bool = False,
    ) -> None:
        self._book = conversations
        self._providers = providers
        self._factory = provider_factory
        self._runner = runner
        self._monitor = monitor
        self._ledger = ledger
        self._catalog = catalog
        self._events = events
        self._clock = clock
        self._tools = tools
        self._max_rounds = max_rounds
        self._system = system_prompt
        self._instructions = instructions
        """The user's default instructions (Settings' ``chat.system_prompt``), read at each
        turn so an edit applies to the next one."""
        self._auto_continue_default = auto_continue_default
        self._provider_list = provider_list
        self._stored_providers = stored_providers
        """``providers`` looks up the provider book the conversations are stored with: a
        turn's start reads the provider with the conversation (see :meth:`send`)."""
        self._locks = KeyedLocks()
        self._active: dict[str, _ActiveTurn] = {}
        self._background: set[asyncio.Task[None]] = set()
        self._background_turns: list[TurnResult] = []
        self._unsubscribe: Callable[[], None] | None = None
        self._clients = ProviderClients(provider_factory)

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        """Listen for this host's task changes (to store background results as they end)."""
        if self._unsubscribe is None:
            self._unsubscribe = self._events.subscribe(self._on_event)

    async def aclose(self) -> None:
        """Stop listening; follow-up work in flight is cancelled (what it stored stays); the
        provider clients kept between turns are closed."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        for task in list(self._background):
            task.cancel()
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
        await self._clients.aclose()

    @property
    def working(self) -> bool:
        """Whether a turn or a follow-up is running in any conversation."""
        return bool(self._active) or bool(self._background)

    async def idle(self) -> list[TurnResult]:
        """Wait until follow-ups (and the turns they started) are done; returns those turns."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)
        done, self._background_turns = self._background_turns, []
        return done

    # -- conversations -------------------------------------------------------------------------

    async def create(
        self,
        *,
        title: str | None = None,
        provider: str | None = None,
        model: str | None = None,
        auto_continue: bool | None = None,
    ) -> Conversation:
        """Start a conversation with a provider (by id or name; ``None``: the default);
        *continue automatically* follows the setting unless given."""
        config = await self._providers(provider)
        now = self._clock.now()
        conversation = Conversation(
            id=new_id(),
            title=(title or "").strip() or DEFAULT_TITLE,
            created_at=now,
            updated_at=now,
            provider_id=config.id,
            model=model,
            auto_continue=self._auto_continue_default if auto_continue is None else auto_continue,
        )
        await self._book.create_conversation(conversation)
        return conversation

    async def provider_choices(self) -> list[ProviderConfig]:
        """The providers a conversation can use, the default one first (empty: none)."""
        try:
            default: ProviderConfig | None = await self._providers(None)
        except KnownError:
            default = None
        listed = await self._provider_list() if self._provider_list is not None else []
        if default is None:
            return listed
        return [default, *(p for p in listed if p.id != default.id)]

    async def models_of(self, provider_id: str) -> list[str]:
        """The models a provider's endpoint lists (empty when it has no list). Raises a
        :class:`KnownError` when it cannot be asked."""
        config = await self._providers(provider_id)
        # Building a provider reads the keyring, which may block (D-Bus): off the loop.
        provider = await asyncio.to_thread(self._factory, config)
        try:
            return list(await provider.list_models())
        except ProviderError as exc:
            raise KnownError(
                exc.message,
                code=exc.kind.value,
                remedy=failure_remedy(exc.kind),
                subject=(config.name,),
            ) from None
        finally:
            with contextlib.suppress(Exception):
                await provider.aclose()

    async def get(self, key: str) -> Conversation:
        """A conversation by id or unique id prefix (else :class:`NotFound`)."""
        found = await self._book.find_conversation(key.strip())
        if found is None:
            raise NotFound("conversation", key)
        return found

    async def _with_provider(self, key: str) -> tuple[Conversation, ProviderConfig]:
        """The conversation (by id or unique prefix) and its provider's configuration, both
        read now (see :meth:`send`: the path of a prefix or of a lookup given to the host)."""
        conversation = await self.get(key)
        return conversation, await self._providers(conversation.provider_id)

    async def list_conversations(self, *, limit: int | None = None) -> list[Conversation]:
        """Conversations, most recently active first."""
        return await self._book.list_conversations(limit=limit)

    async def messages(self, conversation_id: str) -> list[Message]:
        """A conversation's stored messages in order."""
        return await self._book.messages(conversation_id)

    async def messages_before(
        self, conversation_id: str, before_id: str | None = None, *, limit: int = 200
    ) -> list[Message]:
        """A page of a conversation: at most ``limit`` messages before ``before_id`` (``None``:
        the newest), oldest first."""
        return await self._book.messages_before(conversation_id, before_id, limit)

    async def rounds(
        self, conversation_id: str, *, result_limit: int | None = None
    ) -> list[ConversationRound]:
        """A conversation's tool rounds with their operation records; ``result_limit``: each
        result clipped to that many characters of text."""
        rounds = await self._book.conversation_rounds(conversation_id)
        if result_limit is None:
            return rounds
        return [item.result_clipped(result_limit) for item in rounds]

    async def search(self, words: str, *, limit: int = 50) -> list[SearchHit]:
        """Conversations with a title or a message that contains every word."""
        return await self._book.search(words, limit=limit)

    async def rename(self, key: str, title: str) -> Conversation:
        """Give a conversation a new title."""
        title = " ".join(title.split())
        if not title:
            raise KnownError("A title cannot be empty.", code="usage")
        conversation = await self.get(key)
        return await self._save(_replace(conversation, title=title))

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
        own instructions (``""``: none at all); ``default_system_prompt`` makes it follow the
        default of Settings again."""
        if system_prompt is not None and default_system_prompt:
            raise KnownError(
                "Give the conversation its own system prompt or the default one, not both.",
                code="usage",
            )
        if system_prompt is not None and len(system_prompt) > MAX_SYSTEM_PROMPT:
            raise KnownError(
                f"A system prompt holds at most {MAX_SYSTEM_PROMPT:,} characters "
                f"(this one has {len(system_prompt):,}).",
                code="usage",
            )
        conversation = await self.get(key)
        changes: dict[str, Any] = {}
        if system_prompt is not None:
            changes["system_prompt"] = system_prompt
        elif default_system_prompt:
            changes["system_prompt"] = None
        if auto_continue is not None:
            changes["auto_continue"] = auto_continue
        if muted is not None:
            changes["muted"] = muted
        if provider is not None:
            config = await self._providers(provider)
            changes["provider_id"] = config.id
            changes["model"] = model
        if model is not None:
            changes["model"] = model
        return await self._save(_replace(conversation, **changes))

    async def delete(self, key: str) -> Conversation:
        """Delete a conversation and its messages (what ran stays in the task ledger); not
        while a reply is being written in it."""
        conversation = await self.get(key)
        if self.is_busy(conversation.id):
            raise KnownError(
                "A reply is being written in this conversation; stop it first.", code="busy"
            )
        await self._book.delete_conversation(conversation.id)
        return conversation

    async def export(self, key: str, fmt: str) -> str:
        """The conversation's record (``json`` or ``md``): messages, tool rounds with their
        approval decisions, task ids and final states."""
        conversation = await self.get(key)
        messages = await self._book.messages(conversation.id)
        rounds = await self._book.conversation_rounds(conversation.id)
        at = self._clock.now()
        if fmt == "json":
            data = export_json(conversation, messages, rounds, exported_at=at)
            return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        if fmt == "md":
            return export_markdown(conversation, messages, rounds, exported_at=at)
        raise KnownError(f"Unknown export format {fmt!r}: use md or json.", code="usage")

    async def _save(self, conversation: Conversation) -> Conversation:
        if not await self._book.update_conversation(conversation):
            raise NotFound("conversation", conversation.id)
        return conversation

    # -- turns ---------------------------------------------------------------------------------

    def is_busy(self, conversation_id: str) -> bool:
        """Whether a turn is running in this conversation."""
        return conversation_id in self._active

    async def send(
        self,
        conversation_id: str,
        text: str,
        *,
        attachments: Sequence[Attachment] = (),
        files: Sequence[FileAttachment] = (),
    ) -> TurnResult:
        """Store the user's message and run a model turn on it.

        The provider is resolved first: without one, nothing is stored and a
        :class:`KnownError` says what to configure. Background results that arrived before
        the message are stored before it; the message (with the conversation's first title)
        is stored in one transaction before the model sees it.

        A conversation named by its whole id is read with its stored provider and the
        servers, and the message written, in one trip to the database (the common case: it is
        on the way to every model request); a prefix, or a provider lookup of the host's own,
        is resolved first.

        ``attachments`` (resources the user attached) are stored as part of the message, after
        its text, each marked as a resource (:func:`~mooring.core.library.with_attachments`).
        ``files`` are stored with the message (``message_attachments``); they are refused,
        with nothing stored, when too big or when an image goes to a model that takes none.
        """
        text = with_attachments(text.strip(), attachments)
        if not text and not files:
            raise KnownError("The message is empty.", code="usage")
        check_total(files)
        key = conversation_id.strip()
        if self._stored_providers and is_whole_id(key) and not files:
            async with self._locks.hold(key):
                opened = await self._open_turn(key, text, None)
                if opened is not None:
                    conversation, config, stored, servers = opened
                    return await self._turn(conversation, config, stored=stored, servers=servers)
        # A prefix, no such conversation, no stored provider, or a lookup of the host's own:
        # the provider's absence is said by the lookup, before anything is stored. With files,
        # the provider is known before anything is stored (images only to a model that reads
        # them).
        conversation, config = await self._with_provider(key)
        guard_images(files, config, conversation.model or config.model)
        async with self._locks.hold(conversation.id):
            opened = await self._open_turn(conversation.id, text, config, files)
            if opened is None:
                raise NotFound("conversation", key)  # deleted meanwhile
            conversation, config, stored, servers = opened
            return await self._turn(conversation, config, stored=stored, servers=servers)

    async def _open_turn(
        self,
        conversation_id: str,
        text: str,
        config: ProviderConfig | None,
        files: Sequence[FileAttachment] = (),
    ) -> (
        tuple[Conversation, ProviderConfig, list[Message], Sequence[ServerDefinition] | None] | None
    ):
        """Store the user's message (under the conversation's lock), first storing the
        background results that arrived before it; with ``config`` ``None``, with the
        conversation's stored provider. ``None``, with nothing stored, when the conversation
        has no such id or (``config`` ``None``) no provider is stored for it."""
        message = Message(
            id=new_id(),
            conversation_id=conversation_id,
            role=Role.USER,
            content=text,
            created_at=self._clock.now(),
            files=tuple(dataclasses.replace(f, id=new_id()) for f in files),
        )
        title = _title_from(text or ", ".join(f.name for f in files))
        opening = await self._book.open_turn(message, title=title, with_provider=config is None)
        if opening is None:
            return None
        config = config or opening.provider
        if config is None:
            return None
        if opening.stored is None:  # a task ended meanwhile: its result goes first
            await self._catch_up(conversation_id)
            message = dataclasses.replace(message, created_at=self._clock.now())
            opening = await self._book.open_turn(
                message, title=title, with_provider=False, check_waiting=False
            )
            if opening is None:
                return None
            assert opening.stored is not None
        self._events.emit(MessageDidAppend(conversation_id, message))
        return opening.conversation, config, opening.stored, opening.servers

    async def continue_with_result(self, conversation_id: str) -> TurnResult:
        """Start a model turn on the background results stored since the model last spoke."""
        conversation = await self.get(conversation_id)
        config = await self._providers(conversation.provider_id)
        async with self._locks.hold(conversation.id):
            await self._catch_up(conversation.id)
            stored = await self._book.messages(conversation.id)
            last_reply = max(
                (i for i, m in enumerate(stored) if m.role is Role.ASSISTANT), default=-1
            )
            if not any(m.followup for m in stored[last_reply + 1 :]):
                raise KnownError(
                    "There is no new task result to continue with.", code="nothing_to_continue"
                )
            return await self._turn(conversation, config)

    async def regenerate(self, conversation_id: str, message_id: str) -> TurnResult:
        """Answer the user's message at or before ``message_id`` again: what followed it is
        kept as a version of that place (never deleted), and a new turn runs. A tool the new
        reply calls asks again, whatever was remembered for this conversation."""
        conversation, config = await self._with_provider(conversation_id)
        async with self._locks.hold(conversation.id):
            stored = await self._book.messages(conversation.id)
            asked = _asked_at(stored, message_id)
            if asked is None:
                raise KnownError(
                    "There is no message of yours at or before that one to answer again.",
                    code="usage",
                )
            guard_images(asked.files, config, conversation.model or config.model)
            await self._book.fork(conversation.id, asked.id)
            self._events.emit(VersionsDidChange(conversation.id, asked.id, forked=True))
            return await self._turn(conversation, config, redo=True)

    async def edit(self, conversation_id: str, message_id: str, text: str) -> TurnResult:
        """Send ``text`` in place of the user's message ``message_id``: it and what followed
        are kept as a version of that place, and a new turn runs on the new text."""
        text = text.strip()
        conversation, config = await self._with_provider(conversation_id)
        async with self._locks.hold(conversation.id):
            stored = await self._book.messages(conversation.id)
            at = next((n for n, m in enumerate(stored) if m.id == message_id), None)
            if at is None or stored[at].role is not Role.USER:
                raise KnownError(
                    "Only a message of yours that is shown can be edited.", code="usage"
                )
            files = stored[at].files  # the edited message keeps its files
            if not text and not files:
                raise KnownError("The message is empty.", code="usage")
            guard_images(files, config, conversation.model or config.model)
            after = stored[at - 1].id if at else None
            await self._book.fork(conversation.id, after)
            self._events.emit(VersionsDidChange(conversation.id, after, forked=True))
            opened = await self._open_turn(conversation.id, text, config, files)
            if opened is None:
                raise NotFound("conversation", conversation_id)  # deleted meanwhile
            conversation, config, stored, servers = opened
            return await self._turn(conversation, config, stored=stored, servers=servers, redo=True)

    async def versions(self, conversation_id: str) -> list[VersionPoint]:
        """The places of the conversation with more than one version (◀ 1/2 ▶), in order."""
        conversation = await self.get(conversation_id)
        return await self._book.version_points(conversation.id)

    async def show_version(self, conversation_id: str, after_id: str | None, number: int) -> bool:
        """Show version ``number`` (1-based) of the place after ``after_id``; the version
        shown until now is kept. Not while a reply is being written."""
        conversation = await self.get(conversation_id)
        if self.is_busy(conversation.id):
            raise KnownError(
                "A reply is being written in this conversation; stop it first.", code="busy"
            )
        async with self._locks.hold(conversation.id):
            try:
                changed = await self._book.show_version(conversation.id, after_id, number)
            except (LookupError, IndexError) as exc:
                raise KnownError("There is no such version here.", code="usage") from exc
        if changed:
            self._events.emit(VersionsDidChange(conversation.id, after_id))
        return changed

    async def catch_up(self, conversation_id: str) -> list[Message]:
        """Store the results of this conversation's tasks that ended while no one listened
        (another window or command saw them end); returns the follow-ups stored."""
        async with self._locks.hold(conversation_id):
            return await self._catch_up(conversation_id)

    async def stop(self, conversation_id: str) -> bool:
        """Stop the running turn: a streaming reply keeps its text, marked interrupted; calls
        not yet made are not made. Whether a turn was running."""
        turn = self._active.get(conversation_id)
        if turn is None:
            return False
        turn.stopped = True
        if turn.stream is not None:
            turn.stream.cancel()
        return True

    async def _append(self, message: Message) -> None:
        await self._book.append_messages([message])
        self._events.emit(MessageDidAppend(message.conversation_id, message))

    async def _offers(
        self,
        servers: Sequence[ServerDefinition] | None = None,
        offering: ToolOffering | None = None,
    ) -> _Offers:
        """The tools to offer the model: every enabled server's (``servers``: as read with
        the turn's first write; ``None``: read now), minus hidden and disallowed ones, and
        only those the conversation's ``offering`` allows (an assistant's choice; ``None``:
        every tool). A tool left out is unknown to the model: never run."""
        if servers is None:
            servers = await self._catalog.list_servers()
        enabled = [
            server
            for server in servers
            if server.enabled and (offering is None or offering.reaches(server.id))
        ]
        # Whatever the source, a hidden or disallowed tool (or a disabled server's) is never
        # offered.
        pairs = [
            (s, i)
            for s, i in await self._tools(enabled)
            if s.enabled
            and offered(s, i.name)
            and (offering is None or offering.allows(s.id, i.name))
        ]
        by_id = {server.id: server for server, _ in pairs}
        infos = {ToolKey(server.id, info.name): info for server, info in pairs}
        names = assign_names(
            (server.alias, ToolKey(server.id, info.name)) for server, info in pairs
        )
        offers = []
        for name in sorted(names):
            key = names[name]
            info = infos[key]
            alias = by_id[key.server_id].alias
            about = info.description or info.title or info.name
            schema: dict[str, Any] = dict(info.input_schema) if info.input_schema else {}
            if schema.get("type") != "object":
                schema = {"type": "object", "properties": {}}
            offers.append(
                ToolOffer(
                    name=name,
                    description=f"{about}\n(MCP server {alias!r}, tool {info.name!r})",
                    input_schema=schema,
                )
            )
        return _Offers(tuple(offers), names, by_id)

    async def _turn(
        self,
        conversation: Conversation,
        config: ProviderConfig,
        *,
        stored: list[Message] | None = None,
        servers: Sequence[ServerDefinition] | None = None,
        redo: bool = False,
    ) -> TurnResult:
        turn = _ActiveTurn(redo=redo)
        self._active[conversation.id] = turn
        self._events.emit(TurnDidStart(conversation.id))
        rounds: list[str] = []
        started: list[str] = []
        reply = ""
        reply_id: str | None = None
        error: str | None = None
        error_kind: str | None = None
        model = conversation.model or config.model
        calls_made = 0
        span = tracer().start_span(
            CHAT_TURN,
            context=Context(),  # a turn is its own trace; its tool rounds keep theirs
            attributes={
                "mooring.conversation.id": conversation.id,
                "gen_ai.request.model": model,
                "gen_ai.provider.name": config.kind.value,
            },
        )
        try:
            # The first context read overlaps listing the tools (servers answer over the wire).
            if stored is None:
                offers, stored = await asyncio.gather(
                    self._offers(servers, conversation.offering),
                    self._book.messages(conversation.id),
                )
            else:
                offers = await self._offers(servers, conversation.offering)
            for round_number in range(self._max_rounds):
                if round_number:
                    stored = await self._book.messages(conversation.id)
                assert stored is not None
                context = build_context(stored, images=accepts_images(config.kind, model))
                request = ChatRequest(
                    model=model,
                    messages=context,
                    tools=offers.offers,
                    system=system_prompt(self._system, conversation, self._instructions),
                )
                message_id = new_id()
                calls_made += 1
                with trace.use_span(span):
                    streamed = await self._stream(
                        conversation.id, message_id, config, request, turn
                    )
                message = _reply_message(
                    self._clock.now(), conversation.id, message_id, model, streamed
                )
                await self._append(message)
                reply, reply_id = message.content, message.id
                if message.error is not None or streamed.stopped:
                    error = message.error
                    error_kind = message.error_kind
                    break
                calls = streamed.done.tool_calls if streamed.done else ()
                if not calls:
                    break
                for call in calls:
                    if turn.stopped:
                        await self._append(
                            _tool_message(self._clock.now(), conversation.id, call, NOT_RUN_STOPPED)
                        )
                        continue
                    made, record = await self._run_tool(conversation.id, call, offers)
                    if made.tool_round_id:
                        rounds.append(made.tool_round_id)
                    if made.awaits_task and record is not None:
                        started.append(record.id)
                if turn.stopped:
                    break
            else:
                error = (
                    f"The model asked for tools {self._max_rounds} times in a row; Mooring "
                    "stopped this turn. Send a message to go on."
                )
                note = Message(
                    id=new_id(),
                    conversation_id=conversation.id,
                    role=Role.ASSISTANT,
                    content="",
                    created_at=self._clock.now(),
                    status=MessageStatus.ERROR,
                    error_kind="too_many_tool_rounds",
                    error=error,
                    model=model,
                )
                await self._append(note)
        finally:
            self._active.pop(conversation.id, None)
            span.set_attributes(
                {
                    "mooring.chat.model_calls": calls_made,
                    "mooring.chat.tool_rounds": len(rounds),
                    "mooring.chat.tasks_started": len(started),
                    "mooring.chat.interrupted": turn.stopped,
                }
            )
            if error is not None:
                span.set_status(Status(StatusCode.ERROR, error))
            span.end()
        self._events.emit(TurnDidEnd(conversation.id, reply_id, error, tuple(started)))
        return TurnResult(
            conversation_id=conversation.id,
            reply=reply,
            reply_message_id=reply_id,
            round_ids=tuple(rounds),
            started_tasks=tuple(started),
            error=error,
            error_kind=error_kind,
            provider=config.name,
            interrupted=turn.stopped,
        )

    async def _stream(
        self,
        conversation_id: str,
        message_id: str,
        config: ProviderConfig,
        request: ChatRequest,
        turn: _ActiveTurn,
    ) -> _Streamed:
        streamed = _Streamed()
        for attempt in (1, 2):
            streamed = await self._stream_once(conversation_id, message_id, config, request, turn)
            failure = streamed.failure
            if (
                attempt == 1
                and failure is not None
                and failure.kind is ProviderFailure.RATE_LIMITED
                and failure.retry_after is not None
                and failure.retry_after <= RATE_LIMIT_WAIT_LIMIT
                and not failure.waited
                and not streamed.text
            ):
                log.info("rate limited; waiting %.1f s once", failure.retry_after)
                await asyncio.sleep(failure.retry_after)
                continue
            break
        return streamed

    async def _stream_once(
        self,
        conversation_id: str,
        message_id: str,
        config: ProviderConfig,
        request: ChatRequest,
        turn: _ActiveTurn,
    ) -> _Streamed:
        streamed = _Streamed()
        parts: list[str] = []
        client = await self._clients.acquire(config)
        provider = client.provider
        span = tracer().start_span(
            MODEL_CALL,
            attributes={
                "gen_ai.request.model": request.model,
                "gen_ai.provider.name": config.kind.value,
                "mooring.chat.messages": len(request.messages),
                "mooring.chat.tools_offered": len(request.tools),
            },
        )
        began = time.monotonic()

        async def consume() -> None:
            async for event in provider.stream(request):
                if isinstance(event, TextDelta):
                    if event.text:
                        if not parts:
                            span.set_attribute(
                                "mooring.chat.first_token_ms",
                                round((time.monotonic() - began) * 1000, 3),
                            )
                        parts.append(event.text)
                        self._events.emit(ReplyDidStream(conversation_id, message_id, event.text))
                else:
                    streamed.done = event

        task = asyncio.ensure_future(consume())
        turn.stream = task
        if turn.stopped:
            task.cancel()  # stopped before the stream existed (say, while the client was made)
        try:
            await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not turn.stopped or (current is not None and current.cancelling()):
                raise
            streamed.stopped = True
        except ProviderError as exc:
            streamed.failure = exc
            if exc.partial_text and not parts:
                parts.append(exc.partial_text)
        except Exception as exc:  # an adapter bug must not lose the conversation
            log.exception("model call failed unexpectedly")
            streamed.failure = ProviderError(
                ProviderFailure.SERVER_ERROR,
                f"unexpected {type(exc).__name__} (details are in the log file)",
            )
        finally:
            turn.stream = None
            clean = streamed.done is not None and streamed.failure is None and not streamed.stopped
            await self._clients.release(config, client, keep=clean)
            _end_model_span(span, streamed)
        streamed.text = "".join(parts)
        if streamed.done is not None and not streamed.stopped:
            streamed.text = streamed.done.text or streamed.text
        return streamed

    async def _run_tool(
        self, conversation_id: str, call: ToolCallRequest, offers: _Offers
    ) -> tuple[Message, TaskRecord | None]:
        key = offers.names.get(call.name)
        record: TaskRecord | None = None
        if (problem := _argument_problem(call)) is not None:
            message = _tool_message(self._clock.now(), conversation_id, call, problem)
        elif key is None:
            message = _tool_message(
                self._clock.now(),
                conversation_id,
                call,
                f"There is no tool called {call.name!r}; use one of the tools offered.",
            )
        else:
            server = offers.servers[key.server_id]
            failure: str | None = None
            detached = otel_context.attach(Context())  # the round is its own trace
            try:
                turn = self._active.get(conversation_id)
                record = await self._runner.call(
                    server,
                    key.tool,
                    dict(call.arguments),
                    conversation_id=conversation_id,
                    remembered_approvals=turn is None or not turn.redo,
                )
            except KnownError as exc:  # e.g. the database refused a write: the model hears it
                log.warning("chat call %s/%s: %s", server.alias, key.tool, exc.message)
                failure = exc.message
            finally:
                otel_context.detach(detached)
            if record is None:
                message = _tool_message(
                    self._clock.now(),
                    conversation_id,
                    call,
                    f"The call could not be made: {failure}",
                )
            else:
                tool_round = (
                    await self._ledger.tool_round(record.tool_round_id)
                    if record.tool_round_id
                    else None
                )
                text, is_error, started = tool_result_text(record, tool_round, server.alias)
                message = _tool_message(
                    self._clock.now(),
                    conversation_id,
                    call,
                    text,
                    is_error=is_error,
                    tool_round_id=record.tool_round_id,
                    awaits_task=started,
                )
        await self._append(message)
        return message, record

    # -- background results --------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        if not isinstance(event, TaskDidChange):
            return
        record = event.record
        if not (record.is_terminal and record.conversation_id and record.tool_round_id):
            return
        task = asyncio.ensure_future(self._task_ended(record.conversation_id, record.id))
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        task.add_done_callback(_log_failure)

    async def _task_ended(self, conversation_id: str, record_id: str) -> None:
        async with self._locks.hold(conversation_id):
            added = await self._catch_up(conversation_id, only=record_id)
            if not added:
                return
            conversation = await self._book.get_conversation(conversation_id)
            if conversation is None or not conversation.auto_continue:
                return
            try:
                config = await self._providers(conversation.provider_id)
            except KnownError as exc:
                log.warning("cannot continue %s automatically: %s", conversation_id, exc.message)
                note = Message(
                    id=new_id(),
                    conversation_id=conversation_id,
                    role=Role.ASSISTANT,
                    content="",
                    created_at=self._clock.now(),
                    status=MessageStatus.ERROR,
                    error_kind="no_provider",
                    error=f"Could not continue automatically: {exc.message}",
                )
                await self._append(note)
                self._events.emit(TurnDidEnd(conversation_id, note.id, note.error))
                return
            self._background_turns.append(await self._turn(conversation, config))

    async def _catch_up(self, conversation_id: str, *, only: str | None = None) -> list[Message]:
        waiting = {
            m.tool_round_id: m
            for m in await self._book.awaiting_results(conversation_id)
            if m.tool_round_id
        }
        if not waiting:
            return []
        added: list[Message] = []
        for item in await self._book.conversation_rounds(conversation_id):
            record = item.record
            started = waiting.get(item.round.id)
            if started is None or record is None or not record.is_terminal:
                continue
            if only is not None and record.id != only:
                continue
            message = Message(
                id=new_id(),
                conversation_id=conversation_id,
                role=Role.TOOL,
                content=followup_text(record, item.round, item.server_alias or "?"),
                created_at=self._clock.now(),
                tool_call_id=started.tool_call_id,
                tool_round_id=item.round.id,
                is_error=record.state is not LocalState.COMPLETED
                or bool(item.round.result and item.round.result.get("isError")),
                followup=True,
            )
            if await self._book.append_followup(message):
                self._events.emit(MessageDidAppend(conversation_id, message))
                added.append(message)
        return added

    # -- the user's answers --------------------------------------------------------------------

    async def answer_input(self, record_id: str, key: str, answer: dict[str, Any]) -> bool:
        """The user answers a task's question (never the model); whether it was delivered."""
        settled = await self._monitor.answer(record_id, key, answer)
        return settled.delivered


def _argument_problem(call: ToolCallRequest) -> str | None:
    if call.arguments_error:  # the adapter could not read the call (e.g. written as text)
        return f"Not run: {call.arguments_error}. Send a JSON object."
    raw = call.raw_arguments.strip()
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError as exc:
        return f"Not run: the arguments were not valid JSON ({exc}). Send a JSON object."
    if not isinstance(value, dict):
        return "Not run: the arguments must be a JSON object."
    return None


def _end_model_span(span: Span, streamed: _Streamed) -> None:
    """Sizes, usage and outcome of one model call (never its content)."""
    done = streamed.done
    if done is not None:
        span.set_attribute("mooring.chat.stop_reason", done.stop_reason.value)
        span.set_attribute("mooring.chat.tool_calls", len(done.tool_calls))
        for key in ("input_tokens", "output_tokens"):
            if key in done.usage:
                span.set_attribute(f"gen_ai.usage.{key}", int(done.usage[key]))
    if streamed.failure is not None:
        span.set_attribute("error.type", streamed.failure.kind.value)
        span.set_status(Status(StatusCode.ERROR, streamed.failure.kind.value))
    span.set_attribute("mooring.chat.interrupted", streamed.stopped)
    span.end()


def _replace(conversation: Conversation, **changes: Any) -> Conversation:
    return dataclasses.replace(conversation, **changes)


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("storing a background result failed", exc_info=task.exception())
