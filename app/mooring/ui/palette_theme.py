"""Light and dark palettes that follow the system's colour scheme."""

from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

SCHEME_ENV = "MOORING_COLOR_SCHEME"
"""``dark`` or ``light`` forces a scheme (screenshots, or a desktop that reports none)."""


def dark_palette() -> QPalette:
    """A dark palette with readable contrast."""
    palette = QPalette()
    colours = {
        QPalette.ColorRole.Window: "#202124",
        QPalette.ColorRole.WindowText: "#e8eaed",
        QPalette.ColorRole.Base: "#17181a",
        QPalette.ColorRole.AlternateBase: "#26272a",
        QPalette.ColorRole.ToolTipBase: "#303134",
        QPalette.ColorRole.ToolTipText: "#e8eaed",
        QPalette.ColorRole.PlaceholderText: "#9aa0a6",
        QPalette.ColorRole.Text: "#e8eaed",
        QPalette.ColorRole.Button: "#2d2e31",
        QPalette.ColorRole.ButtonText: "#e8eaed",
        QPalette.ColorRole.BrightText: "#ff6e6e",
        QPalette.ColorRole.Highlight: "#3f6fb5",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.Link: "#8ab4f8",
    }
    for role, colour in colours.items():
        palette.setColor(role, QColor(colour))
    for role in (
        QPalette.ColorRole.Text,
        QPalette.ColorRole.ButtonText,
        QPalette.ColorRole.WindowText,
    ):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#7f8387"))
    return palette


def wants_dark(app: QGuiApplication) -> bool:
    """Whether the system (or ``MOORING_COLOR_SCHEME``) asks for a dark scheme."""
    forced = os.environ.get(SCHEME_ENV, "").lower()
    if forced in ("dark", "light"):
        return forced == "dark"
    return app.styleHints().colorScheme() is Qt.ColorScheme.Dark


def follow_system(app: QApplication) -> None:
    """Use the Fusion style with a palette that matches the system, now and when it changes."""
    app.setStyle("Fusion")
    light = app.style().standardPalette()

    def apply(*_args: object) -> None:
        app.setPalette(dark_palette() if wants_dark(app) else light)

    apply()
    app.styleHints().colorSchemeChanged.connect(apply)
