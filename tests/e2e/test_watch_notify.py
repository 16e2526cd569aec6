"""``mooring tasks watch --notify``: the headless monitor, one poller per data folder, and
notifications that never carry what the work was about.

Real processes throughout: the CLI, the demo server it starts, a private ``dbus-daemon`` and a
small ``org.freedesktop.Notifications`` service that logs what it was sent.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import SAMPLES, Cli, add_demo
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


def start_import(cli: Cli, path: Path) -> dict[str, object]:
    shown = cli.json(
        "call", "demo", "import_suppliers", "--detach", "--args", json.dumps({"path": str(path)})
    )
    assert shown["state"] in ("working", "input_required"), shown
    return dict(shown)


def test_two_watchers_one_poller_one_notification(
    cli: Cli, tmp_path: Path, notifications: tuple[str, Path]
) -> None:
    address, log = notifications
    demo = add_demo(cli, tmp_path, checkpoint_delay_ms=150, rows_per_checkpoint=2)
    record = start_import(cli, SAMPLES / "suppliers_clean.csv")
    env = {"DBUS_SESSION_BUS_ADDRESS": address}

    first = cli.start("tasks", "watch", "--notify", "--timeout", "90", env=env)
    first_err = Lines(first.stderr)
    first_err.until(lambda line: "polling 1 task(s)" in line)
    second = cli.start("tasks", "watch", "--notify", "--timeout", "90", env=env)
    second_err = Lines(second.stderr)
    second_err.until(lambda line: "is polling these tasks" in line)
    assert f"pid {first.pid}" in second_err.seen[-1]

    first_out, second_out = Lines(first.stdout).rest(90), Lines(second.stdout).rest(90)
    first_rest = first_err.rest()
    assert first.wait(timeout=30) == 0, first_rest
    assert second.wait(timeout=30) == 0, second_err.rest()
    assert any("completed" in line for line in first_out)
    assert any("completed" in line for line in second_out)  # followed from the database

    # One poller: every tasks/get came through one connection (one server process, started by
    # the first watcher); the second watcher never started a server at all.
    gets = [r for r in demo.requests() if r["method"] == "tasks/get"]
    assert gets
    assert len({r["pid"] for r in gets}) == 1
    calls = {r["pid"] for r in demo.requests() if r["method"] == "tools/call"}
    assert len({r["pid"] for r in demo.requests()} - calls) == 1
    # One notification, from the poller, in generic words.
    assert [(n["summary"], n["body"]) for n in logged(log)] == [
        ("Mooring", "A background task completed")
    ]
    assert cli.json("tasks", "show", str(record["id"]))["state"] == "completed"


def test_a_follower_takes_over_when_the_poller_stops(
    cli: Cli, tmp_path: Path, notifications: tuple[str, Path]
) -> None:
    address, log = notifications
    demo = add_demo(cli, tmp_path)
    record = start_import(cli, SAMPLES / "suppliers_ambiguous_id.csv")  # waits for an answer
    env = {"DBUS_SESSION_BUS_ADDRESS": address}

    first = cli.start("tasks", "watch", "--notify", "--timeout", "90", env=env)
    Lines(first.stdout).until(lambda line: "answer with" in line)  # it polled: a question
    second = cli.start("tasks", "watch", "--notify", "--timeout", "90", env=env)
    second_err = Lines(second.stderr)
    second_err.until(lambda line: "is polling these tasks" in line)
    first.kill()  # the poller dies while the task waits; the kernel frees its lock
    first.wait(timeout=30)
    second_err.until(lambda line: "polling these tasks now" in line)

    answered = cli.run(
        "tasks", "answer", str(record["id"]), "--value", json.dumps({"column": "vendor_code"})
    )
    assert answered.returncode == 0, answered.stderr
    Lines(second.stdout).rest(90)
    assert second.wait(timeout=30) == 0, second_err.rest()
    assert cli.json("tasks", "show", str(record["id"]))["state"] == "completed"
    order = [r["pid"] for r in demo.requests() if r["method"] == "tasks/get"]
    # The first watcher's server, then the second's: never both at once.
    first_pid, second_pid = order[0], order[-1]
    assert first_pid != second_pid
    switch = order.index(second_pid)
    assert set(order[:switch]) == {first_pid}
    assert set(order[switch:]) == {second_pid}
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
    shown = cli.json(
        "call", SERVER, "import_suppliers", "--detach", "--args", json.dumps({"path": str(source)})
    )
    watcher = cli.start(
        "tasks", "watch", "--notify", "--timeout", "90", env={"DBUS_SESSION_BUS_ADDRESS": address}
    )
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


def test_the_poller_also_polls_tasks_started_after_it_so_no_follower_waits_on_nobody(
    cli: Cli, tmp_path: Path, notifications: tuple[str, Path]
) -> None:
    address, _log = notifications
    demo = add_demo(cli, tmp_path)
    waiting = start_import(cli, SAMPLES / "suppliers_ambiguous_id.csv")
    env = {"DBUS_SESSION_BUS_ADDRESS": address}
    first = cli.start("tasks", "watch", "--notify", "--timeout", "120", env=env)
    first_out = Lines(first.stdout)
    first_out.until(lambda line: "answer with" in line)

    later = start_import(cli, SAMPLES / "suppliers_clean.csv")  # started after the watcher
    second = cli.start("tasks", "watch", str(later["id"]), "--timeout", "120", env=env)
    second_err = Lines(second.stderr)
    second_err.until(lambda line: "is polling these tasks" in line)
    second_out = Lines(second.stdout).rest(120)
    assert second.wait(timeout=30) == 0, second_err.rest()
    assert any("completed" in line for line in second_out)

    answered = cli.run(
        "tasks", "answer", str(waiting["id"]), "--value", json.dumps({"column": "vendor_code"})
    )
    assert answered.returncode == 0, answered.stderr
    first_out.rest(120)
    assert first.wait(timeout=30) == 0
    # Each task was read (a tasks/get, or a listen request that names it: the server answers
    # it with the task's state, then reports its changes), by the first watcher only.
    checks = [(r["pid"], r["taskId"]) for r in demo.requests() if r["method"] == "tasks/get"]
    checks += [
        (r["pid"], task_id)
        for r in demo.requests()
        if r["method"] == "subscriptions/listen"
        for task_id in r.get("taskIds", [])
    ]
    assert {task_id for _pid, task_id in checks} == {waiting["task_id"], later["task_id"]}
    assert len({pid for pid, _task_id in checks}) == 1
