"""A private D-Bus session with a small ``org.freedesktop.Notifications`` service, for tests.

``private_bus()`` starts a real ``dbus-daemon`` with a configuration that activates nothing, so
a bus without a notification service really has none. ``FakeNotifications`` records what it
was sent; run it in-process (``start_service``) or as a process that appends one JSON line per
notification to a file (``python -m tests.helpers.notifyd ADDRESS LOG``), for tests whose
notifying side is another process.
"""

import asyncio
import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

from dbus_fast.aio import MessageBus
from dbus_fast.annotations import DBusDict, DBusInt32, DBusSignature, DBusStr, DBusUInt32
from dbus_fast.service import ServiceInterface, method, signal

_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir={folder}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


@contextlib.contextmanager
def private_bus(folder: Path) -> Iterator[str]:
    """A ``dbus-daemon`` of our own (no service activation); yields its address."""
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "bus.conf"
    config.write_text(_CONFIG.format(folder=folder))
    daemon = subprocess.Popen(
        ["dbus-daemon", f"--config-file={config}", "--nofork", "--print-address=1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert daemon.stdout is not None
        address = daemon.stdout.readline().strip()
        assert address, "dbus-daemon did not start"
        yield address
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)
        if daemon.stdout is not None:
            daemon.stdout.close()


Strings = Annotated[list[str], DBusSignature("as")]
Info = Annotated[list[str], DBusSignature("ssss")]
TwoUInts = Annotated[list[int], DBusSignature("uu")]
UIntStr = Annotated[list[Any], DBusSignature("us")]


class FakeNotifications(ServiceInterface):
    """Records every ``Notify``; can emit ``ActionInvoked`` as if the user clicked."""

    def __init__(self, log: Path | None = None, *, actions: bool = True) -> None:
        super().__init__("org.freedesktop.Notifications")
        self.received: list[dict[str, Any]] = []
        self.closed: list[int] = []
        self.changed = asyncio.Event()
        self._log = log
        self._actions = actions
        self._next_id = 1

    @method()
    def GetCapabilities(self) -> Strings:
        return ["body", "actions", "persistence"] if self._actions else ["body"]

    @method()
    def GetServerInformation(
        self,
    ) -> Info:
        return ["fake-notifyd", "tests", "0.1", "1.2"]

    @method()
    def Notify(
        self,
        app_name: DBusStr,
        replaces_id: DBusUInt32,
        app_icon: DBusStr,
        summary: DBusStr,
        body: DBusStr,
        actions: Strings,
        hints: DBusDict,
        expire_timeout: DBusInt32,
    ) -> DBusUInt32:
        nid = self._next_id
        self._next_id += 1
        entry = {
            "id": nid,
            "app_name": app_name,
            "summary": summary,
            "body": body,
            "actions": list(actions),
        }
        self.received.append(entry)
        if self._log is not None:
            with self._log.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(entry) + "\n")
        self.changed.set()
        return nid

    @method()
    def CloseNotification(self, nid: DBusUInt32) -> None:
        self.closed.append(nid)
        self.NotificationClosed(nid, 3)

    @signal()
    def NotificationClosed(self, nid: DBusUInt32, reason: DBusUInt32) -> TwoUInts:
        return [nid, reason]

    @signal()
    def ActionInvoked(self, nid: DBusUInt32, action_key: DBusStr) -> UIntStr:
        return [nid, action_key]


async def start_service(
    address: str, log: Path | None = None, *, actions: bool = True
) -> tuple[MessageBus, FakeNotifications]:
    """Own ``org.freedesktop.Notifications`` on the bus at ``address``."""
    bus = await MessageBus(bus_address=address).connect()
    service = FakeNotifications(log, actions=actions)
    bus.export("/org/freedesktop/Notifications", service)
    await bus.request_name("org.freedesktop.Notifications")
    return bus, service


async def _serve(address: str, log: Path) -> None:
    bus, _service = await start_service(address, log)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    await bus.wait_for_disconnect()  # type: ignore[no-untyped-call]


@contextlib.contextmanager
def service_process(address: str, log: Path) -> Iterator[Path]:
    """The fake service as its own process (for notifiers in other processes); yields the file
    it appends one JSON line per notification to."""
    root = Path(__file__).resolve().parents[2]
    service = subprocess.Popen(
        [sys.executable, "-m", "tests.helpers.notifyd", address, str(log)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=root,
    )
    try:
        assert service.stdout is not None
        assert service.stdout.readline().strip() == "ready"
        yield log
    finally:
        service.terminate()
        service.wait(timeout=10)
        if service.stdout is not None:
            service.stdout.close()


def logged(log: Path) -> list[dict[str, Any]]:
    """What the service process received, in order."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(sys.argv[1], Path(sys.argv[2])))
