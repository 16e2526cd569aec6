"""Light and dark palettes that follow the system's colour scheme."""

from __future__ import annotations

import os

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
    # Qt's namespace (its hundred enums) loads here, after the window's first paint.
    from PySide6.QtCore import Qt

    forced = forced_dark()
    if forced is not None:
        return forced
    return app.styleHints().colorScheme() is Qt.ColorScheme.Dark


def forced_dark() -> bool | None:
    """``MOORING_COLOR_SCHEME``'s choice (``None``: the system decides)."""
    forced = os.environ.get(SCHEME_ENV, "").lower()
    return forced == "dark" if forced in ("dark", "light") else None


def is_dark(palette: QPalette) -> bool:
    """Whether ``palette`` is a dark one (its window colour is dark)."""
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def start_theme(app: QApplication, *, dark_last_time: bool) -> None:
    """Before the window's first paint: the Fusion style and the palette of the last run (or
    the one ``MOORING_COLOR_SCHEME`` forces), without asking the system yet;
    :func:`follow_system` asks once the window is on screen."""
    app.setStyle("Fusion")
    forced = forced_dark()
    if forced if forced is not None else dark_last_time:
        app.setPalette(dark_palette())


def follow_system(app: QApplication) -> None:
    """Use the Fusion style with a palette that matches the system, now and when it changes."""
    if app.style().name().lower() != "fusion":  # set already by start_theme, usually
        app.setStyle("Fusion")
    light = app.style().standardPalette()

    def apply(*_args: object) -> None:
        app.setPalette(dark_palette() if wants_dark(app) else light)

    apply()
    app.styleHints().colorSchemeChanged.connect(apply)
