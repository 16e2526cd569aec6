"""First-launch defaults: the bundled demo server, so the app does something real at once, and
the sample import the welcome offers on it."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from mooring.core.builtin_launch import launch_for_this_installation
from mooring.core.ids import new_id
from mooring.core.servers import ServerDefinition, Transport

if TYPE_CHECKING:  # type-only: quick commands check the demo server without the ports
    from mooring.core.clock import Clock
    from mooring.core.ports import ServerCatalog

log = logging.getLogger("mooring.first_run")

DEMO_ALIAS = "demo"


async def ensure_demo_server(
    catalog: ServerCatalog, clock: Clock, *, command: str, args: Sequence[str]
) -> ServerDefinition | None:
    """Configure the bundled demo server unless it was ever configured before (by any face:
    the window or the CLI, on the first use of a data folder).

    A user who removed it does not get it back on the next launch, and a user's own server
    called ``demo`` is never joined by a bundled copy. One configured before is started the
    way this installation starts it (``command``, ``args``): after Mooring moved (a bundle
    installed elsewhere, a new virtual environment) the old program may be gone.
    """
    if await catalog.builtin_ever_configured():
        await _follow_this_installation(catalog, command, tuple(args))
        return None
    if await catalog.find_server(DEMO_ALIAS) is not None:
        # The user has a server of that name: theirs stays, and no second copy appears.
        log.info("a server called %r exists; the bundled demo server is not added", DEMO_ALIAS)
        return None
    server = ServerDefinition(
        id=new_id(),
        alias=DEMO_ALIAS,
        transport=Transport.STDIO,
        command=command,
        args=tuple(args),
        builtin=True,
        created_at=clock.now(),
    )
    await catalog.add_server(server)
    log.info("configured the bundled demo server as %r", DEMO_ALIAS)
    return server


async def _follow_this_installation(
    catalog: ServerCatalog, command: str, args: tuple[str, ...]
) -> None:
    # Only the program and how it is entered change: the server's own flags (its store, any
    # the user added) stay, and a command line the user changed to something else is theirs.
    for server in await catalog.list_servers():
        if not server.builtin or server.transport is not Transport.STDIO:
            continue
        wanted = launch_for_this_installation(server.command, server.args, command, args)
        if wanted is None:
            continue
        await catalog.update_server(replace(server, command=command, args=wanted))
        log.info(
            "the bundled demo server %r now starts as %s %s (was %s %s)",
            server.alias,
            command,
            " ".join(wanted),
            server.command,
            " ".join(server.args),
        )
