"""Global options mean the same wherever they stand on the command line, and what the parser
prints does not depend on which of its parsers a command line made."""

from __future__ import annotations

import argparse

import pytest

from mooring.cli.parser import build_parser


@pytest.mark.parametrize(
    "argv",
    [
        ["--data-dir", "D", "--json", "--log-json", "tasks", "show", "X"],
        ["tasks", "show", "X", "--data-dir", "D", "--json", "--log-json"],
        ["tasks", "--json", "--data-dir", "D", "show", "--log-json", "X"],
        ["--json", "tasks", "show", "X", "--data-dir", "D", "--log-json"],
    ],
)
def test_global_options_are_read_in_every_position(argv: list[str]) -> None:
    args = build_parser().parse_args(argv)
    assert (args.data_dir, args.json, args.log_json, args.id) == ("D", True, True, "X")


def test_without_global_options_the_defaults_hold() -> None:
    args = build_parser().parse_args(["doctor"])
    assert (args.data_dir, args.json, args.log_json) == (None, False, False)


def test_the_option_after_the_command_wins_over_the_one_before() -> None:
    args = build_parser().parse_args(["--data-dir", "A", "doctor", "--data-dir", "B"])
    assert args.data_dir == "B"


def made_whole() -> argparse.ArgumentParser:
    """The parser with every command's and action's parser made before it parses (as the
    reference's generator walks it), not only the ones a command line names."""
    parser = build_parser()

    def make(below: argparse.ArgumentParser) -> None:
        for action in below._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    make(sub)

    make(parser)
    return parser


def said(
    parser: argparse.ArgumentParser, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> tuple[str | int | None, str, str]:
    """How parsing ``argv`` ends: the exit code, then what went to stdout and stderr."""
    with pytest.raises(SystemExit) as ended:
        parser.parse_args(argv)
    out, err = capsys.readouterr()
    return ended.value.code, out, err


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["--version"],
        ["nope"],
        ["--bogus"],
        ["--data-dir"],
        ["tasks"],
        ["tasks", "--help"],
        ["tasks", "nope"],
        ["tasks", "list", "--help"],
        ["tasks", "list", "--limit", "x"],
        ["tasks", "list", "extra"],
        ["tasks", "answer", "ID", "--decline", "--cancel"],
        ["servers", "add", "--help"],
        ["servers", "add", "name"],
        ["rules", "add", "s", "t", "maybe"],
        ["providers", "add", "p"],
        ["conversations", "export", "--help"],
        ["issues", "dismiss"],
        ["chat"],
        ["autostart", "maybe"],
    ],
)
def test_help_usage_and_errors_read_as_with_every_parser_made(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    # A command line makes only the parsers it names; what it prints must not depend on that.
    assert said(build_parser(), argv, capsys) == said(made_whole(), argv, capsys)


def test_an_unknown_command_or_action_names_every_choice(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, _, err = said(build_parser(), ["tasks", "nope"], capsys)
    assert err.endswith(
        "argument ACTION: invalid choice: 'nope' (choose from 'list', 'show', 'watch', "
        "'cancel', 'answer', 'abandon', 'retry')\n"
    )
    _, _, err = said(build_parser(), ["nope"], capsys)
    assert "(choose from 'gui', 'doctor', 'servers', " in err
    assert err.endswith("'autostart', 'settings')\n")
