"""A server's form on a terminal (a real pseudo-terminal): every field's description, and its
choices numbered with their titles, a choice typed by its value or its number.

Two real paths: the reference "everything" server's 13-field form asked during a plain
``mooring call``, and the demo server's task question answered with ``mooring tasks answer``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.e2e.conftest import SAMPLES, Cli, add_demo
from tests.e2e.test_terminal import Terminal
from tests.helpers.node_peers import everything_server, node

AMBIGUOUS = str(SAMPLES / "suppliers_ambiguous_id.csv")


def add_everything(cli: Cli) -> None:
    args = ["servers", "add", "everything", "--command", node()]
    args += [f"--arg={everything_server()}", "--arg=stdio"]
    assert cli.run(*args).returncode == 0
    assert cli.run("rules", "add", "everything", "*", "allow").returncode == 0


def answer(term: Terminal, shown: list[str], typed: str) -> None:
    """Wait until every text of ``shown`` (each shown once in the whole form) has appeared;
    then type ``typed``."""
    for text in shown:
        term.expect(text)
    term.type(typed)


def test_the_everything_form_shows_descriptions_and_titled_choices(cli: Cli) -> None:
    add_everything(cli)
    term = Terminal(cli, "call", "everything", "trigger-elicitation-request")
    try:
        term.expect("Please provide inputs for the following fields:")
        answer(term, ["String (required)", "Your full, legal name"], "Ada Lovelace")
        answer(term, ["Boolean", "Agree to the terms and conditions"], "yes")
        answer(term, ["Favorite first line of a story", "default It was a dark"], "")
        answer(term, ["Your email address (will be verified"], "ada@example.com")
        answer(term, ["Portfolio / personal website"], "https://ada.example")
        answer(term, ["Your date of birth"], "1815-12-10")
        answer(term, ["Your favorite integer (do not give us", "1..100, default 42"], "")
        answer(term, ["Favorite number (there are no wrong answers)"], "7.5")
        # An untitled enum: its values, numbered; typed by value.
        answer(term, ["Choose your favorite friend", "3) Joey", "6) Phoebe"], "Chandler")
        # A multi-select enum, by numbers.
        answer(term, ["Choose your favorite instruments", "2) Piano", "1 to 3 of them"], "2, 3")
        # oneOf with titles: the titles shown, a number typed.
        answer(term, ["Choose your favorite hero", "2) Green Lantern", "3) Wonder Woman"], "2")
        # 2 is not one of the fish: the prompt says so and asks again.
        answer(term, ["Choose your favorite types of fish", "1) Tuna", "3) Trout"], "7")
        answer(term, ["not one of the choices"], "Salmon,3")
        # A legacy enum with enumNames: the names shown, a number typed.
        answer(term, ["Choose your favorite type of pet", "2) Dogs", "5) Reptiles"], "4")
        code = term.finish()
    finally:
        if term.process.poll() is None:
            term.process.kill()
            term.process.wait(timeout=30)
    assert code == 0, term.seen
    flat = re.sub(r"\s+", "", term.seen)
    raw = flat[flat.index("Rawresult:") :]
    for key, value in {
        "name": "Ada Lovelace",
        "check": True,
        "firstLine": "It was a dark and stormy night.",
        "integer": 42,
        "number": 7.5,
        "untitledSingleSelectEnum": "Chandler",
        "untitledMultipleSelectEnum": ["Piano", "Violin"],
        "titledSingleSelectEnum": "hero-2",
        "titledMultipleSelectEnum": ["fish-2", "fish-3"],
        "legacyTitledEnum": "pet-4",
    }.items():
        assert re.sub(r"\s+", "", f'"{key}":{json.dumps(value)}') in raw, (key, raw)


def test_tasks_answer_on_a_terminal_shows_the_description_and_takes_a_number(
    cli: Cli, tmp_path: Path
) -> None:
    add_demo(cli, tmp_path)
    waiting = cli.run("call", "demo", "import_suppliers", "--args", json.dumps({"path": AMBIGUOUS}))
    assert waiting.returncode == 9, (waiting.stdout, waiting.stderr)
    [record] = cli.json("tasks", "list", "--active")
    term = Terminal(cli, "tasks", "answer", record["id"])
    try:
        answer(
            term,
            [
                "Supplier identifier column (required)",
                "The column whose values uniquely identify each supplier",
                "1) vendor_code",
                "2) erp_id",
            ],
            "1",
        )
        code = term.finish()
    finally:
        if term.process.poll() is None:
            term.process.kill()
            term.process.wait(timeout=30)
    assert code == 0, term.seen
    done = cli.json("tasks", "watch", record["id"])
    assert done["state"] == "completed", done
    assert done["inputs"][0]["delivered"] is True
    # The first column was chosen: the suppliers are saved under their vendor codes.
    assert "V-1001" in json.dumps(done["result"]), done["result"]
