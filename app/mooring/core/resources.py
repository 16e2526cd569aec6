"""The resources a ``CallToolResult`` links to, and what reading one returned."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ResourceLink:
    """A ``resource_link`` content block: where the server keeps more of the result."""

    uri: str
    name: str = ""
    mime_type: str | None = None


@dataclass(frozen=True, slots=True)
class ResourceText:
    """One part of a read resource: its text, or the size of binary data not shown."""

    uri: str
    mime_type: str | None
    text: str | None
    blob_bytes: int = 0


@dataclass(frozen=True, slots=True)
class ResourceRead:
    """What ``resources/read`` returned."""

    contents: tuple[ResourceText, ...]


@dataclass(frozen=True, slots=True)
class ResourceUnavailable:
    """``resources/read`` failed; ``reason`` says why, in words."""

    reason: str


ResourceOutcome = ResourceRead | ResourceUnavailable


def resource_links(result: dict[str, Any] | None) -> list[ResourceLink]:
    """Every ``resource_link`` block of a result, in order."""
    links: list[ResourceLink] = []
    for block in (result or {}).get("content") or []:
        if (
            isinstance(block, dict)
            and block.get("type") == "resource_link"
            and isinstance(block.get("uri"), str)
        ):
            mime = block.get("mimeType")
            links.append(
                ResourceLink(
                    uri=block["uri"],
                    name=str(block.get("name") or ""),
                    mime_type=mime if isinstance(mime, str) else None,
                )
            )
    return links


ALL_RESOURCES = "*"
"""Asks for every resource a result links to."""

ResourceView = dict[str, Any]
"""A read resource as the faces show it (and ``tasks show --json`` prints it): ``uri``,
``name``, ``error`` (``None`` when read) and ``contents`` (``uri``, ``mime_type``, ``text``,
``blob_bytes`` each)."""


def resource_view(link: ResourceLink, outcome: ResourceOutcome) -> ResourceView:
    """What reading ``link`` gave, as plain data."""
    if not isinstance(outcome, ResourceRead):
        return {"uri": link.uri, "name": link.name, "error": outcome.reason, "contents": []}
    return {
        "uri": link.uri,
        "name": link.name,
        "error": None,
        "contents": [
            {
                "uri": part.uri,
                "mime_type": part.mime_type,
                "text": part.text,
                "blob_bytes": part.blob_bytes,
            }
            for part in outcome.contents
        ],
    }
