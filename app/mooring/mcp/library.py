"""Prompts and resources on one session: the requests and their translation into core values.

:class:`~mooring.mcp.connection.McpConnection` queues these like every other request; a server
that does not declare the capability lists nothing (it is not asked).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import mcp.types as types
from mcp.client import Client
from mcp.shared.exceptions import MCPError

from mooring.core.library import (
    PromptArgument,
    PromptInfo,
    PromptMessage,
    PromptText,
    ResourceInfo,
    content_text,
)
from mooring.core.servers import ServerDefinition

T = TypeVar("T")

_MAX_PAGES = 100
"""A paginator that never ends cannot hang the connection."""


async def _pages(fetch: Callable[[str | None], Awaitable[tuple[list[T], str | None]]]) -> list[T]:
    items: list[T] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page, cursor = await fetch(cursor)
        items.extend(page)
        if cursor is None:
            break
    return items


async def list_prompts(client: Client, server: ServerDefinition) -> list[PromptInfo]:
    """Every prompt the server lists (all pages)."""
    if client.server_capabilities.prompts is None:
        return []

    async def fetch(cursor: str | None) -> tuple[list[types.Prompt], str | None]:
        page = await client.list_prompts(cursor=cursor, cache_mode="bypass")
        return page.prompts, page.next_cursor

    return [
        PromptInfo(
            server_id=server.id,
            server_alias=server.alias,
            name=prompt.name,
            title=prompt.title or "",
            description=prompt.description or "",
            arguments=tuple(
                PromptArgument(a.name, a.description or "", bool(a.required))
                for a in prompt.arguments or []
            ),
        )
        for prompt in await _pages(fetch)
    ]


async def get_prompt(client: Client, name: str, arguments: dict[str, str]) -> PromptText:
    """``prompts/get``: the messages, their content as text."""
    result = await client.get_prompt(name, arguments or None)
    return PromptText(
        prompt=name,
        description=result.description or "",
        messages=tuple(
            PromptMessage(
                role=str(message.role),
                text=content_text(message.content.model_dump(by_alias=True, mode="json")),
            )
            for message in result.messages
        ),
    )


async def list_resources(client: Client, server: ServerDefinition) -> list[ResourceInfo]:
    """Every resource and resource template the server lists (all pages)."""
    if client.server_capabilities.resources is None:
        return []

    async def fixed(cursor: str | None) -> tuple[list[types.Resource], str | None]:
        page = await client.list_resources(cursor=cursor, cache_mode="bypass")
        return page.resources, page.next_cursor

    async def templated(cursor: str | None) -> tuple[list[types.ResourceTemplate], str | None]:
        try:
            page = await client.list_resource_templates(cursor=cursor, cache_mode="bypass")
        except MCPError as exc:
            if exc.code != types.METHOD_NOT_FOUND:
                raise
            return [], None  # resources without templates
        return page.resource_templates, page.next_cursor

    listed = [
        ResourceInfo(
            server_id=server.id,
            server_alias=server.alias,
            uri=r.uri,
            name=r.name,
            title=r.title or "",
            description=r.description or "",
            mime_type=r.mime_type,
        )
        for r in await _pages(fixed)
    ]
    return listed + [
        ResourceInfo(
            server_id=server.id,
            server_alias=server.alias,
            uri=t.uri_template,
            name=t.name,
            title=t.title or "",
            description=t.description or "",
            mime_type=t.mime_type,
            template=True,
        )
        for t in await _pages(templated)
    ]
