"""``mooring tools show SERVER TOOL``: how to call a tool, from the real servers' own schemas.

The real CLI runs as processes against the bundled demo server, the reference "everything"
server from npm and a hostile peer whose every string tries to act on the terminal.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

from tests.e2e.conftest import SAMPLES, Cli, add_demo
from tests.helpers.node_peers import everything_server, node
from tests.mcp.servers import PEERS

RAW = ("\x1b", "\x07", "\x00", "\x08", "\u202e", "\u2067", "\u202c", "\u2069")
"""Characters that must never reach a terminal from a server."""


def add_everything(cli: Cli) -> None:
    args = ["servers", "add", "everything", "--command", node()]
    args += [f"--arg={everything_server()}", "--arg=stdio"]
    assert cli.run(*args).returncode == 0


def example_arguments(out: str, server: str, tool: str) -> dict[str, object] | None:
    """The arguments of the example ``mooring call`` line in ``out`` (None: it has none)."""
    [line] = [line.strip() for line in out.splitlines() if "mooring call " in line]
    words = shlex.split(line)
    assert words[:4] == ["mooring", "call", server, tool], line
    if len(words) == 4:
        return None
    assert words[4] == "--args", line
    value = json.loads(words[5])
    assert isinstance(value, dict)
    return value


def test_tools_show_says_what_a_demo_tool_takes_and_how_to_call_it(
    cli: Cli, tmp_path: Path
) -> None:
    add_demo(cli, tmp_path)
    done = cli.run("tools", "show", "demo", "import_suppliers")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "demo/import_suppliers" in out
    assert "Import suppliers from a CSV file" in out  # the title
    assert "Re-importing the same file skips suppliers" in out  # the whole description
    assert re.search(r"^\s+path\s+string, required$", out, re.MULTILINE), out
    assert "CSV file to import (absolute, or relative to the samples directory)" in out
    assert re.search(r"read-only\s+no\s+\(readOnlyHint: false\)", out), out
    assert re.search(r"destructive\s+no\s+\(destructiveHint: false\)", out), out
    assert re.search(r"idempotent\s+yes\s+\(idempotentHint: true\)", out), out
    assert re.search(r"open world\s+no\s+\(openWorldHint: false\)", out), out
    assert "demo is not trusted: claims only" in out
    example = example_arguments(out, "demo", "import_suppliers")
    assert example is not None
    assert set(example) == {"path"}

    # The example runs as it is written (with a real file for the placeholder).
    called = cli.json(
        "call",
        "demo",
        "import_suppliers",
        "--args",
        json.dumps({"path": str(SAMPLES / "suppliers_clean.csv")}),
    )
    assert called["state"] == "completed", called

    shown = cli.json("tools", "show", "demo", "import_suppliers")
    assert shown["server"] == "demo"
    assert shown["name"] == "import_suppliers"
    assert shown["title"] == "Import suppliers from a CSV file"
    assert shown["input_schema"]["required"] == ["path"]
    assert shown["annotations"] == {
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert shown["trusted"] is False
    assert shown["example"].startswith("mooring call demo import_suppliers --args ")


def test_tools_show_lists_optional_fields_with_bounds_and_defaults(
    cli: Cli, tmp_path: Path
) -> None:
    add_demo(cli, tmp_path)
    done = cli.run("tools", "show", "demo", "list_suppliers")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert re.search(r"^\s+limit\s+integer, optional, 1\.\.500, default 50$", out, re.MULTILINE), (
        out
    )
    assert re.search(r"^\s+after\s+string or null, optional, default null$", out, re.MULTILINE), out
    assert "Page size" in out
    assert "Substring of the id or name" in out
    # Nothing is required: the example call needs no arguments.
    assert example_arguments(out, "demo", "list_suppliers") is None

    bare = cli.run("tools", "show", "demo", "list_sample_files")
    assert bare.returncode == 0, bare.stderr
    assert "no arguments" in bare.stdout
    assert example_arguments(bare.stdout, "demo", "list_sample_files") is None


def test_tools_show_lists_the_choices_and_defaults_of_an_everything_tool(cli: Cli) -> None:
    add_everything(cli)
    done = cli.run("tools", "show", "everything", "get-annotated-message")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Get Annotated Message Tool" in out
    assert re.search(r"^\s+messageType\s+string, required$", out, re.MULTILINE), out
    assert "Type of message to demonstrate different annotation patterns" in out
    assert re.search(r"choices: error \| success \| debug", out), out
    assert re.search(r"^\s+includeImage\s+boolean, optional, default false$", out, re.MULTILINE)
    assert re.search(r"read-only\s+yes\s+\(readOnlyHint: true\)", out), out
    assert example_arguments(out, "everything", "get-annotated-message") == {"messageType": "error"}

    gzip = cli.run("tools", "show", "everything", "gzip-file-as-resource")
    assert gzip.returncode == 0, gzip.stderr
    assert re.search(r"outputType\s+string, optional, default \"resourceLink\"", gzip.stdout)
    assert re.search(r"choices: resourceLink \| resource", gzip.stdout), gzip.stdout


def test_an_unknown_server_or_tool_is_a_clear_error(cli: Cli, tmp_path: Path) -> None:
    add_demo(cli, tmp_path)
    no_tool = cli.run("tools", "show", "demo", "import_supplier")
    assert no_tool.returncode == 1, (no_tool.stdout, no_tool.stderr)
    assert "mooring: demo has no tool called 'import_supplier'." in no_tool.stderr
    assert "mooring tools list demo" in no_tool.stderr
    assert no_tool.stdout == ""

    no_server = cli.run("tools", "show", "nowhere", "import_suppliers")
    assert no_server.returncode == 1, (no_server.stdout, no_server.stderr)
    assert "mooring: No server called 'nowhere'." in no_server.stderr
    # The same code as `tools list` gives an unknown server.
    assert cli.run("tools", "list", "nowhere").returncode == no_server.returncode


def test_a_hostile_tools_text_is_shown_inert_and_json_keeps_it(cli: Cli) -> None:
    added = cli.run(
        "servers",
        "add",
        "h",
        "--trusted",
        "--command",
        sys.executable,
        f"--arg={PEERS / 'hostile_server.py'}",
    )
    assert added.returncode == 0, added.stderr
    done = cli.run("tools", "show", "h", "shout\x1b[5m")
    assert done.returncode == 0, done.stderr
    assert "h/shout\\x1b[5m" in done.stdout
    assert "Blinks \\x1b[2J\\x1b[Hbad\\x1b]0;pwned\\x07" in done.stdout
    assert "<U+202E>txt.exe" in done.stdout
    assert not any(char in done.stdout + done.stderr for char in RAW)
    assert "h is trusted, so Mooring relies on them" in done.stdout
    shown = cli.json("tools", "show", "h", "shout\x1b[5m")
    assert shown["name"] == "shout\x1b[5m"
    assert shown["description"].startswith("Blinks \x1b[2J\x1b[Hbad\x1b]0;pwned\x07")
    assert shown["trusted"] is True
