"""Mooring: a local-first desktop MCP host built for long-running, durable MCP Tasks."""

__version__ = "0.1.0"
