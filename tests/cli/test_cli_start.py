"""A quick command loads only what it uses: no window toolkit, model SDKs, MCP SDK, keyring or
tracing SDK just to list tasks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import mooring

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
from mooring.{entry} import main
code = main(sys.argv[1:])
print(json.dumps({{"code": code, "modules": sorted(sys.modules)}}))
"""


def loaded_by(
    data_dir: Path, *args: str, entry: str = "bootstrap"
) -> tuple[int, set[str], str, str]:
    env = {**os.environ, "MOORING_DATA_DIR": str(data_dir)}
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(entry=entry), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    *said, last = done.stdout.splitlines()
    report = json.loads(last)
    return report["code"], set(report["modules"]), "\n".join(said), done.stderr


@pytest.mark.parametrize("command", [("tasks", "list"), ("tasks", "list", "--json")])
def test_listing_tasks_loads_no_heavy_package(tmp_path: Path, command: tuple[str, ...]) -> None:
    data_dir = tmp_path / "mooring"
    first_code, *_ = loaded_by(data_dir, *command)  # creates and migrates the database
    code, modules, said, _ = loaded_by(data_dir, *command)
    assert (first_code, code) == (0, 0)
    assert "No tasks" in said or said.strip() == "[]"
    loaded = sorted(m for m in HEAVY if m in modules)
    assert loaded == []
    assert "alembic" not in modules  # an up-to-date database needs no migration machinery


def test_a_listing_that_goes_well_loads_no_logging_or_typing(tmp_path: Path) -> None:
    # `mooring tasks list` as the command runs it (mooring.launch). A listing that goes well
    # has nothing to log, and the annotations need no typing at run time: the two were a fifth
    # of its start-up (bench: cli_start). The parser lays out no text, so nothing asks for the
    # terminal's width (shutil, ~5 ms).
    data_dir = tmp_path / "mooring"
    loaded_by(data_dir, "tasks", "list", entry="launch")  # creates and migrates the database
    code, modules, said, _ = loaded_by(data_dir, "tasks", "list", entry="launch")
    assert (code, said) == (0, "No tasks.")
    loaded = ("logging", "typing", "asyncio", "sqlalchemy", "shutil", "socket", "pickle")
    assert sorted(m for m in loaded if m in modules) == []
    assert sorted(m for m in modules if m.startswith("mooring.link")) == []


def test_a_settings_problem_still_warns_and_the_listing_still_answers(tmp_path: Path) -> None:
    # The quick listing only reads: a settings file with something to report goes the full
    # way, which says it (and keeps a damaged file aside), then lists.
    data_dir = tmp_path / "mooring"
    loaded_by(data_dir, "tasks", "list", entry="launch")
    settings = data_dir / "config" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text('{"version": 2, "values": {"no.such.setting": 1}}', encoding="utf-8")
    code, _, said, err = loaded_by(data_dir, "tasks", "list", entry="launch")
    assert (code, said) == (0, "No tasks.")
    assert "mooring: WARNING: unknown setting 'no.such.setting' ignored" in err

    settings.write_text("{not json", encoding="utf-8")
    code, _, said, err = loaded_by(data_dir, "tasks", "list", entry="launch")
    assert (code, said) == (0, "No tasks.")
    assert "settings file unreadable" in err
    assert [p.name.split("-")[0] for p in settings.parent.glob("settings.json.damaged-*")] == [
        "settings.json.damaged"
    ]


def test_the_entry_point_turns_the_collector_back_on_for_the_full_path(tmp_path: Path) -> None:
    # mooring.launch keeps the garbage collector off while it starts up; the command the full
    # path runs (the window, a watch) must not run without it: the full path's entry is
    # replaced by one that says whether the collector is on as it is called.
    probe = (
        "import gc, sys\n"
        "import mooring.bootstrap\n"
        "mooring.bootstrap.main = lambda argv: print('collecting', gc.isenabled()) or 0\n"
        "from mooring.launch import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    env = {**os.environ, "MOORING_DATA_DIR": str(tmp_path / "mooring")}
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    done = subprocess.run(
        [sys.executable, "-c", probe, "tasks", "list", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    assert done.stdout.splitlines() == ["collecting True"]


def test_a_detached_call_to_a_running_engine_loads_no_event_loop_or_host(
    tmp_path: Path,
) -> None:
    # `mooring call … --detach` with the data folder's engine running sends a few requests and
    # prints (bench: detached_call, at most 10 times `import mooring`): asyncio (with ssl),
    # logging, typing and the event types it was sent were most of its CPU. The first call
    # starts the engine (the full path); the second is the narrow client's.
    data_dir = tmp_path / "mooring"
    store = tmp_path / "demo.sqlite3"
    add = ["servers", "add", "bench", "--command", sys.executable]
    add += [
        f"--arg={a}"
        for a in ("-m", "mooring.demo_server", "--conformance-fixtures", "--store", str(store))
    ]
    for setup in (add, ["rules", "add", "bench", "slow_compute", "allow"]):
        assert loaded_by(data_dir, *setup)[0] == 0
    call = ("call", "bench", "slow_compute", "--detach", "--args", '{"seconds": 600}')
    first_code, _, first, _ = loaded_by(data_dir, *call, entry="launch")
    code, modules, said, err = loaded_by(data_dir, *call, entry="launch")
    assert (first_code, code) == (0, 0), (first, said, err)
    for words in (first, said):  # the same lines either way
        operation, task, state = words.splitlines()
        assert operation.startswith("operation ")
        assert task.startswith("task ")
        assert state == f"{operation.split()[1][:8]}: working — Queued."
    unwanted = (
        "asyncio",
        "ssl",
        "logging",
        "typing",
        "sqlalchemy",
        "mcp",
        "mooring.bootstrap",
        "mooring.services.host",
        "mooring.core.events",  # events it says nothing about are not sent to it
        "mooring.core.views",
    )
    assert sorted(m for m in unwanted if m in modules) == []
    assert sorted(m for m in HEAVY if m in modules) == []

    code, _, said, err = loaded_by(data_dir, *call, "--json", entry="launch")
    assert code == 0, err
    shown = json.loads(said)
    assert (shown["tool"], shown["state"], shown["server"]) == ("slow_compute", "working", "bench")


def test_an_answer_through_a_running_engine_loads_no_event_loop_or_host(tmp_path: Path) -> None:
    # `mooring tasks answer` with the engine running is the narrow client's too.
    data_dir = tmp_path / "mooring"
    store = tmp_path / "demo.sqlite3"
    add = ["servers", "add", "suppliers", "--command", sys.executable]
    add += [f"--arg={a}" for a in ("-m", "mooring.demo_server", "--store", str(store))]
    samples = Path(mooring.__file__).parent / "demo_server" / "sample_data"
    for setup in (add, ["rules", "add", "suppliers", "import_suppliers", "allow"]):
        assert loaded_by(data_dir, *setup)[0] == 0
    ambiguous = json.dumps({"path": str(samples / "suppliers_ambiguous_id.csv")})
    call = ("call", "suppliers", "import_suppliers", "--detach", "--args", ambiguous, "--json")
    code, _, said, err = loaded_by(data_dir, *call, entry="launch")
    assert code == 0, err
    operation = json.loads(said)["id"]
    # Followed until it asks (no terminal: the watch leaves it waiting, exit 9).
    assert loaded_by(data_dir, "tasks", "watch", operation)[0] == 9
    answer = ("tasks", "answer", operation, "--value", '{"column": "vendor_code"}')
    code, modules, said, err = loaded_by(data_dir, *answer, entry="launch")
    assert code == 0, (said, err)
    assert said.startswith(f"{operation[:8]}: answer ")
    assert said.endswith(": Delivered.")
    unwanted = ("asyncio", "ssl", "logging", "sqlalchemy", "mcp", "mooring.bootstrap")
    assert sorted(m for m in unwanted if m in modules) == []
    assert "mooring.services.host" not in modules
    assert sorted(m for m in HEAVY if m in modules) == []
