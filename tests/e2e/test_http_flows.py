"""Flows over Streamable HTTP against a long-running demo server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Callable

from tests.e2e.conftest import SAMPLES, Cli, HttpDemo

CLEAN = str(SAMPLES / "suppliers_clean.csv")
TOKEN = "mooring-test-token-0c7f1d2e"


def add_web(cli: Cli, demo: HttpDemo, *extra: str) -> None:
    done = cli.run("servers", "add", demo.name, "--url", demo.url, *extra)
    assert done.returncode == 0, done.stderr
    assert cli.run("rules", "add", demo.name, "*", "allow").returncode == 0


def test_a_task_completes_over_http(cli: Cli, http_demo_factory: Callable[..., HttpDemo]) -> None:
    demo = http_demo_factory()
    add_web(cli, demo)
    shown = cli.json("call", demo.name, "import_suppliers", "--args", f'{{"path": "{CLEAN}"}}')
    assert shown["state"] == "completed"
    assert demo.count("tools/call") == 1
    assert demo.count("tasks/get") == shown["poll_count"]


def test_an_expired_token_mid_task_is_sign_in_needed_not_failure(
    cli: Cli, http_demo_factory: Callable[..., HttpDemo]
) -> None:
    demo = http_demo_factory(fault_token_expires_after=4, checkpoint_delay_ms=300)
    add_web(cli, demo, "--header", f"Authorization=Bearer {TOKEN}")
    done = cli.run(
        "call", demo.name, "import_suppliers", "--timeout", "6", "--args", f'{{"path": "{CLEAN}"}}'
    )
    assert done.returncode == 9, (done.stdout, done.stderr)
    assert "sign-in needed" in done.stdout
    [record] = cli.json("tasks", "list", "--active")
    assert record["state"] == "working"
    assert "auth_required" in record["flags"]
    assert demo.count("tools/call") == 1


def test_a_cancel_that_arrives_after_completion_says_so(
    cli: Cli, http_demo_factory: Callable[..., HttpDemo]
) -> None:
    demo = http_demo_factory()
    add_web(cli, demo)
    shown = cli.json(
        "call", demo.name, "import_suppliers", "--detach", "--args", f'{{"path": "{CLEAN}"}}'
    )
    # The long-running server finishes this small import on its own; we have not looked yet.
    done = cli.json("tasks", "cancel", shown["id"])
    assert done["state"] == "completed"
    assert done["cancel_requested"] is True
    assert done["reason"] == "Completed: the cancel arrived too late."
    assert done["result"]
    assert demo.count("tools/call") == 1
