"""Entry point: parse the configuration, build the server, serve stdio or HTTP."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

import anyio
from mcp.server.context import ServerRequestContext

from mooring.demo_server.app import build_server
from mooring.demo_server.config import ServerConfig, parse_config
from mooring.demo_server.http import bind, endpoint_url, serve_http

logger = logging.getLogger("mooring.demo_server")


def _exit_without_reply(_ctx: ServerRequestContext[Any, Any], task_id: str) -> None:
    # stdio has one connection, the process's pipes: dropping it means exiting. The task is
    # already committed and resumes when any instance starts.
    logger.warning("fault: exiting after creating task %s, before replying", task_id)
    logging.shutdown()
    os._exit(0)


async def serve(config: ServerConfig) -> None:
    """Run one server instance until its transport ends (stdin closes; SIGINT/SIGTERM on HTTP)."""
    drop_task_ids: set[str] = set()

    def drop_http_reply(_ctx: ServerRequestContext[Any, Any], task_id: str) -> None:
        drop_task_ids.add(task_id)

    # HTTP binds first: an OAuth-protected server needs its own URL (--port 0 picks the port).
    sock = bind(config.host, config.port) if config.http else None
    demo = build_server(
        config,
        on_drop_reply=drop_http_reply if config.http else _exit_without_reply,
        resource_url=endpoint_url(config, sock) if sock is not None else None,
    )
    async with anyio.create_task_group() as tg:
        # The runner is serving (and has started resuming abandoned tasks) before any request.
        await tg.start(demo.runner.serve)
        if sock is not None:
            app = demo.mcp.streamable_http_app(host=config.host)
            await serve_http(app, config, drop_task_ids, sock)
        else:
            await demo.mcp.run_stdio_async()
        tg.cancel_scope.cancel()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m mooring.demo_server``."""
    config = parse_config(argv)
    logging.basicConfig(
        level=config.log_level,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        anyio.run(serve, config)
    except KeyboardInterrupt:
        return 130
    return 0
