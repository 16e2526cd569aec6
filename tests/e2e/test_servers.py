"""Configuring servers: other hosts' files, tools with their annotations, failures in words."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.e2e.conftest import Cli


def test_a_claude_desktop_config_is_imported_with_reasons_for_skips(
    cli: Cli, tmp_path: Path
) -> None:
    config = tmp_path / "claude_desktop_config.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "demo": {
                        "command": sys.executable,
                        "args": ["-m", "mooring.demo_server", "--store", str(tmp_path / "s.db")],
                    },
                    "remote": {"url": "http://127.0.0.1:9/mcp"},
                    "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
                    "broken": {"args": ["no command"]},
                }
            }
        )
    )
    result = cli.json("servers", "import", str(config))
    assert sorted(s["name"] for s in result["added"]) == ["demo", "remote"]
    skipped = {s["name"]: s["reason"] for s in result["skipped"]}
    assert set(skipped) == {"old", "broken"}
    assert "SSE" in skipped["old"] or "sse" in skipped["old"]
    listed = cli.json("servers", "list")
    assert sorted(s["name"] for s in listed) == ["demo", "remote"]
    # Importing again adds nothing and says why.
    again = cli.json("servers", "import", str(config))
    assert again["added"] == []


def test_tools_are_listed_with_annotations_and_a_dead_server_is_explained(
    cli: Cli, tmp_path: Path
) -> None:
    store = tmp_path / "s.db"
    assert (
        cli.run(
            "servers",
            "add",
            "demo",
            "--command",
            sys.executable,
            "--arg=-m",
            "--arg=mooring.demo_server",
            f"--arg=--store={store}",
        ).returncode
        == 0
    )
    ghost = tmp_path / "ghost-server"
    ghost.write_text("#!/bin/sh\nexit 3\n")
    ghost.chmod(0o755)
    assert cli.run("servers", "add", "ghost", "--command", str(ghost)).returncode == 0
    ghost.unlink()  # uninstalled after it was added: the server is now unusable
    done = cli.run("tools", "list", "--json")
    assert done.returncode == 1  # one server is unusable
    tools = {t["name"]: t for t in json.loads(done.stdout)}
    assert tools["list_suppliers"]["read_only"] is True
    assert tools["delete_supplier"]["destructive"] is True
    assert tools["import_suppliers"]["tasks"] is True
    assert "ghost: failed" in done.stderr
    assert "Traceback" not in done.stderr


def test_servers_import_without_a_file_lists_what_the_configs_found_hold(
    cli: Cli, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    cursor = home / ".cursor" / "mcp.json"
    cursor.parent.mkdir(parents=True)
    cursor.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "notes": {"command": "notes-server", "env": {"NOTES_TOKEN": "t0ken"}},
                    "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
                }
            }
        )
    )
    env: dict[str, str | None] = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    found = cli.run("servers", "import", "--json", env=env)
    assert found.returncode == 0, found.stderr
    [listed] = json.loads(found.stdout)
    assert listed["app"] == "Cursor"
    assert listed["path"] == str(cursor)
    assert [(s["name"], s["status"]) for s in listed["servers"]] == [
        ("notes", "new"),
        ("old", "cannot be imported"),
    ]
    assert cli.json("servers", "list") == []  # listing changes nothing

    added = cli.json("servers", "import", str(cursor))
    assert [s["name"] for s in added["added"]] == ["notes"]
    assert added["added"][0]["env"] == {"NOTES_TOKEN": ""}  # the value is in the keyring
    for path in cli.data_dir.rglob("*"):
        if path.is_file():
            assert b"t0ken" not in path.read_bytes(), path
    again = cli.run("servers", "import", env=env)
    assert "already present" in again.stdout
