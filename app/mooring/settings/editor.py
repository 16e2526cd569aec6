"""Changing the declared settings: a typed value from what the user typed, and the editor the
window and `mooring settings set` write through."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mooring.core.errors import KnownError
from mooring.settings.schema import BY_KEY
from mooring.settings.store import Settings, load_settings, save_settings


def parse_setting(key: str, raw: str) -> object:
    """A typed value for ``key`` from what the user typed, or a :class:`KnownError` saying
    what it takes."""
    declared = BY_KEY.get(key)
    if declared is None:
        raise KnownError(f"No setting called {key!r}.", hint="See `mooring settings list`.")
    try:
        if declared.type is bool:
            if raw.lower() not in ("true", "false", "yes", "no", "on", "off", "1", "0"):
                raise ValueError(raw)
            return raw.lower() in ("true", "yes", "on", "1")
        if declared.type is list:
            return [part.strip() for part in raw.split(",") if part.strip()]
        if declared.choices is not None and raw not in declared.choices:
            raise ValueError(raw)
        return declared.type(raw)
    except ValueError as exc:
        kind = (
            " or ".join(declared.choices)
            if declared.choices is not None
            else f"a {declared.type.__name__}"
        )
        raise KnownError(f"{key} takes {kind}, not {raw!r}.") from exc


class SettingsEditor:
    """Change declared settings: in this process at once, and in the settings file (read
    again first, so a change made meanwhile with ``mooring settings`` is kept)."""

    def __init__(
        self, path: Path, live: Settings, *, then: Callable[[], Awaitable[object]] | None = None
    ) -> None:
        self.path = path
        self._live = live
        self._then = then
        """Called once a change is stored (the window tells the engine to read the file
        again)."""

    def get(self, key: str) -> Any:
        """The current value of a declared setting."""
        return self._live.get(key)

    async def set(self, key: str, value: object) -> None:
        """Store one setting (checked against its declaration; written off the event loop)."""
        try:
            Settings().set(key, value)  # the declaration's own check, before anything is written
        except ValueError:
            raise KnownError(f"{value!r} is not a value {key} takes.") from None

        def write() -> None:
            current = load_settings(self.path)
            current.set(key, value)
            save_settings(self.path, current)

        try:
            await asyncio.to_thread(write)
        except OSError as exc:
            raise KnownError(f"Could not save the settings file: {exc.strerror or exc}.") from exc
        self._live.set(key, value)
        if self._then is not None:
            await self._then()
