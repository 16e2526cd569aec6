"""Flows over Streamable HTTP against a long-running demo server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Callable

from tests.e2e.conftest import SAMPLES, Cli, HttpDemo
from tests.helpers.processes import appended_line, engine_pid

CLEAN = str(SAMPLES / "suppliers_clean.csv")
AMBIGUOUS = str(SAMPLES / "suppliers_ambiguous_id.csv")
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


def test_a_connection_nothing_needs_is_ended_while_a_question_keeps_its_own(
    cli: Cli, http_demo_factory: Callable[..., HttpDemo]
) -> None:
    assert cli.run("settings", "set", "engine.idle_exit_s", "2").returncode == 0
    asker = http_demo_factory("asker")
    web = http_demo_factory("web")
    add_web(cli, asker)
    add_web(cli, web)
    # A task that waits for the user keeps the engine, and its own session, alive.
    waiting = cli.run("call", "asker", "import_suppliers", "--args", f'{{"path": "{AMBIGUOUS}"}}')
    assert waiting.returncode == 9, waiting.stderr
    engine = engine_pid(cli.data_dir)
    assert engine is not None
    log = cli.data_dir / "logs" / "mooring.log"
    assert cli.json("call", "web", "list_suppliers")["state"] == "completed"
    # Nothing needs web's connection any more: the engine ends it on its own.
    appended_line(log, lambda line: "connection to web ended" in line, timeout=60)
    status = cli.run("agent", "status").stdout
    assert "connection  asker: ready" in status
    assert "web:" not in status
    assert engine_pid(cli.data_dir) == engine  # the engine goes on: it follows the question
    [record] = cli.json("tasks", "list", "--active")
    answered = cli.json("tasks", "answer", record["id"], "--value", '{"column": "vendor_code"}')
    assert answered["delivered"] is True  # through the session that created the task
    # The next call on web opens a new session.
    assert cli.json("call", "web", "list_suppliers")["state"] == "completed"
    assert web.count("tools/call") == 2
    assert asker.count("tools/call") == 1
