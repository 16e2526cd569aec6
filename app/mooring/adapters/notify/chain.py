"""The delivery chain: desktop notification → system tray → in-app toast, ending somewhere.

Each link says honestly whether it delivered; the chain tries them in order and reports which
one did. The tray and the toast live in the window (Qt), so the UI registers them as hooks;
a headless process ends the chain with the terminal instead.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from mooring.core.notifications import Notice

log = logging.getLogger("mooring.notify")


class Link(Protocol):
    """One way of showing a notice."""

    @property
    def name(self) -> str: ...

    async def deliver(self, notice: Notice) -> bool:
        """Show ``notice``; ``False`` if this link cannot (the chain tries the next)."""
        ...


@dataclass(slots=True)
class HookLink:
    """A link the UI (or the CLI) provides: ``show(notice) -> delivered``; while no hook is
    registered it does not deliver."""

    name: str
    show: Callable[[Notice], bool] | None = None

    async def deliver(self, notice: Notice) -> bool:
        if self.show is None:
            return False
        return self.show(notice)


class NotificationChain:
    """Tries each link in order; the last one must always deliver."""

    def __init__(self, links: Sequence[Link]) -> None:
        self.links = list(links)
        self.last_used: str | None = None

    async def show(self, notice: Notice) -> str:
        """Deliver through the first link that works; returns its name (``"nowhere"`` only if
        every link refused, which the composition root avoids by ending with one that cannot)."""
        for link in self.links:
            try:
                delivered = await link.deliver(notice)
            except Exception:  # a broken link must not lose the notice: try the next
                log.exception("notification link %s failed", link.name)
                delivered = False
            if delivered:
                if link.name != self.last_used:
                    log.info("notifications go through: %s", link.name)
                self.last_used = link.name
                return link.name
        log.warning("no notification link delivered notice %d", notice.key)
        return "nowhere"
