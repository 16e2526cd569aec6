"""What the composition root tells the window about this installation (light: the window's
shell imports it before anything heavy loads)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mooring.settings.editor import SettingsEditor


@dataclass(frozen=True, slots=True)
class SettingRow:
    """One setting as shown: key, current value, what it does."""

    key: str
    value: str
    description: str


@dataclass(frozen=True, slots=True)
class WindowInfo:
    """What the composition root tells the window about this installation."""

    data_dir: str
    database: str
    schema: str
    settings_file: str = ""
    log_file: str = ""
    settings: Sequence[SettingRow] = field(default_factory=tuple)
    editor: SettingsEditor | None = None
    """Changes settings from the window (``None``: the settings are shown read-only)."""
