"""``mooring chat --file``: text files go with the message; an image for a model that reads
none, a file over the limit or one that is not there is a clear error, and nothing is sent or
stored. The handlers in-process with the host's real services (the model scripted), and the
real ``mooring`` process for the exit code."""

from __future__ import annotations

from pathlib import Path

import pytest

from mooring.cli.exit_codes import ExitCode
from mooring.core.errors import KnownError
from mooring.core.files import TEXT_LIMIT
from tests.cli.test_chat_cli import Terminal
from tests.cli.test_chat_cli import terminal as terminal
from tests.helpers.processes import run_mooring
from tests.helpers.tiny_png import tiny_png

pytestmark = pytest.mark.anyio


async def test_a_text_file_goes_inside_the_message_and_is_kept_with_it(
    terminal: Terminal, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("Suppliers: 40\n")
    terminal.model.reply("Forty suppliers.")

    done = await terminal.json("chat", "--file", str(notes), "Sum", "up")

    assert done["reply"] == "Forty suppliers."
    [asked] = terminal.model.requests[-1].messages
    assert asked.content == (
        "Sum up\n\n[Attached file notes.txt (text/plain, 14 bytes)]\nSuppliers: 40\n\n"
        "[End of notes.txt]"
    )
    [user, _reply] = await terminal.chat.messages(done["conversation_id"])
    assert [(f.name, f.data) for f in user.files] == [("notes.txt", b"Suppliers: 40\n")]


async def test_an_image_for_a_model_that_reads_none_is_refused_and_nothing_is_kept(
    terminal: Terminal, tmp_path: Path
) -> None:
    image = tmp_path / "red.png"
    image.write_bytes(tiny_png())

    with pytest.raises(KnownError, match="'scripted-model' does not take images"):
        await terminal.run("chat", "--file", str(image), "What", "is", "this?")

    assert terminal.model.requests == []
    assert await terminal.chat.list_conversations() == []


async def test_a_missing_or_too_big_file_is_refused_before_anything_starts(
    terminal: Terminal, tmp_path: Path
) -> None:
    big = tmp_path / "big.log"
    big.write_bytes(b"a" * (TEXT_LIMIT + 1))
    with pytest.raises(KnownError, match="over 200 KB"):
        await terminal.run("chat", "--file", str(big), "hi")
    with pytest.raises(KnownError, match="Cannot read --file"):
        await terminal.run("chat", "--file", str(tmp_path / "absent.txt"), "hi")
    assert terminal.model.requests == []
    assert await terminal.chat.list_conversations() == []


def test_the_mooring_process_refuses_a_too_big_file_with_the_limit_and_a_non_zero_exit(
    tmp_path: Path,
) -> None:
    big = tmp_path / "big.log"
    big.write_bytes(b"a" * (TEXT_LIMIT + 1))
    done = run_mooring("chat", "--file", str(big), "hi", data_dir=tmp_path / "mooring")
    assert done.returncode == ExitCode.PROBLEM
    assert "Cannot attach big.log" in done.stderr
    assert "200 KB" in done.stderr
    assert "Traceback" not in done.stderr
