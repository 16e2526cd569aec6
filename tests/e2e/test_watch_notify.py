"""``mooring tasks watch --notify``: watchers are faces of the one engine of their data
folder, which alone polls; notifications come from the engine, once, and never carry what the
work was about.

Real processes throughout: the CLI, the engine it starts, the demo server the engine starts, a
private ``dbus-daemon`` and a small ``org.freedesktop.Notifications`` service that logs what
it was sent.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import SAMPLES, Cli, DemoServer, add_demo
from tests.helpers.notifyd import logged, private_bus, service_process
from tests.helpers.processes import Lines


@pytest.fixture
def notifications(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A session bus with a notification service (another process); yields the bus address
    and the service's log."""
    with (
        private_bus(tmp_path / "bus") as address,
        service_process(address, tmp_path / "notified.jsonl") as log,
    ):
        yield address, log


def start_import(
    cli: Cli, path: Path, env: dict[str, str | None] | None = None, server: str = "demo"
) -> dict[str, object]:
    """Start an import and leave it running (the first such command starts the engine, with
    this command's environment: ``env`` gives it the session bus)."""
    done = cli.run(
        "call",
        server,
        "import_suppliers",
        "--detach",
        "--json",
        "--args",
        json.dumps({"path": str(path)}),
        env=env,
    )
    assert done.returncode == 0, (done.stdout, done.stderr)
    shown = json.loads(done.stdout)
    assert shown["state"] in ("working", "input_required"), shown
    return dict(shown)


def server_pids(demo: DemoServer, method: str) -> set[int]:
    """The processes of the demo server that received ``method`` (one per connection)."""
    return {r["pid"] for r in demo.requests() if r["method"] == method}


def test_two_watchers_one_engine_one_notification(
    cli: Cli, tmp_path: Path, notifications: tuple[str, Path]
) -> None:
    address, log = notifications
    demo = add_demo(cli, tmp_path, checkpoint_delay_ms=150, rows_per_checkpoint=2)
    env: dict[str, str | None] = {"DBUS_SESSION_BUS_ADDRESS": address}
    record = start_import(cli, SAMPLES / "suppliers_clean.csv", env)

    # By id: a watcher that comes after the engine finished the task still shows its end.
    first = cli.start("tasks", "watch", str(record["id"]), "--notify", "--timeout", "90")
    second = cli.start("tasks", "watch", str(record["id"]), "--notify", "--timeout", "90")
    first_out, second_out = Lines(first.stdout).rest(90), Lines(second.stdout).rest(90)
    assert first.wait(timeout=30) == 0, Lines(first.stderr).rest()
    assert second.wait(timeout=30) == 0, Lines(second.stderr).rest()
    assert any("completed" in line for line in first_out)
    assert any("completed" in line for line in second_out)

    # One engine: the call and every tasks/get through its one connection (one server
    # process); neither watcher started a server of its own.
    # (It may have heard the end on the listen stream, without a tasks/get.)
    assert server_pids(demo, "tasks/get") <= server_pids(demo, "tools/call")
    assert len({r["pid"] for r in demo.requests()}) == 1
    # One notification, from the engine, in generic words.
    assert [(n["summary"], n["body"]) for n in logged(log)] == [
        ("Mooring", "A background task completed")
    ]
    assert cli.json("tasks", "show", str(record["id"]))["state"] == "completed"


def test_a_watcher_that_dies_takes_nothing_with_it_and_the_answer_comes_from_elsewhere(
    cli: Cli, tmp_path: Path, notifications: tuple[str, Path]
) -> None:
    address, log = notifications
    demo = add_demo(cli, tmp_path)
    env: dict[str, str | None] = {"DBUS_SESSION_BUS_ADDRESS": address}
    record = start_import(cli, SAMPLES / "suppliers_ambiguous_id.csv", env)  # asks a question

    first = cli.start("tasks", "watch", "--notify", "--timeout", "90")
    Lines(first.stdout).until(lambda line: "answer with" in line)
    first.kill()  # the watcher dies while the task waits: the engine goes on
    first.wait(timeout=30)
    second = cli.start("tasks", "watch", "--notify", "--timeout", "90")
    answered = cli.run(
        "tasks", "answer", str(record["id"]), "--value", json.dumps({"column": "vendor_code"})
    )
    assert answered.returncode == 0, answered.stderr
    Lines(second.stdout).rest(90)
    assert second.wait(timeout=30) == 0, Lines(second.stderr).rest()
    assert cli.json("tasks", "show", str(record["id"]))["state"] == "completed"
    assert len({r["pid"] for r in demo.requests()}) == 1  # one connection throughout
    assert demo.count("tools/call") == 1
    assert [n["body"] for n in logged(log)] == [
        "A task needs your input",
        "A background task completed",
    ]


SERVER = "canary-SRV-41c"
COLUMN = "canary_COL_code"
OTHER = "canary_ALT_id"
RESULT = "canary-RESULT-88d"
FILE = "canary-FILE-6e2"


def test_canary_nothing_about_the_work_reaches_a_notification(
    cli: Cli, tmp_path: Path, notifications: tuple[str, Path]
) -> None:
    address, log = notifications
    source = tmp_path / f"{FILE}.csv"
    source.write_text(
        f"{COLUMN},{OTHER},name,country,email\n"
        f"{RESULT},1,{RESULT} GmbH,DE,orders@example.org\n"
        "V-2,2,Nordic Timber AB,SE,sales@example.org\n"
    )
    add_demo(cli, tmp_path, name=SERVER)
    shown = start_import(cli, source, {"DBUS_SESSION_BUS_ADDRESS": address}, server=SERVER)
    watcher = cli.start("tasks", "watch", "--notify", "--timeout", "90")
    out = Lines(watcher.stdout)
    asked = out.until(lambda line: "input required" in line)
    assert FILE in asked  # the status message names the file; notifications must not
    answered = cli.run(
        "tasks", "answer", str(shown["id"]), "--value", json.dumps({"column": COLUMN})
    )
    assert answered.returncode == 0, answered.stderr
    out.rest(90)
    assert watcher.wait(timeout=30) == 0
    final = cli.json("tasks", "show", str(shown["id"]))
    assert final["state"] == "completed"
    assert RESULT in json.dumps(final["result"])  # the user does get the result, in Mooring

    sent = logged(log)
    assert [(n["summary"], n["body"]) for n in sent] == [
        ("Mooring", "A task needs your input"),
        ("Mooring", "A background task completed"),
    ]
    everything = json.dumps(sent)
    for canary in (SERVER, COLUMN, OTHER, RESULT, FILE, "import_suppliers", str(shown["id"])):
        assert canary not in everything
    assert str(shown["task_id"]) not in everything


def test_a_task_started_after_a_watcher_is_followed_by_the_same_engine(
    cli: Cli, tmp_path: Path, notifications: tuple[str, Path]
) -> None:
    address, _log = notifications
    demo = add_demo(cli, tmp_path)
    waiting = start_import(
        cli, SAMPLES / "suppliers_ambiguous_id.csv", {"DBUS_SESSION_BUS_ADDRESS": address}
    )
    first = cli.start("tasks", "watch", "--notify", "--timeout", "120")
    first_out = Lines(first.stdout)
    first_out.until(lambda line: "answer with" in line)

    later = start_import(cli, SAMPLES / "suppliers_clean.csv")  # started after the watcher
    second = cli.start("tasks", "watch", str(later["id"]), "--timeout", "120")
    second_out = Lines(second.stdout).rest(120)
    assert second.wait(timeout=30) == 0, Lines(second.stderr).rest()
    assert any("completed" in line for line in second_out)

    answered = cli.run(
        "tasks", "answer", str(waiting["id"]), "--value", json.dumps({"column": "vendor_code"})
    )
    assert answered.returncode == 0, answered.stderr
    first_out.rest(120)
    assert first.wait(timeout=30) == 0
    # Each task was read (a tasks/get, or a listen request that names it: the server answers
    # it with the task's state, then reports its changes) by the engine's one connection.
    checks = [(r["pid"], r["taskId"]) for r in demo.requests() if r["method"] == "tasks/get"]
    checks += [
        (r["pid"], task_id)
        for r in demo.requests()
        if r["method"] == "subscriptions/listen"
        for task_id in r.get("taskIds", [])
    ]
    assert {task_id for _pid, task_id in checks} == {waiting["task_id"], later["task_id"]}
    assert len({pid for pid, _task_id in checks}) == 1
