"""``make install-desktop`` / ``make uninstall-desktop`` (``packaging/desktop.sh``) for one user,
in XDG folders under a temporary home, with a tiny stand-in bundle instead of a PyInstaller build.
"""

from __future__ import annotations

import configparser
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from mooring.settings.paths import APP_ID

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "packaging" / "desktop.sh"
SIZES = ("16x16", "24x24", "32x32", "48x48", "64x64", "128x128", "256x256", "512x512")


def fake_bundle(folder: Path, said: str) -> Path:
    """A bundle folder whose ``mooring`` prints ``said`` and its arguments."""
    folder.mkdir(parents=True)
    exe = folder / "mooring"
    exe.write_text(f'#!/bin/sh\necho "{said}" "$@"\n')
    exe.chmod(0o755)
    (folder / "_internal").mkdir()
    (folder / "_internal" / "lib.txt").write_text("a library")
    return folder


class Home:
    """A user's home with XDG_DATA_HOME (with a space in it) and XDG_BIN_HOME."""

    def __init__(self, root: Path) -> None:
        self.home = root / "home"
        self.data = root / "data home"
        self.bin = root / "bin"
        self.home.mkdir()

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {
            **os.environ,
            "HOME": str(self.home),
            "XDG_DATA_HOME": str(self.data),
            "XDG_BIN_HOME": str(self.bin),
        }
        return subprocess.run(
            ["bash", str(SCRIPT), *args],
            cwd=REPO,
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )

    @property
    def entry(self) -> Path:
        return self.data / "applications" / f"{APP_ID}.desktop"

    def icons(self) -> list[Path]:
        hicolor = self.data / "icons" / "hicolor"
        return [hicolor / s / "apps" / f"{APP_ID}.png" for s in SIZES] + [
            hicolor / "scalable" / "apps" / f"{APP_ID}.svg"
        ]


def exec_of(entry: Path) -> list[str]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read_string(entry.read_text(encoding="utf-8"))
    return shlex.split(parser["Desktop Entry"]["Exec"])


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_install_then_uninstall_for_the_current_user(tmp_path: Path) -> None:
    user = Home(tmp_path)
    # What must survive: the user's data, another app's icon.
    (user.data / "Mooring").mkdir(parents=True)
    (user.data / "Mooring" / "mooring.sqlite3").write_text("my tasks")
    other_icon = user.data / "icons" / "hicolor" / "48x48" / "apps" / "org.other.App.png"
    other_icon.parent.mkdir(parents=True)
    other_icon.write_text("theirs")

    done = user.run("install", str(fake_bundle(tmp_path / "dist" / "mooring", "v1")))
    assert done.returncode == 0, done.stderr

    installed = user.data / APP_ID / "mooring"
    command = exec_of(user.entry)
    assert command == [str(installed)]  # quoted in the file: the path has a space
    assert subprocess.run(command, capture_output=True, text=True, check=True).stdout == "v1\n"
    assert (user.bin / "mooring").resolve() == installed.resolve()
    assert all(icon.is_file() for icon in user.icons())
    assert (user.data / "metainfo" / f"{APP_ID}.metainfo.xml").is_file()
    if shutil.which("desktop-file-validate"):
        validated = subprocess.run(
            ["desktop-file-validate", str(user.entry)], capture_output=True, text=True, check=False
        )
        assert validated.returncode == 0, validated.stdout

    # Installing again replaces the program (no leftovers from the old one).
    newer = fake_bundle(tmp_path / "dist2" / "mooring", "v2")
    (user.data / APP_ID / "_internal" / "stale.txt").write_text("old")
    assert user.run("install", str(newer)).returncode == 0
    assert subprocess.run(command, capture_output=True, text=True, check=True).stdout == "v2\n"
    assert not (user.data / APP_ID / "_internal" / "stale.txt").exists()

    done = user.run("uninstall")
    assert done.returncode == 0, done.stderr
    assert "kept" in done.stdout
    assert not (user.data / APP_ID).exists()
    assert not user.entry.exists()
    assert not any(icon.exists() for icon in user.icons())
    assert not (user.data / "metainfo" / f"{APP_ID}.metainfo.xml").exists()
    assert not (user.bin / "mooring").exists()
    assert (user.data / "Mooring" / "mooring.sqlite3").read_text() == "my tasks"
    assert other_icon.read_text() == "theirs"


def test_install_refuses_a_missing_bundle_and_changes_nothing(tmp_path: Path) -> None:
    user = Home(tmp_path)
    done = user.run("install", str(tmp_path / "nowhere"))
    assert done.returncode != 0
    assert "make package" in done.stderr
    assert not user.data.exists()


def test_a_users_own_mooring_command_is_left_alone(tmp_path: Path) -> None:
    user = Home(tmp_path)
    user.bin.mkdir()
    (user.bin / "mooring").write_text("#!/bin/sh\necho mine\n")
    assert user.run("install", str(fake_bundle(tmp_path / "b", "v1"))).returncode == 0
    assert (user.bin / "mooring").read_text() == "#!/bin/sh\necho mine\n"
    assert user.run("uninstall").returncode == 0
    assert (user.bin / "mooring").read_text() == "#!/bin/sh\necho mine\n"
