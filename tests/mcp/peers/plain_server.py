"""A plain MCP server without the Tasks extension (stdio): tools answer synchronously."""

from __future__ import annotations

from mcp.server import MCPServer

server: MCPServer = MCPServer("plain-peer")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


if __name__ == "__main__":
    server.run()
