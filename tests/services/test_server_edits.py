"""Editing a server while its tasks are watched: the next check reaches the edited server."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import keyring
import pytest

from mooring.core.tasks.states import LocalState
from mooring.services.host import ServerSpec
from tests.services.conftest import SAMPLES, HostFactory, demo_definition, logged, run_until

pytestmark = pytest.mark.anyio


def requests(log: Path, method: str = "tasks/get") -> int:
    return len(logged(log, method))


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
    server = dataclasses.replace(server, env=env, args=(*server.args, "--request-log", str(before)))
    await host.store.add_server(server)
    started = await host.host.call(
        server, "import_suppliers", {"path": str(SAMPLES / "suppliers_ambiguous_id.csv")}
    )
    waiting = await run_until(host, started.id, lambda r: r.state is LocalState.INPUT_REQUIRED)
    assert requests(before, "tools/call") == 1
    waiting = await host.monitor.refresh(waiting)  # a check just before the edit
    assert requests(before) >= 1

    await host.host.server_desk.update(
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


async def test_an_edited_secret_value_takes_effect_and_a_check_does_not_read_the_keyring(
    hosts: HostFactory, tmp_path: Path
) -> None:
    # A stdio server's environment values live in the keyring: a connection reads them as it
    # starts, not at every check (a keyring read is a D-Bus round trip, or an unlock prompt).
    # Editing one value alone leaves the definition as it was, yet must take effect.
    host = await hosts()
    store = tmp_path / "store.sqlite3"
    before, after = tmp_path / "before.log", tmp_path / "after.log"
    demo = demo_definition(store, before)
    env = dict(demo.env)
    server = await host.host.server_desk.add(
        ServerSpec(alias="demo", command=demo.command, args=demo.args, env=env, trusted=True)
    )
    assert set(server.env.values()) == {""}  # the values went to the keyring
    started = await host.host.call(
        server, "import_suppliers", {"path": str(SAMPLES / "suppliers_ambiguous_id.csv")}
    )
    waiting = await run_until(host, started.id, lambda r: r.state is LocalState.INPUT_REQUIRED)
    ring = keyring.get_keyring()
    reads: list[tuple[str, str]] = []
    real_get = ring.get_password

    def counted(service: str, username: str) -> str | None:
        reads.append((service, username))
        return real_get(service, username)

    ring.get_password = counted  # type: ignore[method-assign]
    try:
        for _ in range(3):
            waiting = await host.monitor.refresh(waiting)
        assert reads == []
        assert requests(before) >= 3

        await host.host.server_desk.update(
            "demo",
            ServerSpec(
                alias="demo",
                command=demo.command,
                args=demo.args,
                env={**env, "MOORING_DEMO_REQUEST_LOG": str(after)},
                trusted=True,
            ),
        )
        checked = await host.monitor.refresh(waiting)
    finally:
        del ring.get_password

    assert checked.state is LocalState.INPUT_REQUIRED
    assert requests(after) == 1  # the server was started again with the new value
