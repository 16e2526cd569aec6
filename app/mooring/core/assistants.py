"""Assistants: saved presets a conversation starts from (a name, instructions to the model, a
provider and model, and which servers' tools are offered).

A conversation started from an assistant gets a *copy* of its settings: editing or removing the
assistant later changes no conversation already started (it only keeps the link, to show where
a conversation came from, until the assistant is removed).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

MAX_ASSISTANT_NAME = 100
"""Characters of an assistant's name at most."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolOffering:
    """Which tools a conversation offers the model: every tool of the servers in ``servers``
    (server ids) and each tool in ``tools`` (server id, tool name). A tool outside both is
    neither offered nor callable. Hidden, disallowed and disabled tools stay out whatever this
    says."""

    servers: frozenset[str] = frozenset()
    tools: frozenset[tuple[str, str]] = frozenset()

    def allows(self, server_id: str, tool: str) -> bool:
        """Whether this tool of this server may be offered."""
        return server_id in self.servers or (server_id, tool) in self.tools

    def reaches(self, server_id: str) -> bool:
        """Whether any tool of this server may be offered (its tools need listing)."""
        return server_id in self.servers or any(s == server_id for s, _ in self.tools)

    def to_json(self) -> str:
        """The stored form (sorted, so equal offerings store equal text)."""
        return json.dumps(
            {"servers": sorted(self.servers), "tools": [list(pair) for pair in sorted(self.tools)]}
        )

    @staticmethod
    def from_json(text: str | None) -> ToolOffering | None:
        """The stored form read back (``None``: every tool)."""
        if not text:
            return None
        data: Any = json.loads(text)
        return ToolOffering(
            servers=frozenset(str(s) for s in data.get("servers", ())),
            tools=frozenset((str(s), str(n)) for s, n in data.get("tools", ())),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Assistant:
    """A saved preset for new conversations."""

    id: str
    name: str
    system_prompt: str = ""
    """The instructions to the model (``""``: none; Mooring's own guidance is always sent)."""
    provider_id: str | None = None
    """The provider (``None``: the default one when the conversation starts)."""
    model: str | None = None
    """The model (``None``: the provider's own)."""
    offering: ToolOffering | None = None
    """The tools offered (``None``: every tool, as in a plain conversation)."""
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantDraft:
    """An assistant as a face describes it: servers by alias, tools as ``alias:tool``."""

    name: str
    system_prompt: str = ""
    provider: str | None = None
    """A provider's name or id (``None``: the default one)."""
    model: str | None = None
    servers: tuple[str, ...] | None = None
    """Servers whose every tool is offered (aliases); ``None`` with ``tools`` ``None``: all."""
    tools: tuple[str, ...] | None = None
    """Single tools offered, each ``alias:tool``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantEdit:
    """What to change in an assistant (``None``: keep it)."""

    name: str | None = None
    system_prompt: str | None = None
    provider: str | None = None
    """A provider's name or id; ``""``: the default one."""
    model: str | None = None
    """A model; ``""``: the provider's own."""
    servers: tuple[str, ...] | None = None
    tools: tuple[str, ...] | None = None
    all_tools: bool = False
    """Offer every tool again (servers and tools are cleared)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantView:
    """An assistant as a face shows it: its provider by name, servers by alias, tools as
    ``alias:tool`` (a removed server's entries are left out)."""

    assistant: Assistant
    provider_name: str | None = None
    """``None``: the default provider (or the stored one was removed: see ``provider_missing``)."""
    provider_missing: bool = False
    servers: tuple[str, ...] | None = None
    tools: tuple[str, ...] | None = None

    @property
    def name(self) -> str:
        return self.assistant.name

    @property
    def offers_everything(self) -> bool:
        """Whether every tool is offered."""
        return self.assistant.offering is None
