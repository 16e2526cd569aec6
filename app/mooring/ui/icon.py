"""The app icon (``resources/icons``, shipped as ``mooring/ui/icons``): window, task bar, tray."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QIcon

from mooring.settings.paths import APP_ID

ICON_DIR = Path(__file__).resolve().parent / "icons"


def app_icon() -> QIcon:
    """Mooring's icon in every size it ships (PNGs and the SVG), else the desktop theme's icon
    of the app id (an installed entry), else an empty icon."""
    icon = QIcon()
    for png in sorted(ICON_DIR.glob(f"hicolor/*/apps/{APP_ID}.png")):
        icon.addFile(str(png))
    svg = ICON_DIR / f"{APP_ID}.svg"
    if svg.is_file():
        icon.addFile(str(svg))
    return icon if not icon.isNull() else QIcon.fromTheme(APP_ID)
