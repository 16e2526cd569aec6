"""A 2026-07-28 server whose plain tools need input first (multi-round-trip requests).

``haiku`` asks the client's model for a line (``Sample``) and ``paint`` asks the user for a
colour (``Elicit``) before the tool body runs; on 2026-07-28 both arrive in an
``InputRequiredResult`` and the client retries with the answers. Over stdio; the MCP SDK's own
``MCPServer`` (no Tasks).
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve, Sample
from mcp.types import CreateMessageResult, SamplingMessage, TextContent
from pydantic import BaseModel

server = MCPServer("mrtr-peer")


def ask_model(topic: str) -> Sample:
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text=f"A line on {topic}"))],
        max_tokens=32,
        system_prompt="Be brief.",
    )


class Colour(BaseModel):
    colour: str


def ask_user() -> Elicit[Colour]:
    return Elicit("Which colour?", Colour)


@server.tool()
def haiku(topic: str, line: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
    """Writes a haiku with the client's model."""
    content = line.content
    text = content.text if isinstance(content, TextContent) else "?"
    return f"{topic}: {text} ({line.model})"


@server.tool()
def paint(colour: Annotated[Colour, Resolve(ask_user)]) -> str:
    """Paints in the colour the user picks."""
    return f"painted {colour.colour}"


if __name__ == "__main__":
    server.run("stdio")
