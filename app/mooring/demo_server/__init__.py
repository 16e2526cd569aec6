"""The bundled reference MCP server: a supplier CSV import that runs as a durable Task.

A separate program (``python -m mooring.demo_server``) built on ``mcp`` 2.3.0's server extension
API. It speaks the ``io.modelcontextprotocol/tasks`` extension over stdio and Streamable HTTP,
keeps its tasks and supplier records in its own SQLite file, and resumes interrupted tasks from
their last checkpoint when any instance starts. It imports nothing from the host's packages.
See ``docs/demo-server.md``.
"""

__version__ = "0.1.0"
