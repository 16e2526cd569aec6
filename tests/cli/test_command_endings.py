"""How every command ends (the quick listing and the full entry point share this)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from mooring.cli.errors import end_command
from mooring.cli.exit_codes import ExitCode
from mooring.core.errors import KnownError

LOG = logging.getLogger("mooring.test")


def ended(body: object, tmp_path: Path) -> int | None:
    def run() -> int | None:
        if isinstance(body, BaseException):
            raise body
        assert body is None or isinstance(body, int)
        return body

    return end_command(run, lambda: tmp_path / "mooring.log", lambda: LOG)


def test_a_command_keeps_its_own_code(tmp_path: Path) -> None:
    assert ended(4, tmp_path) == 4
    assert ended(None, tmp_path) is None  # the quick path: "not mine, run the full one"


def test_a_known_error_is_said_in_words_with_its_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    error = KnownError("the database is locked", hint="close the other \x1b[31mwindow", code="x")
    assert ended(error, tmp_path) == ExitCode.PROBLEM
    said = capsys.readouterr().err
    assert said.startswith("mooring: the database is locked\n")
    assert "\x1b" not in said  # neutralised


def test_a_usage_error_exits_2(tmp_path: Path) -> None:
    assert ended(KnownError("no such task", code="usage"), tmp_path) == ExitCode.USAGE


def test_ctrl_c_and_a_closed_pipe_end_quietly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert ended(KeyboardInterrupt(), tmp_path) == 130
    assert ended(BrokenPipeError(), tmp_path) == ExitCode.OK
    assert capsys.readouterr().err == ""


def test_a_bug_is_logged_and_the_user_told_where_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="mooring.test"):
        assert ended(RuntimeError("boom"), tmp_path) == ExitCode.INTERNAL
    said = capsys.readouterr().err
    assert "internal error; this is a bug" in said
    assert str(tmp_path / "mooring.log") in said
    assert "Traceback" not in said
    [logged] = caplog.records
    assert logged.exc_info is not None  # the full story is in the log
