"""The first use of a data folder from the CLI alone: the bundled demo server is there."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import SAMPLES, Cli

pytestmark = pytest.mark.usefixtures("fresh_processes")  # new interpreters, as a user's


def fresh(tmp_path: Path) -> Cli:
    """A data folder no face has used yet, with the product's defaults (demo server on)."""
    return Cli(tmp_path / "fresh")


def test_the_readme_call_works_on_a_cli_only_machine(tmp_path: Path) -> None:
    cli = fresh(tmp_path)
    [server] = cli.json("servers", "list")
    assert (server["name"], server["builtin"]) == ("demo", True)
    assert str(cli.data_dir) in " ".join(server["args"])  # its store lives in the data folder
    assert cli.run("rules", "add", "demo", "import_suppliers", "allow").returncode == 0
    done = cli.json(
        "call",
        "demo",
        "import_suppliers",
        "--args",
        json.dumps({"path": str(SAMPLES / "suppliers_clean.csv")}),
    )
    assert done["state"] == "completed"


def test_a_users_own_demo_server_gets_no_bundled_twin(tmp_path: Path) -> None:
    cli = fresh(tmp_path)
    assert cli.run("settings", "set", "demo_server.enabled", "false").returncode == 0
    added = cli.run("servers", "add", "demo", "--command", sys.executable)
    assert added.returncode == 0, added.stderr
    assert cli.run("settings", "set", "demo_server.enabled", "true").returncode == 0
    servers = cli.json("servers", "list")
    assert [(s["name"], s["command"], s["builtin"]) for s in servers] == [
        ("demo", sys.executable, False)
    ]
