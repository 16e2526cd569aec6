"""The delivery chain against a real D-Bus session and notification service (started here)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from mooring.adapters.notify.chain import HookLink, NotificationChain
from mooring.adapters.notify.desktop import DesktopLink
from mooring.core.notifications import Notice, NotifyKind, Occurrence, OpenTarget, notice_for
from tests.helpers.notifyd import logged, private_bus, service_process, start_service
from tests.helpers.processes import run_mooring

pytestmark = pytest.mark.anyio


@pytest.fixture
def bus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A private session bus for this test only."""
    with private_bus(tmp_path / "bus") as address:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
        yield address


def completed(record: str = "op-1", conversation: str | None = "c-1") -> Notice:
    return notice_for(1, [Occurrence(NotifyKind.COMPLETED, record, conversation)])


def chain_with_toast() -> tuple[NotificationChain, DesktopLink, list[Notice]]:
    toasts: list[Notice] = []

    def toast(notice: Notice) -> bool:
        toasts.append(notice)
        return True

    desktop = DesktopLink()
    return NotificationChain([desktop, HookLink("in-app toast", toast)]), desktop, toasts


async def test_a_notice_reaches_the_notification_service_in_exact_words(bus: str) -> None:
    service_bus, service = await start_service(bus)
    chain, desktop, toasts = chain_with_toast()
    try:
        assert await chain.show(completed()) == "desktop notifications"
        assert toasts == []
        [sent] = service.received
        assert (sent["app_name"], sent["summary"], sent["body"]) == (
            "Mooring",
            "Mooring",
            "A background task completed",
        )
    finally:
        await desktop.aclose()
        service_bus.disconnect()


async def test_a_merged_notice_replaces_the_one_it_grew_from(bus: str) -> None:
    service_bus, service = await start_service(bus)
    chain, desktop, _ = chain_with_toast()
    first = completed()
    merged = notice_for(
        first.key,
        [Occurrence(NotifyKind.COMPLETED, "op-1"), Occurrence(NotifyKind.COMPLETED, "op-2")],
    )
    try:
        await chain.show(first)
        await chain.show(merged)
        assert [n["body"] for n in service.received] == [
            "A background task completed",
            "2 background tasks completed",
        ]
        assert service.closed == [service.received[0]["id"]]
    finally:
        await desktop.aclose()
        service_bus.disconnect()


async def test_clicking_the_notification_or_open_opens_its_task(bus: str) -> None:
    service_bus, service = await start_service(bus)
    chain, desktop, _ = chain_with_toast()
    opened: list[OpenTarget | None] = []
    clicked = anyio.Event()

    def on_open(target: OpenTarget | None) -> None:
        opened.append(target)
        clicked.set()

    desktop.on_open = on_open
    try:
        await chain.show(completed())
        [sent] = service.received
        assert "Open" in sent["actions"]  # the service shows buttons: an "Open" action
        service.ActionInvoked(sent["id"], "default")
        with anyio.fail_after(10):
            await clicked.wait()
        assert opened == [OpenTarget("c-1", "op-1")]
    finally:
        await desktop.aclose()
        service_bus.disconnect()


async def test_without_a_session_bus_the_chain_falls_through(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    chain, desktop, toasts = chain_with_toast()
    assert await chain.show(completed()) == "in-app toast"
    assert [t.body for t in toasts] == ["A background task completed"]
    assert (await desktop.status()).detail == "no D-Bus session bus"


async def test_a_bus_without_a_notification_service_falls_through(bus: str) -> None:
    chain, desktop, toasts = chain_with_toast()
    try:
        assert await chain.show(completed()) == "in-app toast"
        assert len(toasts) == 1
        assert (await desktop.status()).detail == "no notification service on the session bus"
    finally:
        await desktop.aclose()


async def test_a_service_that_went_away_is_noticed_although_send_does_not_raise(
    bus: str,
) -> None:
    service_bus, service = await start_service(bus)
    chain, desktop, toasts = chain_with_toast()
    try:
        assert await chain.show(completed()) == "desktop notifications"
        service_bus.disconnect()
        await service_bus.wait_for_disconnect()  # type: ignore[no-untyped-call]
        assert await chain.show(completed("op-2")) == "in-app toast"
        assert [t.target for t in toasts] == [OpenTarget("c-1", "op-2")]
        assert len(service.received) == 1
    finally:
        await desktop.aclose()


def test_doctor_says_which_link_is_in_use(tmp_path: Path) -> None:
    with private_bus(tmp_path / "bus") as address:
        nobody = run_mooring(
            "doctor", "--json", data_dir=tmp_path / "d", env={"DBUS_SESSION_BUS_ADDRESS": address}
        )
        with service_process(address, tmp_path / "notified.jsonl") as log:
            served = run_mooring(
                "doctor",
                "--json",
                data_dir=tmp_path / "d",
                env={"DBUS_SESSION_BUS_ADDRESS": address},
            )
            assert logged(log) == []  # asking is not notifying
    import json

    missing = {c["name"]: c for c in json.loads(nobody.stdout)["checks"]}["notifications"]
    present = {c["name"]: c for c in json.loads(served.stdout)["checks"]}["notifications"]
    assert missing["level"] == "warn"
    assert "no notification service on the session bus" in missing["summary"]
    assert "in-app toast" in missing["summary"]
    assert present["level"] == "ok"
    assert present["summary"].startswith("via desktop notifications: D-Bus")
    assert "fake-notifyd 0.1" in present["summary"]
