"""Global options mean the same wherever they stand on the command line."""

from __future__ import annotations

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
