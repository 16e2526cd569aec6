"""The desktop entry, AppStream metainfo and icons: valid for the desktop's own tools, and all
named after the one app id the window announces (so task bars match the window to its entry).

``desktop-file-validate`` (desktop-file-utils) and ``appstreamcli`` (appstream) are installed by
``packaging/system-deps.sh``.
"""

from __future__ import annotations

import configparser
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from mooring import __version__
from mooring.settings.paths import APP_ID, APP_NAME

REPO = Path(__file__).resolve().parents[2]
DESKTOP = REPO / "resources" / "desktop" / f"{APP_ID}.desktop"
METAINFO = REPO / "resources" / "desktop" / f"{APP_ID}.metainfo.xml"
ICONS = REPO / "resources" / "icons"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def tool(name: str, package: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is missing: install {package} (bash packaging/system-deps.sh all)")
    return found


def desktop_entry(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read_string(path.read_text(encoding="utf-8"))
    return parser["Desktop Entry"]


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_the_desktop_entry_passes_desktop_file_validate() -> None:
    done = subprocess.run(
        [tool("desktop-file-validate", "desktop-file-utils"), str(DESKTOP)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "", done.stdout  # not even a hint


def test_the_desktop_entry_names_the_app_id_the_window_announces() -> None:
    entry = desktop_entry(DESKTOP)
    assert DESKTOP.stem == APP_ID  # QGuiApplication.setDesktopFileName(APP_ID) finds it
    assert entry["Icon"] == APP_ID
    assert entry["Name"] == APP_NAME
    assert entry["StartupWMClass"] == APP_NAME  # X11's WM_CLASS class is the application name
    assert entry["Exec"] == "mooring"  # the installer writes the installed path here


def test_the_metainfo_passes_appstreamcli_validate() -> None:
    done = subprocess.run(
        [tool("appstreamcli", "appstream"), "validate", "--no-net", "--no-color", str(METAINFO)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_metainfo_describes_this_release_with_a_screenshot() -> None:
    root = ET.parse(METAINFO).getroot()  # noqa: S314  # our own file
    assert root.findtext("id") == APP_ID
    assert root.findtext("launchable") == f"{APP_ID}.desktop"
    assert root.findtext("provides/binary") == "mooring"
    newest = root.find("releases/release")
    assert newest is not None
    # A version bump without release notes fails here.
    assert newest.get("version") == __version__
    assert newest.find("description/ul/li") is not None
    screenshot = root.find("screenshots/screenshot[@type='default']")
    assert screenshot is not None
    assert screenshot.findtext("caption")
    assert (screenshot.findtext("image") or "").startswith("https://")


def test_the_icon_ships_as_svg_and_every_png_size() -> None:
    svg = ET.parse(ICONS / f"{APP_ID}.svg").getroot()  # noqa: S314  # our own file
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    for size in SIZES:
        png = ICONS / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
        assert png_size(png) == (size, size)


def test_the_package_reaches_the_icons_it_shows() -> None:
    # app/mooring/ui/icons links to resources/icons (the wheel and the bundle copy the files).
    from mooring.ui.icon import ICON_DIR

    assert (ICON_DIR / f"{APP_ID}.svg").is_file()
    assert (ICON_DIR / "hicolor" / "48x48" / "apps" / f"{APP_ID}.png").is_file()
