"""The suite's zygote (tests/helpers/zygote.py) must start commands as a new process would."""

from __future__ import annotations

import codecs
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import zygote

PROBE = "tests.helpers.zygote_probe"
REPO = Path(__file__).resolve().parents[1]


def both(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> list[subprocess.CompletedProcess[str]]:
    """The probe's outcome from the zygote and from a new interpreter, same everything (in
    ``cwd`` with stdin closed, if given)."""
    full = {**os.environ, **(env or {})}
    closed = cwd is not None
    forked = zygote.run(PROBE, args, env=full, timeout=60, cwd=cwd, stdin_closed=closed)
    fresh = subprocess.run(
        [sys.executable, "-m", PROBE, *args],
        capture_output=True,
        text=True,
        env=full,
        cwd=cwd,
        stdin=subprocess.DEVNULL if closed else None,
        timeout=60,
        check=False,
    )
    return [forked, fresh]


def test_a_command_sees_its_own_arguments_environment_and_directory() -> None:
    forked, fresh = both("describe", "x y", env={"ZYGOTE_PROBE": "from the test"})
    seen, expected = json.loads(forked.stdout), json.loads(fresh.stdout)
    assert (seen.pop("parent"), expected.pop("parent")) == (zygote.pid(), os.getpid())
    seen.pop("pid")
    expected.pop("pid")
    assert seen == expected
    assert seen["argv"] == ["describe", "x y"]
    assert seen["marker"] == "from the test"
    assert seen["main"] == "__main__"
    assert seen["threads"] == 1


def test_a_command_elsewhere_with_its_own_python_path_imports_from_there(tmp_path: Path) -> None:
    (tmp_path / "extra").mkdir()
    python_path = {"PYTHONPATH": os.pathsep.join(["extra", str(REPO)])}
    forked, fresh = both("describe", env=python_path, cwd=tmp_path)
    seen, expected = json.loads(forked.stdout), json.loads(fresh.stdout)
    assert seen["path"] == expected["path"]
    assert seen["path"][:3] == [str(tmp_path), str(tmp_path / "extra"), str(REPO)]
    assert seen["cwd"] == str(tmp_path)


def test_exit_codes_errors_and_signals_are_a_new_process_s() -> None:
    forked_runs = {}
    for what in ("fail", "raise", "kill", "late", "bytes"):
        forked, fresh = both(what)
        forked_runs[what] = forked
        assert (forked.returncode, forked.stdout) == (fresh.returncode, fresh.stdout), what
        assert forked.stderr.splitlines()[-1:] == fresh.stderr.splitlines()[-1:], what
    assert forked_runs["kill"].returncode == -15
    late = forked_runs["late"].stdout.splitlines()
    assert late == ["buffered, no newlinefrom a thread", "at exit"]


def test_a_command_past_its_timeout_is_killed_and_says_what_it_wrote() -> None:
    with pytest.raises(subprocess.TimeoutExpired) as timed_out:
        zygote.run(PROBE, ["hang"], env=dict(os.environ), timeout=2)
    said, pid = timed_out.value.output.decode().split()
    assert said == "hanging"
    assert not Path(f"/proc/{pid}").exists()  # killed and reaped before the error was raised


def test_a_command_gets_the_callers_umask() -> None:
    before = os.umask(0o027)
    try:
        forked, fresh = both("describe")
    finally:
        os.umask(before)
    assert json.loads(forked.stdout)["umask"] == json.loads(fresh.stdout)["umask"] == 0o027


def test_an_interpreter_setting_of_its_own_gets_a_new_interpreter() -> None:
    env = {**os.environ, "PYTHONIOENCODING": "latin-1"}
    done = zygote.run(PROBE, ["describe"], env=env, timeout=60)
    encoding = json.loads(done.stdout)["encoding"]
    assert codecs.lookup(encoding) == codecs.lookup("latin-1")  # a fork would keep the zygote's


def test_fresh_processes_are_started_by_the_test_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(zygote.FRESH_VARIABLE, "1")
    done = zygote.run(PROBE, ["describe"], env=dict(os.environ), timeout=60)
    assert json.loads(done.stdout)["parent"] == os.getpid()
