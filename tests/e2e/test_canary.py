"""Canaries: distinctive secrets, arguments and results never leak where they must not.

Secrets (header tokens) may live only in the keyring: never in SQLite, logs or traces.
Tool arguments and results belong in the conversation store (SQLite), never in logs or traces.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.conftest import Cli, HttpDemo

pytestmark = pytest.mark.usefixtures("fresh_processes")  # new interpreters, as a user's

SECRET = "canary-SECRET-5f0c9e1ab7"
ARG = "canary-ARG-3d81c2"
RESULT = "CANARY-RESULT-9B4E77"


def everything_under(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_secrets_arguments_and_results_stay_where_they_belong(
    cli: Cli, http_demo_factory: Callable[..., HttpDemo], tmp_path: Path
) -> None:
    demo = http_demo_factory()
    source = tmp_path / f"{ARG}.csv"
    source.write_text(
        f"supplier_id,name,country,email,phone\n{RESULT},Canary GmbH,DE,orders@example.org,+49 1\n"
    )
    added = cli.run(
        "servers", "add", "web", "--url", demo.url, "--header", f"Authorization=Bearer {SECRET}"
    )
    assert added.returncode == 0, added.stderr
    assert cli.run("rules", "add", "web", "*", "allow").returncode == 0
    shown = cli.json("call", "web", "import_suppliers", "--args", f'{{"path": "{source}"}}')
    assert shown["state"] == "completed"
    assert RESULT in str(shown["result"])  # the user does get the result
    cli.run("tasks", "show", shown["id"])
    cli.run("reconcile")
    export = cli.run("traces", "export", "--task", shown["id"])
    assert export.returncode == 0
    assert "mooring.task.run" in export.stdout

    files = everything_under(cli.data_dir)
    database = {p: b for p, b in files.items() if "mooring.sqlite3" in p.name}
    logs = {p: b for p, b in files.items() if "logs" in p.parts}
    traces = {p: b for p, b in files.items() if "traces" in p.parts}
    assert database
    assert traces
    assert logs
    for path, data in files.items():
        assert SECRET.encode() not in data, f"the secret leaked into {path}"
    for path, data in {**logs, **traces}.items():
        assert ARG.encode() not in data, f"a tool argument leaked into {path}"
        assert RESULT.encode() not in data, f"a tool result leaked into {path}"
    assert SECRET not in export.stdout
    assert ARG not in export.stdout
    assert RESULT not in export.stdout
    # And the secret is where it belongs: the (test) keyring.
    assert SECRET in (cli.data_dir.parent / "keyring.json").read_text()
