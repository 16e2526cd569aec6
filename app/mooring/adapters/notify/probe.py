"""Which link of the notification chain is in use here (for ``mooring doctor``)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from mooring.adapters.notify.desktop import DesktopLink
from mooring.core.ports import ProbeResult

FALLBACK = "system tray or in-app toast (while the window is open); the terminal for watchers"


@dataclass(frozen=True, slots=True)
class NotifierStatus(ProbeResult):
    """Whether desktop notifications can be shown, and which link notifications go through."""

    link: str = ""
    """The link in use: ``desktop notifications``, or the fallback."""


def notifier_status(timeout_s: float = 3.0) -> NotifierStatus:
    """Ask the platform's notification service for its capabilities (nothing is shown)."""

    async def probe() -> NotifierStatus:
        link = DesktopLink(timeout_s=timeout_s)
        try:
            status = await link.status()
        finally:
            await link.aclose()
        if status.usable:
            return NotifierStatus(status.backend, True, status.detail, link.name)
        return NotifierStatus(status.backend, False, status.detail, FALLBACK)

    return asyncio.run(probe())
