"""Desktop notifications through ``desktop-notifier`` (D-Bus on Linux), checked honestly.

``DesktopNotifier.send()`` never raises: when nothing listens it logs a warning and returns an
id all the same. So this link asks the notification service for its capabilities first (with a
deadline), and counts a notice as delivered only when the library reports it dispatched. A
link found unusable is asked again after :data:`RETRY_AFTER`, so a notification daemon started
later is picked up.
"""

from __future__ import annotations

import asyncio
import logging
import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mooring.core.notifications import Notice, OpenTarget

log = logging.getLogger("mooring.notify")

RETRY_AFTER = 60.0
"""Seconds before an unusable notification service is asked again."""


@dataclass(frozen=True, slots=True)
class DesktopStatus:
    """Whether desktop notifications can be shown here, and through what."""

    usable: bool
    backend: str
    detail: str
    actions: bool = False
    """The service shows buttons (an "Open" action)."""


def _backend_name() -> str:
    system = platform.system()
    return "D-Bus (org.freedesktop.Notifications)" if system == "Linux" else system


class DesktopLink:
    """The first link of the delivery chain: the platform's notification service."""

    name = "desktop notifications"

    def __init__(
        self,
        *,
        app_name: str = "Mooring",
        timeout_s: float = 3.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._app_name = app_name
        self._timeout = timeout_s
        self._monotonic = monotonic
        self._notifier: Any = None
        self._status: DesktopStatus | None = None
        self._checked_at = 0.0
        self._shown: dict[int, str] = {}
        self.on_open: Callable[[OpenTarget | None], None] | None = None
        """Called when the user clicks a notification (or its "Open" button)."""

    async def status(self) -> DesktopStatus:
        """Ask the service (cached; an unusable service is asked again after a while)."""
        fresh = self._monotonic() - self._checked_at < RETRY_AFTER
        if self._status is not None and (self._status.usable or fresh):
            return self._status
        self._status = await self._probe()
        self._checked_at = self._monotonic()
        return self._status

    async def _probe(self) -> DesktopStatus:
        backend = _backend_name()
        if platform.system() == "Linux" and not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
            return DesktopStatus(False, backend, "no D-Bus session bus")
        from desktop_notifier import Capability, DesktopNotifier

        await self.aclose()
        notifier = DesktopNotifier(app_name=self._app_name, app_icon=None)
        try:
            async with asyncio.timeout(self._timeout):
                capabilities = await notifier.get_capabilities()
                info = await _server_information(notifier)
        except Exception as exc:  # noqa: BLE001  # any failure: not usable, fall through
            _disconnect(notifier)
            why = _why(exc)
            log.info("desktop notifications unavailable: %s", why)
            return DesktopStatus(False, backend, why)
        self._notifier = notifier
        actions = Capability.BUTTONS in capabilities
        detail = info or "a notification service answers"
        return DesktopStatus(True, backend, detail, actions=actions)

    async def deliver(self, notice: Notice) -> bool:
        """Show ``notice`` (replacing the earlier one of its burst); ``False`` if it did not
        reach the service."""
        status = await self.status()
        if not status.usable or self._notifier is None:
            return False
        from desktop_notifier import Button

        notifier = self._notifier
        previous = self._shown.pop(notice.key, None)
        if previous is not None:
            try:
                await notifier.clear(previous)
            except Exception:  # closed by the user meanwhile: fine
                log.debug("could not close the earlier notification", exc_info=True)
        dispatched: list[bool] = []
        target = notice.target
        on_open = self.on_open
        buttons = (
            [Button(title="Open", on_pressed=lambda: on_open(target))]
            if on_open is not None and status.actions
            else []
        )
        identifier = await notifier.send(
            title=notice.summary,
            message=notice.body,
            buttons=buttons,
            on_clicked=(lambda: on_open(target)) if on_open is not None else None,
            on_dispatched=lambda: dispatched.append(True),
        )
        if not dispatched:
            log.info("desktop notification not delivered; falling back")
            self._status = DesktopStatus(False, status.backend, "the service stopped answering")
            self._checked_at = self._monotonic()
            return False
        self._shown[notice.key] = identifier
        return True

    async def aclose(self) -> None:
        """Close the connection to the notification service."""
        if self._notifier is not None:
            _disconnect(self._notifier)
            self._notifier = None


async def _server_information(notifier: Any) -> str:
    """The notification server's name and version, when the backend says (D-Bus)."""
    interface = getattr(notifier._backend, "interface", None)  # no public API
    if interface is None:
        return ""
    name, vendor, version, _spec = await interface.call_get_server_information()
    return f"{name} {version} ({vendor})"


def _disconnect(notifier: Any) -> None:
    bus = getattr(notifier._backend, "bus", None)  # no public close()
    if bus is not None:
        bus.disconnect()


def _why(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "the notification service did not answer in time"
    text = str(exc)
    if "was not provided by any .service files" in text or "ServiceUnknown" in text:
        return "no notification service on the session bus"
    if "DBUS_SESSION_BUS_ADDRESS" in text:
        return "no D-Bus session bus"
    return f"desktop notifications unavailable ({type(exc).__name__})"
