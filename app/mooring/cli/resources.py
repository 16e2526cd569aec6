"""``mooring tasks show ID --resource [URI]``: read what a task's result links to."""

from __future__ import annotations

from typing import Any

from mooring.cli.context import CliContext
from mooring.core.errors import KnownError
from mooring.core.ports import ServerConnection
from mooring.core.resources import ResourceLink, ResourceRead, resource_links
from mooring.core.tasks.record import TaskRecord

ALL = "*"


async def read_linked(
    ctx: CliContext, record: TaskRecord, result: dict[str, Any] | None, which: str
) -> list[dict[str, Any]]:
    """Read the resources the result links to (``which`` is a URI, or ``*`` for all), through
    the task's own server and account; only linked URIs are read."""
    links = resource_links(result)
    if which != ALL:
        chosen = [link for link in links if link.uri == which]
        if not chosen:
            raise KnownError(
                f"The result of task {record.id[:8]} links to no resource {which!r}.",
                hint="It links to: " + (", ".join(link.uri for link in links) or "nothing"),
                code="usage",
            )
        links = chosen
    if not links:
        raise KnownError(f"The result of task {record.id[:8]} links to no resource.")
    server = await ctx.catalog.get_server(record.server_id)
    if server is None or await ctx.catalog.is_removed(record.server_id):
        raise KnownError(f"The server of task {record.id[:8]} was removed; nothing can be read.")
    connection = await ctx.gateway.connect(server, record.credential_profile_id)
    return [await _read(connection, link) for link in links]


async def _read(connection: ServerConnection, link: ResourceLink) -> dict[str, Any]:
    outcome = await connection.read_resource(link.uri)
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


def resource_text(read: dict[str, Any]) -> str:
    """A read resource for people: its text, or why it could not be read."""
    if read["error"]:
        return f"{read['uri']}: cannot be read: {read['error']}"
    parts = [
        part["text"]
        if part["text"] is not None
        else f"[{part['mime_type'] or 'binary'} data, {part['blob_bytes']:,} bytes, not shown]"
        for part in read["contents"]
    ]
    return "\n".join(parts) if parts else f"{read['uri']}: empty"
