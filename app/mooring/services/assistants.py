"""Assistants: saved presets for new conversations, and starting a conversation from one.

A conversation started from an assistant gets a copy of its instructions, provider, model and
tool offering (:class:`~mooring.core.assistants.Assistant`); editing or removing the assistant
later changes no conversation already started. The chat offers a conversation's model only the
tools its offering allows (``services/chat.py: ChatService._offers``); a tool outside it is
unknown to the model, never run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mooring.core.assistants import (
    MAX_ASSISTANT_NAME,
    Assistant,
    AssistantDraft,
    AssistantEdit,
    AssistantView,
    ToolOffering,
)
from mooring.core.clock import Clock
from mooring.core.conversation import DEFAULT_TITLE, Conversation
from mooring.core.errors import KnownError, NotFound
from mooring.core.ids import new_id
from mooring.core.ports import AssistantBook, ConversationBook, ServerCatalog
from mooring.core.servers import ServerDefinition
from mooring.services.chat import MAX_SYSTEM_PROMPT, ProviderResolver


def _usage(message: str) -> KnownError:
    return KnownError(message, code="usage")


def _clean_name(name: str) -> str:
    name = " ".join(name.split())
    if not name:
        raise _usage("An assistant needs a name.")
    if len(name) > MAX_ASSISTANT_NAME:
        raise _usage(f"An assistant's name holds at most {MAX_ASSISTANT_NAME} characters.")
    return name


def _check_prompt(text: str) -> str:
    if len(text) > MAX_SYSTEM_PROMPT:
        raise _usage(
            f"A system prompt holds at most {MAX_SYSTEM_PROMPT:,} characters "
            f"(this one has {len(text):,})."
        )
    return text


class AssistantDesk:
    """Listing, adding, editing and removing assistants; starting a conversation from one."""

    def __init__(
        self,
        *,
        book: AssistantBook,
        conversations: ConversationBook,
        catalog: ServerCatalog,
        providers: ProviderResolver,
        clock: Clock,
        auto_continue: Callable[[], bool] = lambda: False,
    ) -> None:
        self._book = book
        self._conversations = conversations
        self._catalog = catalog
        self._providers = providers
        self._clock = clock
        self._auto_continue = auto_continue

    async def assistants(self) -> list[AssistantView]:
        """Every assistant, by name, as a face shows it."""
        servers = await self._catalog.list_servers()
        return [await self._view(a, servers) for a in await self._book.list_assistants()]

    async def get(self, name: str) -> AssistantView:
        """An assistant by name (or id), or :class:`NotFound`."""
        return await self._view(await self._find(name), await self._catalog.list_servers())

    async def add(self, draft: AssistantDraft) -> AssistantView:
        """Store a new assistant; its provider and servers must exist now."""
        now = self._clock.now()
        servers = await self._catalog.list_servers()
        assistant = Assistant(
            id=new_id(),
            name=_clean_name(draft.name),
            system_prompt=_check_prompt(draft.system_prompt),
            provider_id=await self._provider_id(draft.provider),
            model=(draft.model or "").strip() or None,
            offering=_offering(servers, draft.servers, draft.tools),
            created_at=now,
            updated_at=now,
        )
        await self._book.add_assistant(assistant)
        return await self._view(assistant, servers)

    async def edit(self, name: str, edit: AssistantEdit) -> AssistantView:
        """Change what ``edit`` gives; conversations already started keep their settings."""
        if edit.all_tools and (edit.servers is not None or edit.tools is not None):
            raise _usage("Offer every tool or choose servers and tools, not both.")
        found = await self._find(name)
        servers = await self._catalog.list_servers()
        offering = found.offering
        if edit.all_tools:
            offering = None
        elif edit.servers is not None or edit.tools is not None:
            # What is not given is kept (the servers when only tools are, and so on).
            given = _offering(servers, edit.servers or (), edit.tools or ())
            assert given is not None
            kept = found.offering or ToolOffering()
            offering = ToolOffering(
                servers=given.servers if edit.servers is not None else kept.servers,
                tools=given.tools if edit.tools is not None else kept.tools,
            )
        provider_id, model = found.provider_id, found.model
        if edit.provider is not None:
            provider_id = await self._provider_id(edit.provider or None)
            model = None  # a model belongs to its provider
        if edit.model is not None:
            model = edit.model.strip() or None
        changed = Assistant(
            id=found.id,
            name=_clean_name(edit.name) if edit.name is not None else found.name,
            system_prompt=(
                _check_prompt(edit.system_prompt)
                if edit.system_prompt is not None
                else found.system_prompt
            ),
            provider_id=provider_id,
            model=model,
            offering=offering,
            created_at=found.created_at,
            updated_at=self._clock.now(),
        )
        if not await self._book.update_assistant(changed):
            raise NotFound("assistant", name)
        return await self._view(changed, servers)

    async def remove(self, name: str) -> Assistant:
        """Remove an assistant; its conversations keep their settings."""
        found = await self._find(name)
        if not await self._book.remove_assistant(found.id):
            raise NotFound("assistant", name)
        return found

    async def start(self, name: str, *, title: str | None = None) -> Conversation:
        """A new conversation with a copy of the assistant's settings: its system prompt (none:
        the default of Settings), its provider and model, and only its servers' and tools'
        tools offered."""
        found = await self._find(name)
        config = await self._providers(found.provider_id)  # a removed provider: a clear error
        now = self._clock.now()
        conversation = Conversation(
            id=new_id(),
            title=(title or "").strip() or DEFAULT_TITLE,
            created_at=now,
            updated_at=now,
            provider_id=config.id,
            model=found.model,
            auto_continue=self._auto_continue(),
            # No instructions of its own: the conversation follows the default of Settings.
            system_prompt=found.system_prompt if found.system_prompt.strip() else None,
            assistant_id=found.id,
            offering=found.offering,
        )
        await self._conversations.create_conversation(conversation)
        return conversation

    async def _find(self, name: str) -> Assistant:
        found = await self._book.find_assistant(" ".join(name.split()))
        if found is None:
            raise NotFound("assistant", name)
        return found

    async def _provider_id(self, provider: str | None) -> str | None:
        if provider is None or not provider.strip():
            return None
        return (await self._providers(provider.strip())).id

    async def _view(
        self, assistant: Assistant, servers: Sequence[ServerDefinition]
    ) -> AssistantView:
        provider_name: str | None = None
        missing = False
        if assistant.provider_id is not None:
            try:
                provider_name = (await self._providers(assistant.provider_id)).name
            except KnownError:
                missing = True
        offering = assistant.offering
        if offering is None:
            return AssistantView(
                assistant=assistant, provider_name=provider_name, provider_missing=missing
            )
        alias = {s.id: s.alias for s in servers}
        return AssistantView(
            assistant=assistant,
            provider_name=provider_name,
            provider_missing=missing,
            servers=tuple(sorted(alias[s] for s in offering.servers if s in alias)),
            tools=tuple(sorted(f"{alias[s]}:{n}" for s, n in offering.tools if s in alias)),
        )


def _offering(
    servers: Sequence[ServerDefinition],
    aliases: Sequence[str] | None,
    tools: Sequence[str] | None,
) -> ToolOffering | None:
    """The offering of servers by alias and tools as ``alias:tool`` (``None``: every tool)."""
    if aliases is None and tools is None:
        return None
    by_alias = {s.alias: s for s in servers}

    def server(alias: str) -> ServerDefinition:
        found = by_alias.get(alias.strip())
        if found is None:
            raise KnownError(f"No server called {alias.strip()!r}.", code="not_found")
        return found

    picked: set[tuple[str, str]] = set()
    for entry in tools or ():
        alias, sep, tool = entry.partition(":")
        if not sep or not alias.strip() or not tool.strip():
            raise _usage(f"Name a tool as server:tool, not {entry!r}.")
        picked.add((server(alias).id, tool.strip()))
    return ToolOffering(
        servers=frozenset(server(a).id for a in aliases or () if a.strip()),
        tools=frozenset(picked),
    )
