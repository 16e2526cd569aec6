"""The Conversations view's use cases: what is read, changed and kept, without widgets.

:class:`ConversationPresenter` talks to ``HostApi.chat`` and owns the view's state: the shown
conversation, the conversations whose turn runs, and deletions waiting for their *Undo*. It
tells its :class:`ConversationScreen` (the view) what changed; every widget stays there.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import tempfile
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from mooring.core.errors import KnownError
from mooring.core.events import TurnDidEnd, TurnDidStart
from mooring.core.results import SHOWN_RESULT_CHARS
from mooring.ui.text import inert

if TYPE_CHECKING:
    from mooring.core.chat import ProviderConfig, TurnResult
    from mooring.core.conversation import (
        Conversation,
        ConversationRound,
        Message,
        VersionPoint,
    )
    from mooring.core.events import EventBus
    from mooring.core.files import FileAttachment
    from mooring.core.host_api import ChatApi
from mooring.core.library import Attachment

__all__ = [
    "PAGE_SIZE",
    "UNDO_S",
    "Choices",
    "ConversationPresenter",
    "ConversationScreen",
    "Listed",
    "Opened",
    "Page",
    "file_name",
    "write_atomically",
]

PAGE_SIZE = 200
"""Messages read at a time: the newest page when a conversation opens, then older ones."""
UNDO_S = 10.0
"""How long a deleted conversation can be brought back, in seconds (then it is deleted for
real)."""


def file_name(title: str) -> str:
    """A file name suggested for a conversation titled ``title`` (hostile text: only letters,
    digits, spaces, dots, dashes and underscores are kept)."""
    name = re.sub(r"[^\w .-]+", "", title, flags=re.ASCII).strip(" .")[:60]
    return name or "conversation"


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all: a file next to it, then renamed over
    it (a failure leaves what was there)."""
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


class ConversationScreen(Protocol):
    """What the presenter tells its view (the view implements it)."""

    def say(self, text: str) -> None:
        """A short message for the status line."""

    def show_undo(self, conversation: Conversation | None) -> None:
        """Offer *Undo* for ``conversation``'s deletion (``None``: nothing to undo)."""

    def deleted_for_good(self, conversation_id: str) -> None:
        """A deleted conversation's undo time ran out (or the view closed): it is gone."""

    def schedule_reload(self) -> None:
        """The list changed (read it again soon)."""

    def busy_changed(self, ended: str | None = None) -> None:
        """A turn started or ended (any face's), or a message is being sent: what can be
        pressed changed; ``ended`` is the conversation whose turn just ended."""


@dataclass(frozen=True, slots=True)
class Listed:
    """A listed conversation, with the matching excerpt when a search found it."""

    conversation: Conversation
    snippet: str | None = None


@dataclass(frozen=True, slots=True)
class Page:
    """A page of a transcript, oldest first, with the tool rounds its messages refer to."""

    messages: list[Message]
    rounds: list[ConversationRound]
    has_older: bool
    versions: tuple[VersionPoint, ...] = ()
    """The places shown with more than one version (newest page only)."""


@dataclass(frozen=True, slots=True)
class Opened:
    """A conversation opened: itself and its newest page."""

    conversation: Conversation
    page: Page


@dataclass(frozen=True, slots=True)
class Choices:
    """The providers a conversation can talk to, and which one it does (``-1``: none)."""

    providers: list[ProviderConfig]
    chosen: int

    @property
    def config(self) -> ProviderConfig | None:
        """The chosen provider."""
        return self.providers[self.chosen] if self.chosen >= 0 else None


class ConversationPresenter:
    """The Conversations view's use cases over ``chat`` (``None``: this window has no chat).

    Deleting has an *Undo*: the conversation leaves the list at once and is deleted for real
    when :attr:`undo_s` runs out, when another is deleted, or when the view closes
    (:meth:`commit_deletes`); until then nothing is lost. A conversation whose turn runs
    (told by the host's events, any face's turn) is not deleted."""

    def __init__(
        self,
        chat: ChatApi | None,
        events: EventBus,
        screen: ConversationScreen,
        start: Callable[[Coroutine[Any, Any, None]], object],
        *,
        undo_s: float = UNDO_S,
    ) -> None:
        self.chat = chat
        self.undo_s = undo_s
        self._screen = screen
        self._start = start
        self.current_id: str | None = None
        """The conversation shown (``None``: none)."""
        self.shown: Conversation | None = None
        """The shown conversation as last read or changed (its provider and model)."""
        self._busy: set[str] = set()
        self._sending: set[str] = set()
        self._pending: dict[str, tuple[Conversation, asyncio.TimerHandle]] = {}
        self._generation = 0
        self._unsubscribers = [
            events.on(TurnDidStart, lambda e: self._set_busy(e.conversation_id, True)),
            events.on(TurnDidEnd, lambda e: self._set_busy(e.conversation_id, False)),
        ]

    def close(self) -> None:
        """Stop listening to the host's events."""
        for unsubscribe in self._unsubscribers:
            unsubscribe()
        self._unsubscribers = []

    def busy(self, conversation_id: str | None = None) -> bool:
        """Whether a turn runs (or is being sent) in a conversation (``None``: the shown one)."""
        key = conversation_id or self.current_id
        return key is not None and (key in self._busy or key in self._sending)

    def _set_busy(self, conversation_id: str, busy: bool) -> None:
        if busy:
            self._busy.add(conversation_id)
            self._screen.busy_changed()
        else:
            self._busy.discard(conversation_id)
            self._screen.busy_changed(conversation_id)

    # -- reading -------------------------------------------------------------------------------

    async def listing(self, words: str = "") -> list[Listed] | None:
        """The conversations, or a search's matches (``words``), without those waiting for
        their undo; ``None`` when a newer read began meanwhile."""
        if self.chat is None:
            return []
        self._generation += 1
        generation = self._generation
        if words:
            rows = [Listed(h.conversation, h.snippet) for h in await self.chat.search(words)]
        else:
            rows = [Listed(c) for c in await self.chat.list_conversations()]
        if generation != self._generation:
            return None
        return [r for r in rows if r.conversation.id not in self._pending]

    async def open(self, conversation_id: str) -> Opened | None:
        """Make a conversation the shown one and read its newest page; ``None`` when another
        was chosen meanwhile."""
        if self.chat is None:
            return None
        self.current_id = conversation_id
        messages, rounds, conversation, versions = await asyncio.gather(
            self.chat.messages_before(conversation_id, None, limit=PAGE_SIZE),
            self.chat.rounds(conversation_id, result_limit=SHOWN_RESULT_CHARS),
            self.chat.get(conversation_id),
            self.chat.versions(conversation_id),
        )
        if self.current_id != conversation_id:
            return None
        page = Page(messages, rounds, len(messages) >= PAGE_SIZE, tuple(versions))
        return Opened(conversation, page)

    async def versions(self, conversation_id: str) -> list[VersionPoint]:
        """The places of a conversation with more than one version."""
        return [] if self.chat is None else await self.chat.versions(conversation_id)

    async def show_version(self, conversation_id: str, after_id: str | None, number: int) -> None:
        """Show another version of a place (the shown one is kept)."""
        if self.chat is not None:
            await self.chat.show_version(conversation_id, after_id, number)

    async def older(self, conversation_id: str, before_id: str) -> Page:
        """The page before message ``before_id``, with the rounds its messages refer to."""
        if self.chat is None:
            return Page([], [], has_older=False)
        messages = await self.chat.messages_before(conversation_id, before_id, limit=PAGE_SIZE)
        rounds = (
            await self.chat.rounds(conversation_id, result_limit=SHOWN_RESULT_CHARS)
            if messages
            else []
        )
        wanted = {m.tool_round_id for m in messages if m.tool_round_id}
        return Page(
            messages, [r for r in rounds if r.round.id in wanted], len(messages) >= PAGE_SIZE
        )

    async def rounds(self, conversation_id: str) -> list[ConversationRound]:
        """A conversation's tool rounds (their cards), read again."""
        return (
            []
            if self.chat is None
            else await self.chat.rounds(conversation_id, result_limit=SHOWN_RESULT_CHARS)
        )

    # -- provider and model --------------------------------------------------------------------

    async def choices(self, conversation: Conversation) -> Choices | None:
        """The providers for ``conversation`` (the default chosen when it has none); ``None``
        when another conversation was chosen meanwhile."""
        if self.chat is None:
            return None
        self.shown = conversation
        providers = await self.chat.provider_choices()
        if self.current_id != conversation.id:
            return None
        chosen = next((i for i, p in enumerate(providers) if p.id == conversation.provider_id), -1)
        if chosen < 0 and conversation.provider_id is None and providers:
            chosen = 0
        return Choices(providers, chosen)

    async def models_of(self, conversation_id: str, provider_id: str) -> list[str] | None:
        """The models a provider lists; ``None`` when it cannot be asked or another
        conversation was chosen meanwhile (the model box stays editable)."""
        if self.chat is None:
            return None
        try:
            models = await self.chat.models_of(provider_id)
        except KnownError:
            return None  # sending says what is wrong
        return models if self.current_id == conversation_id else None

    async def choose_provider(self, provider_id: str, name: str) -> Conversation | None:
        """Have the shown conversation talk to another provider, from its default model."""
        if self.chat is None or self.current_id is None:
            return None
        saved = await self.chat.configure(self.current_id, provider=provider_id, model=None)
        self._screen.say(f"This conversation now uses {name}.")
        return saved

    async def choose_model(self, typed: str, provider_id: str | None) -> None:
        """Have the shown conversation ask the model ``typed`` (blank: the provider's
        default; ``provider_id`` is the provider shown, for a conversation on the default)."""
        shown = self.shown
        if self.chat is None or shown is None or shown.id != self.current_id:
            return
        model = " ".join(typed.split()) or None
        if model == shown.model:
            return
        if model is not None:
            saved = await self.chat.configure(shown.id, model=model)
        else:  # the provider's default (configure() keeps a model it is not given)
            provider = shown.provider_id or provider_id
            saved = await self.chat.configure(shown.id, provider=provider, model=None)
        self.shown = saved
        self._screen.say(
            f"This conversation now asks {inert(model, limit=60)}."
            if model
            else "This conversation now asks the provider's default model."
        )

    # -- conversations -------------------------------------------------------------------------

    async def create(self) -> Conversation | None:
        """Start a conversation with the default provider and make it the shown one (a
        ``KnownError`` when there is no provider)."""
        if self.chat is None:
            return None
        conversation = await self.chat.create()
        self.current_id = conversation.id
        return conversation

    async def rename(self, conversation_id: str, title: str) -> None:
        """Give a conversation a new title."""
        if self.chat is None:
            return
        renamed = await self.chat.rename(conversation_id, title)
        self._screen.say(f"Renamed to {inert(renamed.title, limit=80)}.")

    async def delete(self, conversation_id: str) -> Conversation | None:
        """Delete a conversation (not while a reply is being written in it), with *Undo*:
        it waits :attr:`undo_s` before it is deleted for real. Only one waits at a time: an
        earlier one is deleted now. Returns it (``None``: this window has no chat)."""
        if self.chat is None:
            return None
        conversation = await self.chat.get(conversation_id)
        if self.busy(conversation.id):
            raise KnownError(
                "A reply is being written in this conversation; stop it first.", code="busy"
            )
        for earlier in list(self._pending):
            await self._delete_for_real(earlier)
        timer = asyncio.get_running_loop().call_later(
            self.undo_s, lambda: self._start(self._delete_for_real(conversation.id))
        )
        self._pending[conversation.id] = (conversation, timer)
        if self.current_id == conversation.id:
            self.current_id = None
            self.shown = None
        title = inert(conversation.title, limit=80)
        self._screen.show_undo(conversation)
        self._screen.say(f"Deleted {title}. Undo brings it back.")
        return conversation

    def pending(self) -> list[str]:
        """The conversations waiting for their undo time, in the order they were deleted."""
        return list(self._pending)

    def undo(self) -> Conversation | None:
        """Bring back the conversation deleted last (while its undo time runs)."""
        if not self._pending:
            return None
        conversation, timer = self._pending.pop(next(reversed(self._pending)))
        timer.cancel()
        self._screen.show_undo(None)
        self._screen.say(f"Brought back {inert(conversation.title, limit=80)}.")
        return conversation

    async def commit_deletes(self) -> None:
        """Delete for real what is waiting for its undo time (the view is closing)."""
        for conversation_id in list(self._pending):
            await self._delete_for_real(conversation_id)

    async def _delete_for_real(self, conversation_id: str) -> None:
        pending = self._pending.pop(conversation_id, None)
        if pending is None or self.chat is None:
            return  # brought back meanwhile
        conversation, timer = pending
        timer.cancel()
        if not self._pending:
            self._screen.show_undo(None)
        try:
            await self.chat.delete(conversation.id)
        except KnownError:
            # It came alive again (a reply is running in it): keep it, and show it again.
            self._screen.schedule_reload()
            raise
        self._screen.deleted_for_good(conversation.id)

    async def export(self, conversation_id: str, path: Path, fmt: str) -> None:
        """Save a conversation's record to ``path`` (``md`` or ``json``, as the CLI's
        ``conversations export`` writes it)."""
        if self.chat is None:
            return
        text = await self.chat.export(conversation_id, fmt)
        try:
            await asyncio.to_thread(write_atomically, path, text)
        except OSError as exc:
            raise KnownError(
                f"Could not save {path.name}: {exc.strerror or exc}.",
                hint="Choose another folder or name.",
            ) from exc
        self._screen.say(f"Conversation saved to {path}.")

    # -- turns ---------------------------------------------------------------------------------

    async def send(
        self,
        conversation_id: str,
        text: str,
        *,
        attachments: Sequence[Attachment] = (),
        files: Sequence[FileAttachment] = (),
    ) -> TurnResult | None:
        """Store the user's message (with the resources and files attached to it) and run a
        model turn on it."""
        return await self._turn(conversation_id, text, attachments=attachments, files=files)

    async def continue_with_result(self, conversation_id: str) -> TurnResult | None:
        """Give the background results stored since the model last spoke to the model."""
        return await self._turn(conversation_id, None)

    async def regenerate(self, conversation_id: str, message_id: str) -> TurnResult | None:
        """Answer the user's message at or before ``message_id`` again (the old reply is
        kept as a version)."""
        return await self._turn(conversation_id, None, again=message_id)

    async def edit(self, conversation_id: str, message_id: str, text: str) -> TurnResult | None:
        """Send ``text`` in place of the user's message (the old one is kept as a version)."""
        return await self._turn(conversation_id, text, again=message_id)

    async def _turn(
        self,
        conversation_id: str,
        text: str | None,
        *,
        again: str | None = None,
        attachments: Sequence[Attachment] = (),
        files: Sequence[FileAttachment] = (),
    ) -> TurnResult | None:
        if self.chat is None:
            return None
        self._sending.add(conversation_id)
        self._screen.busy_changed()
        try:
            if again is not None:
                if text is None:
                    return await self.chat.regenerate(conversation_id, again)
                return await self.chat.edit(conversation_id, again, text)
            if text is None:
                return await self.chat.continue_with_result(conversation_id)
            return await self.chat.send(conversation_id, text, attachments=attachments, files=files)
        finally:
            self._sending.discard(conversation_id)
            self._screen.busy_changed()

    async def stop_reply(self, conversation_id: str) -> None:
        """Stop the reply being written in a conversation (its text is kept)."""
        if self.chat is not None and await self.chat.stop(conversation_id):
            self._screen.say("Stopped.")
