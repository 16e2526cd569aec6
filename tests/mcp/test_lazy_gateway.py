"""The lazy gateway: the SDK's import runs on a worker thread, never on the caller's loop."""

from __future__ import annotations

import asyncio
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest

from mooring.core.servers import ServerDefinition, Transport
from mooring.mcp.lazy import LazyGateway
from tests.core.tasks.factories import T0

pytestmark = pytest.mark.anyio

HEAVY = "mooring_test_heavy_sdk"


class StandIn:
    """What the factory builds: records what it was asked."""

    def __init__(self) -> None:
        self.connected: list[str] = []
        self.calls: list[str] = []

    def add_task_listener(self, _listener: Any) -> None: ...
    def add_status_listener(self, _listener: Any) -> None: ...
    def want_task_notifications(self, _wanted: bool) -> None: ...
    def add_tools_listener(self, _listener: Any) -> None: ...
    def add_coverage_listener(self, _listener: Any) -> None: ...
    def expect_task(self, *_args: Any) -> None: ...
    def secrets_changed(self, _server_id: str) -> None: ...
    def signed_in(self, _server_id: str, _profile_id: str | None) -> None: ...

    async def connect(self, server: ServerDefinition, _profile_id: str | None = None) -> str:
        self.connected.append(server.alias)
        self.calls.append(f"connect {server.alias}")
        return "connection"

    async def aclose(self) -> None:
        self.calls.append("aclose")


async def test_the_first_connect_imports_the_sdk_on_a_worker_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / f"{HEAVY}.py").write_text(
        "import threading\nIMPORTED_ON = threading.current_thread().name\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, HEAVY, raising=False)
    built: list[str] = []
    stand_in = StandIn()

    def factory() -> Any:
        # By now the import is done: the factory only finds it.
        built.append(sys.modules[HEAVY].IMPORTED_ON)
        return stand_in

    told: list[bool] = []
    gateway = LazyGateway(factory, modules=(HEAVY,))
    gateway.when_loaded(lambda: told.append(gateway.loaded))
    assert not gateway.loaded
    server = ServerDefinition(
        id="s1", alias="demo", transport=Transport.HTTP, url="http://127.0.0.1:9/mcp", created_at=T0
    )
    connections: list[object] = [await gateway.connect(server), await gateway.connect(server)]
    assert connections == ["connection", "connection"]
    assert built == ["mooring-sdk-import"]
    assert built[0] != threading.current_thread().name
    assert stand_in.connected == ["demo", "demo"]
    assert told == [True]  # told once, with the real gateway built (the collector settles)


@dataclass
class Gate:
    """Where the heavy module's import stops until released."""

    entered: threading.Event
    release: threading.Event


def held_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Gate:
    """Make importing :data:`HEAVY` stop at a gate (``entered`` set) until ``release``."""
    gate = Gate(threading.Event(), threading.Event())
    monkeypatch.setitem(sys.modules, "mooring_test_gate", gate)
    (tmp_path / f"{HEAVY}.py").write_text(
        "import mooring_test_gate as gate\ngate.entered.set()\ngate.release.wait(30)\nDONE = True\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, HEAVY, raising=False)
    return gate


def test_the_window_loader_can_wait_for_the_import_it_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The window's loader (a worker thread) waits for the SDK beside its "Loading" shell, so
    # the import never competes with a live window for the interpreter.
    gate = held_import(tmp_path, monkeypatch)
    gateway = LazyGateway(lambda: cast(Any, StandIn()), modules=(HEAVY,))
    gateway.wait_warm()  # nothing under way: returns at once
    gateway.warm()
    assert gate.entered.wait(30)  # the import is under way, held at the gate
    seen_when_back: list[bool] = []

    def loader() -> None:
        gateway.wait_warm()
        seen_when_back.append(getattr(sys.modules.get(HEAVY), "DONE", False))

    waiter = threading.Thread(target=loader)
    waiter.start()
    gate.release.set()
    waiter.join(30)
    assert seen_when_back == [True]  # back only once the whole import was done


async def test_a_connect_waiting_for_the_import_when_the_gateway_closes_reaches_a_closed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The window quits while its first connect waits for the SDK's import: the real gateway,
    # built once the import is done, must be closed before that connect reaches it, or it
    # would start a server process that nothing stops.
    gate = held_import(tmp_path, monkeypatch)
    stand_in = StandIn()
    gateway = LazyGateway(lambda: cast(Any, stand_in), modules=(HEAVY,))
    server = ServerDefinition(
        id="s1", alias="demo", transport=Transport.HTTP, url="http://127.0.0.1:9/mcp", created_at=T0
    )
    connecting = asyncio.ensure_future(gateway.connect(server))
    assert await asyncio.to_thread(gate.entered.wait, 30)  # the import is under way
    await gateway.aclose()
    gate.release.set()
    assert cast(object, await connecting) == "connection"
    assert stand_in.calls == ["aclose", "connect demo"]


def test_what_the_first_connection_would_build_is_built_with_the_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The window's loader hands `warm` the rest of the first connection's set-up (the TLS
    # context): it runs on the import's thread, after the imports, and the loader's wait
    # covers it. Failing there costs nothing but the head start.
    gate = held_import(tmp_path, monkeypatch)
    gate.release.set()
    done: list[tuple[str, bool]] = []

    def then() -> None:
        done.append((threading.current_thread().name, HEAVY in sys.modules))

    gateway = LazyGateway(lambda: cast(Any, StandIn()), modules=(HEAVY,))
    gateway.warm(then=then)
    gateway.wait_warm()
    assert done == [("mooring-sdk-import", True)]

    def broken() -> None:
        raise OSError("no certificates")

    again = LazyGateway(lambda: cast(Any, StandIn()), modules=(HEAVY,))
    again.warm(then=broken)
    again.wait_warm()  # returns: the connection that needs it will meet the failure itself
    assert again.load() is not None
