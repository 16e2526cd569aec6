"""Model-safe tool names: every offered tool gets a name a provider accepts, mapped back exactly.

Providers allow ``[a-zA-Z0-9_-]`` and at most 64 characters (OpenAI; Anthropic allows 128);
MCP tool names may hold dots, slashes and spaces, and two servers may offer the same name.
Each tool is named ``{server alias}__{tool}`` with other characters replaced by ``_``; when that
is too long or two tools would share it, a short digest of (server id, tool) tells them apart.
The result depends only on the set of (server, tool) pairs, never on their order.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

MAX_NAME = 64
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
_SAFE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclass(frozen=True, slots=True, order=True)
class ToolKey:
    """One tool of one server, as Mooring calls it."""

    server_id: str
    tool: str


def _clean(text: str) -> str:
    return _UNSAFE.sub("_", text) or "_"


def _digest(key: ToolKey) -> str:
    return hashlib.sha256(f"{key.server_id}\0{key.tool}".encode()).hexdigest()


def _hashed(base: str, key: ToolKey, extra: int = 0) -> str:
    suffix = "_" + _digest(key)[: 8 + extra]
    return base[: MAX_NAME - len(suffix)] + suffix


def is_model_safe(name: str) -> bool:
    """Whether ``name`` satisfies every provider's tool-name rule."""
    return bool(_SAFE.match(name))


def assign_names(tools: Iterable[tuple[str, ToolKey]]) -> dict[str, ToolKey]:
    """Model-safe, unique names for ``(server alias, key)`` pairs, mapping back to each key."""
    wanted: dict[ToolKey, str] = {}
    for alias, key in tools:
        wanted[key] = f"{_clean(alias)}__{_clean(key.tool)}"
    counts: dict[str, int] = {}
    for base in wanted.values():
        counts[base] = counts.get(base, 0) + 1
    names: dict[str, ToolKey] = {}
    taken: set[str] = set()
    # Plain names first, so a hashed name can never take a plain one's place.
    for key in sorted(wanted):
        base = wanted[key]
        if counts[base] == 1 and len(base) <= MAX_NAME:
            names[base] = key
            taken.add(base)
    for key in sorted(wanted):
        base = wanted[key]
        if counts[base] == 1 and len(base) <= MAX_NAME:
            continue
        extra = 0
        name = _hashed(base, key)
        while name in taken:  # a digest prefix collision: lengthen it
            extra += 1
            name = _hashed(base, key, extra)
        names[name] = key
        taken.add(name)
    return names
