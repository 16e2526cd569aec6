"""Can Qt run here, and on which platform? (``mooring doctor``; imports Qt lazily.)"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the window's start-up runs this probe before the core's ports load
    from mooring.core.ports import ProbeResult


@dataclass(frozen=True, slots=True)
class QtStatus:
    """Whether the GUI can start, and why not."""

    platform: str
    qt_version: str
    importable: bool
    display: bool
    detail: str

    def as_probe(self) -> ProbeResult:
        """The one probe result type ``doctor`` reads (``unavailable`` when Qt cannot load)."""
        from mooring.core.ports import ProbeResult

        backend = f"Qt {self.qt_version} on {self.platform}" if self.importable else "unavailable"
        return ProbeResult(backend, self.importable and self.display, self.detail)


def qt_platform() -> str:
    """The Qt platform plugin that would be used (``QT_QPA_PLATFORM`` or the display's)."""
    chosen = os.environ.get("QT_QPA_PLATFORM")
    if chosen:
        return chosen
    system: str = sys.platform
    if system.startswith("linux"):
        if os.environ.get("WAYLAND_DISPLAY"):
            return "wayland"
        if os.environ.get("DISPLAY"):
            return "xcb"
        return "none"
    return {"darwin": "cocoa", "win32": "windows"}.get(system, system)


def qt_status() -> QtStatus:
    """Try importing QtWidgets (missing system libraries show up here) and find a display."""
    platform = qt_platform()
    try:
        qtcore = importlib.import_module("PySide6.QtCore")
        importlib.import_module("PySide6.QtWidgets")
    except ImportError as exc:
        return QtStatus(platform, "", False, False, f"Qt cannot load: {exc}")
    version = str(qtcore.qVersion())
    if platform == "none":
        return QtStatus(platform, version, True, False, "no display (set DISPLAY, or use xvfb-run)")
    return QtStatus(platform, version, True, True, f"Qt {version} on {platform}")
