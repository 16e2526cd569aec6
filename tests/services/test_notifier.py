"""The notifier: persisted events → private notifications on a real D-Bus notification service.

A private ``dbus-daemon`` and a small ``org.freedesktop.Notifications`` service run for each
test; the notifier reads servers from a real SQLite file.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from mooring.adapters.notify.chain import HookLink, NotificationChain
from mooring.adapters.notify.desktop import DesktopLink
from mooring.core.approval.request import ApprovalRequest
from mooring.core.events import ApprovalRequested, Event, EventBus, TaskDidChange
from mooring.core.notifications import Notice, NotifyPrefs, WhenToNotify
from mooring.core.servers import ServerDefinition, Transport
from mooring.core.tasks.inputs import TaskInput
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState, TaskFlag
from mooring.services.notifier import Notifier
from mooring.storage.db import Database
from mooring.storage.store import SqlStore
from tests.core.tasks.factories import T0, make_record
from tests.helpers.notifyd import FakeNotifications, private_bus, start_service

pytestmark = pytest.mark.anyio

SERVER = "canary-SERVER-7d1"
TOOL = "canary_TOOL_a93"
ARGS = "canary-ARGS-5b2"
RESULT = "canary-RESULT-c40"
STATUS = "canary-STATUS-e11"
FILE = "canary-FILE-0f9.csv"
TASK_ID = "canary-TASKID-2aa"
CANARIES = (SERVER, TOOL, ARGS, RESULT, STATUS, FILE, TASK_ID)


@dataclass
class ManualClock:
    at: datetime = T0

    def now(self) -> datetime:
        return self.at


@dataclass
class Rig:
    events: EventBus
    notifier: Notifier
    service: FakeNotifications
    clock: ManualClock
    prefs: list[NotifyPrefs]
    toasts: list[Notice] = field(default_factory=list)
    active: list[bool] = field(default_factory=lambda: [False])

    async def tell(self, *events: Event) -> list[tuple[str, str]]:
        """Emit on the bus, let the notifier deliver everything, return (summary, body)s."""
        self.notifier.start()
        for event in events:
            self.events.emit(event)
        await self.notifier.aclose()
        return [(n["summary"], n["body"]) for n in self.service.received]


@pytest.fixture
def bus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with private_bus(tmp_path / "bus") as address:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
        yield address


@pytest.fixture
async def rig(bus: str, tmp_path: Path) -> AsyncIterator[Rig]:
    db = Database.open(tmp_path / "mooring.sqlite3")
    clock = ManualClock()
    store = SqlStore(db, clock)
    await store.add_server(
        ServerDefinition(
            id="srv-1",
            alias=SERVER,
            transport=Transport.STDIO,
            command="python",
            args=("-m", "server", ARGS),
            created_at=T0,
        )
    )
    service_bus, service = await start_service(bus)
    events = EventBus()
    desktop = DesktopLink()
    prefs = [NotifyPrefs()]
    toasts: list[Notice] = []
    active = [False]

    def toast(notice: Notice) -> bool:
        toasts.append(notice)
        return True

    notifier = Notifier(
        events=events,
        catalog=store,
        sink=NotificationChain([desktop, HookLink("in-app toast", toast)]),
        clock=clock,
        prefs=lambda: prefs[0],
        window_active=lambda: active[0],
    )
    try:
        yield Rig(events, notifier, service, clock, prefs, toasts, active)
    finally:
        await desktop.aclose()
        service_bus.disconnect()
        db.close()


def canary_record(state: LocalState, **changes: Any) -> TaskRecord:
    values: dict[str, Any] = {
        "tool": TOOL,
        "task_id": TASK_ID,
        "status_message": f"{STATUS} reading {FILE}",
        "reason": f"{RESULT} {FILE}",
        "argument_digest": f"sha256:{ARGS}",
        "conversation_id": "conv-1",
    }
    values.update(changes)
    return make_record(state, **values)


def change(previous: LocalState, state: LocalState, **changes: Any) -> TaskDidChange:
    return TaskDidChange(canary_record(state, **changes), previous)


QUESTION = TaskInput(
    record_id="op-1",
    key="q1",
    method="elicitation/create",
    params={"message": f"Which column of {FILE}? {ARGS}"},
    created_at=T0,
)
APPROVAL = ApprovalRequested(
    ApprovalRequest(
        id="req-1",
        server_id="srv-1",
        server_alias=SERVER,
        tool=TOOL,
        arguments={"path": FILE, "args": ARGS},
        reason="no rule",
        conversation_id="conv-1",
        tool_round_id="round-1",
    )
)
SIGN_IN = change(LocalState.WORKING, LocalState.WORKING, flags=frozenset({TaskFlag.AUTH_REQUIRED}))


@pytest.mark.parametrize(
    ("event", "body"),
    [
        (change(LocalState.WORKING, LocalState.COMPLETED), "A background task completed"),
        (change(LocalState.WORKING, LocalState.FAILED), "A background task failed"),
        (change(LocalState.WORKING, LocalState.CANCELLED), "A background task was cancelled"),
        (change(LocalState.INPUT_REQUIRED, LocalState.EXPIRED), "A background task expired"),
        (
            TaskDidChange(
                canary_record(LocalState.INPUT_REQUIRED),
                LocalState.WORKING,
                (QUESTION,),
            ),
            "A task needs your input",
        ),
        (APPROVAL, "Approval needed"),
        (SIGN_IN, "Sign-in needed"),
        (
            change(LocalState.CREATING, LocalState.UNKNOWN_OUTCOME, task_id=None),
            "A task may or may not have run",
        ),
    ],
)
async def test_each_event_notifies_in_generic_words_only(rig: Rig, event: Event, body: str) -> None:
    assert await rig.tell(event) == [("Mooring", body)]
    for canary in CANARIES:
        assert canary not in str(rig.service.received)


async def test_with_the_opt_in_server_and_tool_are_named_and_nothing_else(rig: Rig) -> None:
    rig.prefs[0] = NotifyPrefs(show_names=True)
    shown = await rig.tell(
        change(LocalState.WORKING, LocalState.COMPLETED),
        APPROVAL,
    )
    assert shown == [
        ("Mooring", f"A background task completed\n{SERVER}: {TOOL}"),
        ("Mooring", f"Approval needed\nA background task completed\n{SERVER}: {TOOL}"),
    ]
    for canary in (ARGS, RESULT, STATUS, FILE, TASK_ID):
        assert canary not in str(rig.service.received)


async def test_immediate_results_and_metadata_changes_do_not_notify(rig: Rig) -> None:
    assert (
        await rig.tell(
            change(LocalState.CREATING, LocalState.COMPLETED),
            change(LocalState.WORKING, LocalState.WORKING),
            change(LocalState.AWAITING_APPROVAL, LocalState.DENIED, task_id=None),
        )
        == []
    )


@pytest.mark.parametrize(
    ("when", "active", "told"),
    [
        (WhenToNotify.WHEN_INACTIVE, False, True),
        (WhenToNotify.WHEN_INACTIVE, True, False),
        (WhenToNotify.ALWAYS, True, True),
        (WhenToNotify.NEVER, False, False),
    ],
)
async def test_the_when_setting_and_the_active_window(
    rig: Rig, when: WhenToNotify, active: bool, told: bool
) -> None:
    rig.prefs[0] = NotifyPrefs(when=when)
    rig.active[0] = active
    shown = await rig.tell(change(LocalState.WORKING, LocalState.FAILED))
    assert shown == ([("Mooring", "A background task failed")] if told else [])


async def test_a_muted_conversation_does_not_notify(rig: Rig) -> None:
    rig.prefs[0] = NotifyPrefs(muted=frozenset({"conv-1"}))
    other = change(LocalState.WORKING, LocalState.COMPLETED, id="op-2", conversation_id="conv-2")
    assert await rig.tell(change(LocalState.WORKING, LocalState.COMPLETED), other) == [
        ("Mooring", "A background task completed")
    ]
    assert rig.notifier.shown[0][0].target is not None
    assert rig.notifier.shown[0][0].target.conversation_id == "conv-2"


async def test_a_burst_is_one_notification_that_grows_in_place(rig: Rig) -> None:
    rig.notifier.start()
    for n in range(3):
        rig.clock.at = T0 + timedelta(seconds=n)
        await rig.notifier.handle(change(LocalState.WORKING, LocalState.COMPLETED, id=f"op-{n}"))
    await rig.notifier.handle(change(LocalState.WORKING, LocalState.FAILED, id="op-9"))
    assert [n["body"] for n in rig.service.received] == ["A background task completed"]
    rig.clock.at = T0 + timedelta(seconds=3.9)
    await rig.notifier.tick()
    assert len(rig.service.received) == 1  # the window is not over yet
    rig.clock.at = T0 + timedelta(seconds=4)
    await rig.notifier.tick()
    assert [n["body"] for n in rig.service.received] == [
        "A background task completed",
        "4 background tasks finished: 1 failed, 3 completed",
    ]
    assert rig.service.closed == [rig.service.received[0]["id"]]  # replaced, not stacked


async def test_sign_in_is_told_once_per_server_until_it_works_again(rig: Rig) -> None:
    flagged = frozenset({TaskFlag.AUTH_REQUIRED})
    other = dataclasses.replace(SIGN_IN, record=make_record(id="op-2", flags=flagged))
    recovered = TaskDidChange(make_record(id="op-2"), LocalState.WORKING)
    rig.clock.at = T0
    assert await rig.tell(SIGN_IN, other) == [("Mooring", "Sign-in needed")]
    rig.clock.at = T0 + timedelta(minutes=1)
    assert await rig.tell(recovered, SIGN_IN) == [
        ("Mooring", "Sign-in needed"),
        ("Mooring", "Sign-in needed"),
    ]


async def test_without_a_notification_service_the_toast_gets_it(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS")
    await rig.tell(change(LocalState.WORKING, LocalState.COMPLETED))
    assert rig.service.received == []
    assert [t.body for t in rig.toasts] == ["A background task completed"]
    assert rig.notifier.shown[0][1] == "in-app toast"


async def test_the_first_notice_waits_for_consent_and_a_no_drops_it(rig: Rig) -> None:
    asked: list[bool] = []

    async def no() -> bool:
        asked.append(False)
        rig.prefs[0] = NotifyPrefs(when=WhenToNotify.NEVER)  # what the asker remembers
        return False

    rig.notifier.consent = no
    shown = await rig.tell(
        change(LocalState.WORKING, LocalState.COMPLETED),
        change(LocalState.WORKING, LocalState.FAILED, id="op-2"),
    )
    assert shown == []
    assert asked == [False]  # asked once only


async def test_a_yes_delivers_the_notice_that_asked(rig: Rig) -> None:
    asked: list[bool] = []

    async def yes() -> bool:
        asked.append(True)
        return True

    rig.notifier.consent = yes
    shown = await rig.tell(change(LocalState.WORKING, LocalState.COMPLETED))
    assert shown == [("Mooring", "A background task completed")]
    assert asked == [True]


async def test_a_notice_nobody_could_be_asked_about_waits_and_comes_when_someone_can(
    rig: Rig,
) -> None:
    # Headless: no window to ask, no `tasks watch --notify` yet. The notice is held back, not
    # lost; when a face that takes notices comes, it is delivered.
    someone: list[bool] = []

    async def ask() -> bool | None:
        return True if someone else None

    rig.notifier.consent = ask
    rig.notifier.start()
    delivering = asyncio.ensure_future(rig.notifier.run())
    rig.events.emit(change(LocalState.WORKING, LocalState.INPUT_REQUIRED))
    await rig.notifier.deliver_held()  # nobody yet: held back again
    assert rig.service.received == []
    someone.append(True)
    await rig.notifier.deliver_held()
    assert [n["body"] for n in rig.service.received] == ["A task needs your input"]
    await rig.notifier.aclose(delivering)
    assert len(rig.service.received) == 1  # delivered once
