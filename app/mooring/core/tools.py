"""What a server offers: tools with their (claimed) annotations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolAnnotations:
    """The server's hints about a tool. Claims, not facts, unless the server is trusted."""

    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolInfo:
    """One tool of one server, as listed by ``tools/list``."""

    server_id: str
    name: str
    title: str | None = None
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=dict)
    annotations: ToolAnnotations = field(default_factory=ToolAnnotations)
