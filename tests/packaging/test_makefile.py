"""``make run`` installs what running needs, and no test tools (read from ``make -n``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def planned(target: str, venv: Path) -> list[str]:
    """The commands ``make TARGET`` would run on a machine without ``venv``."""
    done = subprocess.run(
        ["make", "-n", target, f"VENV={venv}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.splitlines()


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_run_installs_the_runtime_only_and_says_when_apt_may_run(tmp_path: Path) -> None:
    commands = planned("run", tmp_path / "venv")
    installs = [c for c in commands if "pip install" in c and "--upgrade pip" not in c]
    assert installs == [f"{tmp_path / 'venv'}/bin/python -m pip install --quiet -e ."]
    assert not any("[test]" in c for c in commands)
    apt = commands.index("bash packaging/system-deps.sh gui")
    assert "apt-get" in commands[apt - 1]  # announced before it may run
    assert commands[-1] == f"{tmp_path / 'venv'}/bin/mooring"


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_test_still_installs_the_test_extra(tmp_path: Path) -> None:
    commands = planned("test", tmp_path / "venv")
    assert f"{tmp_path / 'venv'}/bin/python -m pip install --quiet -e '.[test]'" in commands
