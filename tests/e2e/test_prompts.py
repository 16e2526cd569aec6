"""``mooring prompts list/get``: the prompts real servers offer, through the real CLI."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.e2e.conftest import Cli, add_demo
from tests.e2e.test_tool_show import RAW
from tests.helpers.node_peers import everything_server, node
from tests.mcp.servers import PEERS


def test_prompts_list_names_the_demo_prompt_and_its_arguments(cli: Cli, tmp_path: Path) -> None:
    add_demo(cli, tmp_path)

    listed = cli.json("prompts", "list")
    [prompt] = [p for p in listed if p["name"] == "summarise_import"]
    assert prompt["server_alias"] == "demo"
    assert prompt["title"] == "Summarise an import"
    assert "summarise what was rejected" in prompt["description"]
    assert [(a["name"], a["required"]) for a in prompt["arguments"]] == [
        ("path", True),
        ("focus", False),
    ]

    done = cli.run("prompts", "list", "demo")
    assert done.returncode == 0, done.stderr
    assert "demo/summarise_import  Ask the model to import" in done.stdout
    assert "    path (required)  The CSV file to import" in done.stdout


def test_prompts_get_fills_the_arguments_in_and_refuses_without_a_required_one(
    cli: Cli, tmp_path: Path
) -> None:
    add_demo(cli, tmp_path)

    got = cli.json(
        "prompts", "get", "demo", "summarise_import", "--arg", "path=a.csv", "--arg", "focus=ids"
    )
    assert got["messages"] == [
        {
            "role": "user",
            "text": "Import the supplier file a.csv with import_suppliers, then summarise the "
            "result, looking most at ids.",
        }
    ]

    done = cli.run("prompts", "get", "demo", "summarise_import", "--arg", "path=b.csv")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "[user]",
        "Import the supplier file b.csv with import_suppliers, then summarise the result.",
    ]

    refused = cli.run("prompts", "get", "demo", "summarise_import")
    assert refused.returncode != 0
    assert "needs path" in refused.stderr

    unknown = cli.run("prompts", "get", "demo", "no_such_prompt")
    assert unknown.returncode != 0
    assert "no_such_prompt" in unknown.stderr


def test_an_everything_prompt_s_embedded_resources_come_as_text_or_a_description(
    cli: Cli,
) -> None:
    entry = everything_server()
    args = ["servers", "add", "everything", "--command", node(), f"--arg={entry}", "--arg=stdio"]
    assert cli.run(*args).returncode == 0

    listed = {p["name"]: p for p in cli.json("prompts", "list", "everything")}
    assert [(a["name"], a["required"]) for a in listed["args-prompt"]["arguments"]] == [
        ("city", True),
        ("state", False),
    ]

    text = cli.json(
        "prompts",
        "get",
        "everything",
        "resource-prompt",
        "--arg",
        "resourceType=Text",
        "--arg",
        "resourceId=1",
    )
    embedded = text["messages"][1]["text"]
    assert embedded.startswith("[resource demo://resource/dynamic/text/1]\nResource 1: ")

    blob = cli.json(
        "prompts",
        "get",
        "everything",
        "resource-prompt",
        "--arg",
        "resourceType=Blob",
        "--arg",
        "resourceId=2",
    )
    assert blob["messages"][1]["text"] == "[binary resource demo://resource/dynamic/blob/2]"


def test_a_hostile_prompt_is_shown_inert_and_json_keeps_it(cli: Cli) -> None:
    hostile = f"--arg={PEERS / 'hostile_server.py'}"
    assert cli.run("servers", "add", "h", "--command", sys.executable, hostile).returncode == 0

    listed = cli.run("prompts", "list", "h")
    assert listed.returncode == 0, listed.stderr
    assert "h/whisper\\x1b[5m  Prompts <b>\\x1b[2J\\x1b[Hbad\\x1b]0;pwned\\x07" in listed.stdout
    got = cli.run("prompts", "get", "h", "whisper\x1b[5m", "--arg", "topic=x")
    assert got.returncode == 0, got.stderr
    assert "About x \\x1b[2J\\x1b[Hbad" in got.stdout
    assert "<U+202E>txt.exe" in got.stdout
    assert not any(char in listed.stdout + got.stdout + got.stderr for char in RAW)

    [prompt] = cli.json("prompts", "list", "h")
    assert prompt["name"] == "whisper\x1b[5m"  # exact for scripts
