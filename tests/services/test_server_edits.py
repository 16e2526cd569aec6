"""Editing a server while its tasks are watched: the next check reaches the edited server."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from mooring.core.tasks.states import LocalState
from mooring.services.host import ServerSpec
from tests.services.conftest import SAMPLES, HostFactory, demo_definition, run_until

pytestmark = pytest.mark.anyio


def requests(log: Path, method: str = "tasks/get") -> int:
    lines = log.read_text().splitlines() if log.exists() else []
    return sum(1 for r in map(json.loads, lines) if r.get("method") == method)


async def test_a_check_after_an_edit_goes_to_the_edited_server(
    hosts: HostFactory, tmp_path: Path
) -> None:
    # The monitor keeps the server definitions it read (a read per poll cost more than the
    # poll's own work): an edit made here must still take effect at the next check.
    host = await hosts()
    store = tmp_path / "store.sqlite3"
    before, after = tmp_path / "before.log", tmp_path / "after.log"
    server = demo_definition(store, before)
    env = dict(server.env)
    del env["MOORING_DEMO_REQUEST_LOG"]
    if os.environ.get("PYTHONPATH"):  # the server runs the sources under test
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    server = dataclasses.replace(server, env=env, args=(*server.args, "--request-log", str(before)))
    await host.store.add_server(server)
    started = await host.host.call(
        server, "import_suppliers", {"path": str(SAMPLES / "suppliers_ambiguous_id.csv")}
    )
    waiting = await run_until(host, started.id, lambda r: r.state is LocalState.INPUT_REQUIRED)
    assert requests(before, "tools/call") == 1
    waiting = await host.monitor.refresh(waiting)  # a check just before the edit
    assert requests(before) >= 1

    await host.host.update_server(
        "demo",
        ServerSpec(
            alias="demo",
            command=server.command,
            args=(*server.args[:-1], str(after)),  # the same store, another request log
            trusted=True,
        ),
    )
    polled_before = requests(before)
    checked = await host.monitor.refresh(waiting)

    assert checked.state is LocalState.INPUT_REQUIRED  # the same task, on the same store
    assert requests(after) == 1
    assert requests(before) == polled_before
