"""``mooring tasks list`` through the entry point: read straight from the ledger when the data
folder needs nothing done, with the same lines the host's handler prints; a folder that needs
work first (a new database, the demo server to set up or to follow this installation) still gets
it."""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from sqlalchemy.orm import Session

from mooring.core.conversation import RoundOutcome
from mooring.core.tasks.states import LocalState
from mooring.storage import repositories as repo
from mooring.storage.db import Database
from tests.core.tasks.factories import T0
from tests.storage.test_repositories import a_server, an_operation, begin

PROBE = """
import json, sys
from mooring.{entry} import main
code = main(sys.argv[1:])
print(json.dumps({{"code": code, "modules": sorted(sys.modules)}}))
"""


def run(data_dir: Path, *args: str, entry: str = "launch") -> tuple[int, list[str], set[str]]:
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
    return report["code"], said, set(report["modules"])


def demo_rows(database: Path) -> list[tuple[str, list[str]]]:
    with sqlite3.connect(database) as conn:
        rows = conn.execute("SELECT command, args FROM servers WHERE builtin = 1").fetchall()
    return [(command, json.loads(args)) for command, args in rows]


def test_the_first_listing_sets_up_the_folder_and_the_next_ones_only_read(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "mooring"
    code, said, modules = run(data_dir, "tasks", "list")
    assert (code, said) == (0, ["No tasks."])
    assert "sqlalchemy" in modules  # created, migrated, demo server configured by the host
    [(command, args)] = demo_rows(data_dir / "mooring.sqlite3")
    assert (command, args[:2]) == (sys.executable, ["-m", "mooring.demo_server"])

    code, said, modules = run(data_dir, "tasks", "list", "--active")
    assert (code, said) == (0, ["No active tasks."])
    assert not {"sqlalchemy", "alembic", "asyncio", "mooring.services.host"} & modules


def test_quick_lines_are_the_hosts_lines(tmp_path: Path) -> None:
    data_dir = tmp_path / "mooring"
    assert run(data_dir, "tasks", "list")[0] == 0
    db = Database.open(data_dir / "mooring.sqlite3")
    try:
        server = a_server("files")
        db.call_sync(lambda s: repo.add_server(s, server))
        tool_round, record = an_operation(server)
        begin(db, tool_round, record)
        failed_tool = dataclasses.replace(record, state=LocalState.COMPLETED, task_id="t-1")
        gone = a_server("gone")  # removed since: its tasks still name it
        _, waiting = an_operation(gone)
        waiting = dataclasses.replace(
            waiting, state=LocalState.WORKING, created_at=T0 + timedelta(minutes=1)
        )
        result = {"content": [{"type": "text", "text": "no such file"}], "isError": True}

        def write(session: Session) -> None:
            repo.save_task_record(session, failed_tool)
            repo.finish_tool_round(
                session, tool_round.id, outcome=RoundOutcome.RESULT, at=T0, result=result
            )
            repo.add_server(session, gone)
            repo.add_task_record(session, dataclasses.replace(waiting, tool_round_id=None))
            repo.remove_server(session, gone.id, at=T0)

        db.call_sync(write)
    finally:
        db.close()

    for args in (
        ("tasks", "list"),
        ("tasks", "list", "--active"),
        ("tasks", "list", "--limit", "1"),
    ):
        quick_code, quick, modules = run(data_dir, *args)
        host_code, host, _ = run(data_dir, *args, entry="bootstrap")
        assert "sqlalchemy" not in modules
        assert (quick_code, quick) == (host_code, host)
    _, every, _ = run(data_dir, "tasks", "list")
    assert [line.split("  ")[1] for line in every] == [
        "gone/import_suppliers",
        "files/import_suppliers",
    ]
    assert "completed — the tool reported an error: no such file" in every[1]


def test_a_moved_installation_still_takes_the_demo_server_along(tmp_path: Path) -> None:
    data_dir = tmp_path / "mooring"
    assert run(data_dir, "tasks", "list")[0] == 0
    database = data_dir / "mooring.sqlite3"
    [(_, args)] = demo_rows(database)
    old = ["demo-server", *args[2:]]
    with sqlite3.connect(database) as conn:
        conn.execute(
            "UPDATE servers SET command = ?, args = ? WHERE builtin = 1",
            ("/old/place/mooring", json.dumps(old)),
        )

    code, said, modules = run(data_dir, "tasks", "list")
    assert (code, said) == (0, ["No tasks."])
    assert "sqlalchemy" in modules  # the host took it, to follow this installation
    assert demo_rows(database) == [(sys.executable, args)]
