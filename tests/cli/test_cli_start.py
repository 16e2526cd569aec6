"""A quick command loads only what it uses: no window toolkit, model SDKs, MCP SDK, keyring or
tracing SDK just to list tasks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = (
    "PySide6",
    "qasync",
    "openai",
    "anthropic",
    "mcp",
    "httpx",
    "desktop_notifier",
    "dbus_fast",
    "keyring",
    "opentelemetry.sdk",
    "google.protobuf",
)

PROBE = """
import json, sys
from mooring.bootstrap import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def loaded_by(data_dir: Path, *args: str) -> tuple[int, set[str], str]:
    env = {**os.environ, "MOORING_DATA_DIR": str(data_dir)}
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    *said, last = done.stdout.splitlines()
    report = json.loads(last)
    return report["code"], set(report["modules"]), "\n".join(said)


@pytest.mark.parametrize("command", [("tasks", "list"), ("tasks", "list", "--json")])
def test_listing_tasks_loads_no_heavy_package(tmp_path: Path, command: tuple[str, ...]) -> None:
    data_dir = tmp_path / "mooring"
    first_code, _first, _ = loaded_by(data_dir, *command)  # creates and migrates the database
    code, modules, said = loaded_by(data_dir, *command)
    assert (first_code, code) == (0, 0)
    assert "No tasks" in said or said.strip() == "[]"
    loaded = sorted(m for m in HEAVY if m in modules)
    assert loaded == []
    assert "alembic" not in modules  # an up-to-date database needs no migration machinery
