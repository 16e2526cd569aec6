"""``make package`` builds with the ``package`` extra and always runs the bundle's smoke test;
``make install-desktop`` / ``uninstall-desktop`` go through ``packaging/desktop.sh`` (read from
``make -n``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.packaging.test_makefile import planned

needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


@needs_make
def test_make_package_builds_from_the_spec_then_smoke_tests_the_bundle(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    commands = planned("package", venv)
    assert f"{venv}/bin/python -m pip install --quiet -e '.[package]'" in commands
    assert not any("[test]" in c for c in commands)  # building needs no test tools
    [build] = [c for c in commands if "/bin/pyinstaller " in c]
    assert build.endswith("packaging/mooring.spec")
    assert "--distpath dist" in build
    smoke = commands.index("bash packaging/smoke.sh dist/mooring")
    assert smoke > commands.index(build)


@needs_make
def test_make_test_does_not_build_the_bundle(tmp_path: Path) -> None:
    assert not any("/bin/pyinstaller" in c for c in planned("test", tmp_path / "venv"))


@needs_make
def test_uninstall_desktop_runs_the_installer_script(tmp_path: Path) -> None:
    assert planned("uninstall-desktop", tmp_path / "venv") == [
        "bash packaging/desktop.sh uninstall"
    ]
