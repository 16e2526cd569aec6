"""First-launch defaults: the bundled demo server, so the app does something real at once."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from mooring.core.clock import Clock
from mooring.core.ids import new_id
from mooring.core.ports import ServerCatalog
from mooring.core.servers import ServerDefinition, Transport

log = logging.getLogger("mooring.first_run")

DEMO_ALIAS = "demo"


async def ensure_demo_server(
    catalog: ServerCatalog, clock: Clock, *, command: str, args: Sequence[str]
) -> ServerDefinition | None:
    """Configure the bundled demo server unless it was ever configured before.

    A user who removed it does not get it back on the next launch.
    """
    if await catalog.builtin_ever_configured():
        return None
    alias = DEMO_ALIAS
    if await catalog.find_server(alias) is not None:
        alias = f"{DEMO_ALIAS}-{new_id()[:6]}"
    server = ServerDefinition(
        id=new_id(),
        alias=alias,
        transport=Transport.STDIO,
        command=command,
        args=tuple(args),
        builtin=True,
        created_at=clock.now(),
    )
    await catalog.add_server(server)
    log.info("configured the bundled demo server as %r", alias)
    return server
