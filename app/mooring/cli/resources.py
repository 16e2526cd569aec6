"""``mooring tasks show ID --resource [URI]``: what a task's result links to, for people."""

from __future__ import annotations

from mooring.core.resources import ALL_RESOURCES as ALL
from mooring.core.resources import ResourceView

__all__ = ["ALL", "resource_text"]


def resource_text(read: ResourceView) -> str:
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
