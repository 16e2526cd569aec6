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
    # Polling alone: a listen stream authorised before the token expired would carry the
    # task to its end without another request.
    demo = http_demo_factory(
        fault_token_expires_after=4, checkpoint_delay_ms=300, fault_no_task_notifications=1
    )
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


def test_a_cancel_after_completion_says_too_late_only_if_it_reached_the_server(
    cli: Cli, http_demo_factory: Callable[..., HttpDemo]
) -> None:
    demo = http_demo_factory()
    add_web(cli, demo)
    shown = cli.json(
        "call", demo.name, "import_suppliers", "--detach", "--args", f'{{"path": "{CLEAN}"}}'
    )
    # The server finishes this small import on its own while the engine follows it; the
    # cancel either finds it ended (nothing sent) or reaches the server after the end.
    record = cli.json("tasks", "cancel", shown["id"])
    assert record["state"] == "completed"
    assert record["result"]
    sent = demo.count("tasks/cancel")
    assert record["cancel_delivered"] is (sent == 1)
    if sent:
        assert record["reason"] == "Completed: the cancel arrived too late."
    else:
        assert record["reason"] is None or "too late" not in record["reason"]
    assert demo.count("tools/call") == 1


def test_a_dropped_stream_and_a_restarted_server_lose_nothing(
    cli: Cli, http_demo_factory: Callable[..., HttpDemo]
) -> None:
    import signal

    from tests.e2e.conftest import start_http_demo, stop_http

    demo = http_demo_factory(checkpoint_delay_ms=150, rows_per_checkpoint=2, lease_ms=300)
    add_web(cli, demo)
    shown = cli.json(
        "call", demo.name, "import_suppliers", "--detach", "--args", f'{{"path": "{CLEAN}"}}'
    )
    watcher = cli.start("tasks", "watch", shown["id"])
    assert watcher.stdout is not None
    first = watcher.stdout.readline()  # the watcher is following (and listening) now
    assert shown["id"][:8] in first
    # The server dies hard: the notification stream and any request in flight drop.
    assert demo.process is not None
    demo.process.send_signal(signal.SIGKILL)
    demo.process.wait(timeout=20)
    port = demo.url.rsplit(":", 1)[1].split("/")[0]
    again = start_http_demo(
        demo.store.parent,
        {"checkpoint_delay_ms": 150, "rows_per_checkpoint": 2, "lease_ms": 300, "port": port},
        name=demo.name,
    )
    try:
        assert again.url == demo.url
        out, err = watcher.communicate(timeout=120)
        assert watcher.returncode == 0, (out, err)
        final = cli.json("tasks", "show", shown["id"])
        assert final["state"] == "completed"
        assert final["task_id"] == shown["task_id"]
        assert demo.count("tools/call") == 1  # both processes log to the same file
    finally:
        stop_http(again)
