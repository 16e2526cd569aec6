"""Accounts: signing in with OAuth from the CLI, tasks bound to their account."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import httpx2
import pytest

from tests.e2e.conftest import SAMPLES, Cli, HttpDemo, add_demo
from tests.helpers.authserver import AuthServer, running_auth_server

CLEAN = str(SAMPLES / "suppliers_clean.csv")


@pytest.fixture
def auth() -> Iterator[AuthServer]:
    with running_auth_server() as server:
        yield server


def open_in_browser(url: str) -> None:
    """What a browser does: follow the redirects back to Mooring's loopback listener."""
    with httpx2.Client(timeout=30) as client:
        page = client.get(url, follow_redirects=True)
    assert page.status_code == 200, page.text


def test_login_then_a_task_runs_on_an_oauth_server(
    cli: Cli, http_demo_factory: Callable[..., HttpDemo], auth: AuthServer
) -> None:
    demo = http_demo_factory(oauth_issuer=auth.issuer)
    assert cli.run("servers", "add", "web", "--url", demo.url).returncode == 0
    assert cli.run("rules", "add", "web", "*", "allow").returncode == 0

    # Not signed in: the call cannot run, and says so (no browser opens from a call).
    refused = cli.json(
        "call", "web", "import_suppliers", "--args", f'{{"path": "{CLEAN}"}}', expect=5
    )
    assert "sign-in needed" in refused["reason"].lower()
    assert demo.count("tools/call") == 0

    login = cli.start("accounts", "login", "web")
    assert login.stderr is not None
    url = None
    for line in login.stderr:  # the CLI prints the address to open, then waits
        if line.strip().startswith("http"):
            url = line.strip()
            break
    assert url is not None
    open_in_browser(url)
    assert login.wait(timeout=60) == 0
    assert [a["signed_in"] for a in cli.json("accounts", "list", "web")] == [True]

    shown = cli.json("call", "web", "import_suppliers", "--args", f'{{"path": "{CLEAN}"}}')
    assert shown["state"] == "completed"
    assert demo.count("tools/call") == 1
    # The tokens are in the keyring, not in Mooring's files.
    tokens = {s for s in auth.issued_secrets() if len(s) > 8}
    for path in cli.data_dir.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not any(t.encode() in data for t in tokens), path


def test_a_removed_account_orphans_its_tasks_instead_of_using_another(
    cli: Cli, tmp_path: Path
) -> None:
    add_demo(cli, tmp_path, checkpoint_delay_ms=60_000, rows_per_checkpoint=1)
    assert cli.run("accounts", "add", "demo", "work").returncode == 0
    shown = cli.json(
        "call",
        "demo",
        "import_suppliers",
        "--account",
        "work",
        "--detach",
        "--args",
        f'{{"path": "{CLEAN}"}}',
    )
    assert cli.run("accounts", "remove", "demo", "work").returncode == 0
    report = cli.json("reconcile")
    assert report["orphaned"] == [shown["id"]]
    [issue] = cli.json("issues")
    assert "account was removed" in issue["title"]
    still = cli.json("tasks", "show", shown["id"])
    assert still["state"] == "working"  # not failed, not asked about with other credentials
    dismissed = cli.run("issues", "dismiss", issue["id"][:8])
    assert dismissed.returncode == 0, dismissed.stderr
    assert cli.json("issues") == []
