"""Render the app icon's PNG sizes from its SVG (Qt's SVG renderer; no other tool needed).

``python packaging/render_icons.py``: writes ``resources/icons/hicolor/NxN/apps/<app id>.png``.
The PNGs are committed; run this again after changing the SVG.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

APP_ID = "io.mooring.Mooring"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICONS = Path(__file__).resolve().parents[1] / "resources" / "icons"


def render(svg: Path, size: int, target: Path) -> None:
    """Draw ``svg`` at ``size`` x ``size`` pixels into the PNG ``target``."""
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"render_icons: {svg} is not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    target.parent.mkdir(parents=True, exist_ok=True)
    if not image.save(str(target), "PNG"):
        raise SystemExit(f"render_icons: could not write {target}")


def main() -> int:
    app = QGuiApplication(sys.argv[:1])
    svg = ICONS / f"{APP_ID}.svg"
    for size in SIZES:
        render(svg, size, ICONS / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png")
    del app
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
