"""Which notification path works here (for ``mooring doctor`` and start-up)."""

from __future__ import annotations

import asyncio
import os
import platform

from desktop_notifier import DesktopNotifier

from mooring.core.ports import ProbeResult

NotifierStatus = ProbeResult
"""What the probe found (one result type for every probe)."""


async def _capabilities(notifier: DesktopNotifier) -> object:
    return await notifier.get_capabilities()


def notifier_status(timeout_s: float = 3.0) -> NotifierStatus:
    """Ask the platform's notification service for its capabilities (no notification is shown)."""
    system = platform.system()
    if system == "Linux" and not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        return NotifierStatus(
            "in-app only", False, "no D-Bus session bus: notifications appear inside Mooring"
        )
    notifier = DesktopNotifier(app_name="Mooring")
    try:
        caps = asyncio.run(asyncio.wait_for(_capabilities(notifier), timeout_s))
    except Exception as exc:  # noqa: BLE001  # any failure means "use the in-app fallback"
        return NotifierStatus(
            "in-app only", False, f"desktop notifications unavailable ({type(exc).__name__})"
        )
    backend = "D-Bus (org.freedesktop.Notifications)" if system == "Linux" else system
    return NotifierStatus(backend, True, f"capabilities: {len(caps)}")  # type: ignore[arg-type]
