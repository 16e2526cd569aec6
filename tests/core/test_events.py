"""The typed event stream the faces listen to."""

from __future__ import annotations

from mooring.core.events import (
    AnswerDidSettle,
    ConnectionDidChange,
    Event,
    EventBus,
    ToolsDidChange,
)


def test_typed_subscription_gets_only_its_events_and_can_leave() -> None:
    bus = EventBus()
    got: list[ConnectionDidChange] = []
    everything: list[Event] = []
    leave = bus.on(ConnectionDidChange, got.append)
    bus.subscribe(everything.append)
    bus.emit(ToolsDidChange("s1"))
    bus.emit(ConnectionDidChange("s1", "ready"))
    leave()
    bus.emit(ConnectionDidChange("s1", "failed", "gone"))
    assert got == [ConnectionDidChange("s1", "ready")]
    assert len(everything) == 3


def test_a_failing_listener_does_not_starve_the_others() -> None:
    bus = EventBus()
    got: list[Event] = []

    def broken(_event: Event) -> None:
        raise RuntimeError("a bug in a window")

    bus.subscribe(broken)
    bus.subscribe(got.append)
    bus.emit(AnswerDidSettle("r", "k", True, "Delivered."))
    assert len(got) == 1
