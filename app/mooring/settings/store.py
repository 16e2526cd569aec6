"""Loading and saving settings; a damaged file is kept aside, never silently lost."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from mooring.settings.schema import BY_KEY, SETTINGS, SETTINGS_VERSION, UPGRADES, Setting

TYPE_CHECKING = False  # not typing's: the quick listing loads no typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


class Settings:
    """Typed access to declared settings, with defaults for what the user never changed."""

    def __init__(self, values: Mapping[str, Any] | None = None) -> None:
        self._values: dict[str, Any] = {}
        self.problems: list[str] = []
        self.damaged: Exception | None = None
        """Why the file could not be read at all (the defaults are used)."""
        for key, value in (values or {}).items():
            self._set_checked(key, value)

    def _set_checked(self, key: str, value: Any) -> None:
        setting = BY_KEY.get(key)
        if setting is None:
            self.problems.append(f"unknown setting {key!r} ignored")
            return
        if not _valid(setting, value):
            self.problems.append(f"setting {key!r} should be {_expected(setting)}; default used")
            return
        self._values[key] = value

    def get(self, key: str) -> Any:
        """The value of a declared setting (``KeyError`` for an undeclared key)."""
        return self._values.get(key, BY_KEY[key].default)

    def set(self, key: str, value: Any) -> None:
        """Change a setting; ``ValueError`` if the key or type is wrong."""
        setting = BY_KEY.get(key)
        if setting is None or not _valid(setting, value):
            raise ValueError(f"invalid value for setting {key!r}")
        self._values[key] = value

    def changed(self) -> dict[str, Any]:
        """Only the values that differ from the defaults."""
        return {k: v for k, v in self._values.items() if v != BY_KEY[k].default}

    def as_dict(self) -> dict[str, Any]:
        """Every setting with its effective value."""
        return {s.key: self.get(s.key) for s in SETTINGS}


def _valid(setting: Setting, value: Any) -> bool:
    if type(value) is not setting.type:
        return False
    if setting.choices is not None and value not in setting.choices:
        return False
    return not (isinstance(value, list) and not all(isinstance(v, str) for v in value))


def _expected(setting: Setting) -> str:
    if setting.choices is not None:
        return " or ".join(setting.choices)
    return "a list of text" if setting.type is list else setting.type.__name__


def read_settings(path: Path) -> Settings:
    """The settings the file holds, changing nothing and saying nothing: a missing file gives
    the defaults; what is wrong is in ``problems``, a damaged file in ``damaged``
    (:func:`load_settings` reports them and moves a damaged file aside)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Settings()
    except (OSError, ValueError) as exc:
        settings = Settings()
        settings.damaged = exc
        return settings
    if not isinstance(raw, dict):
        raw = {}
    version = raw.get("version", SETTINGS_VERSION)
    values = raw.get("values", {})
    if not isinstance(values, dict) or not isinstance(version, int):
        values, version = {}, SETTINGS_VERSION
    while version < SETTINGS_VERSION:
        values = UPGRADES[version](values)
        version += 1
    return Settings(values)


def load_settings(path: Path) -> Settings:
    """Read settings; a missing file gives defaults, a damaged one is moved aside and reported."""
    settings = read_settings(path)
    if settings.damaged is not None:
        aside = path.with_name(f"{path.name}.damaged-{datetime.now(UTC):%Y%m%dT%H%M%S}")
        try:
            path.replace(aside)
            kept = f"kept as {aside.name}"
        except OSError:
            kept = "left in place"
        settings.problems.append(
            f"settings file unreadable ({settings.damaged}); defaults used, file {kept}"
        )
    if settings.problems:
        import logging  # only with something to say: a quick command starts without logging

        for problem in settings.problems:
            logging.getLogger("mooring.settings").warning("%s", problem)
    return settings


def save_settings(path: Path, settings: Settings) -> None:
    """Write settings atomically (a crash leaves the old file or the new one, never half)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    payload = {"version": SETTINGS_VERSION, "values": settings.changed()}
    with tmp.open("w", encoding="utf-8") as fh:
        json.dump(payload, fh, indent=2, sort_keys=True)
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)
