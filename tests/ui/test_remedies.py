"""What to do about a problem is worded by each face: the window never names a command line,
the command line names its commands; every remedy a service can raise has words in both."""

from __future__ import annotations

import pytest

from mooring.cli.remedies import remedy_words as cli_words
from mooring.core.errors import Remedy
from mooring.ui.remedies import remedy_words as window_words


@pytest.mark.parametrize("remedy", list(Remedy))
def test_every_remedy_is_said_in_the_window_without_a_command(remedy: Remedy) -> None:
    said = window_words(remedy, ("local", "work"))
    assert said
    assert "mooring " not in said
    assert "`" not in said
    assert "--" not in said


@pytest.mark.parametrize("remedy", list(Remedy))
def test_every_remedy_is_said_on_the_command_line(remedy: Remedy) -> None:
    assert cli_words(remedy, ("local", "work"))


def test_a_hostile_name_in_the_window_words_is_shown_inert() -> None:
    said = window_words(Remedy.PROVIDER_KEY, ("evil\u202e\n<b>x</b>",))
    assert "\u202e" not in said
    assert "\n" not in said
