"""The window's full garbage-collector passes wait while its GUI thread is busy (a launch
reconciliation), come as CPython would start them once it is quiet, and never wait longer
than a bound.

CPython's own collections are what is observed (``gc.callbacks``), made due the way a
reconciliation makes them due (objects piling up); the GUI thread's CPU time and the clock are
scripted, so that "busy" and "30 s later" are exact.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from mooring.ui.collector import (
    BUSY_SHARE,
    CHECK_EVERY_MS,
    LONGEST_HELD_S,
    LONGEST_WAIT_S,
    MIDDLE_PASSES_PER_FULL,
    FullPassesBetweenBursts,
)

STEP_S = CHECK_EVERY_MS / 1000


class Clock:
    """A clock the test advances: the wall clock, or the GUI thread's CPU time."""

    def __init__(self, start: float = 1_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


class FullPasses:
    """Counts the full passes that start while it is on."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and info["generation"] == 2:
            self.count += 1

    def during(self, action: Callable[[], None]) -> int:
        before = self.count
        gc.callbacks.append(self)
        try:
            action()
        finally:
            gc.callbacks.remove(self)
        return self.count - before


class Window:
    """A collector over a scripted clock and GUI-thread CPU time, and the full passes counted
    while the test looks."""

    def __init__(self) -> None:
        self.cpu, self.clock, self.passes = Clock(0.0), Clock(), FullPasses()
        self.collector = FullPassesBetweenBursts(clock=self.clock, cpu=self.cpu)
        self.kept: list[list[int]] = []

    def check(self, *, busy: bool) -> None:
        """Half a second later, the GUI thread having used 90 % of it on the CPU, or 10 %."""
        self.clock.now += STEP_S
        self.cpu.now += STEP_S * (0.9 if busy else 0.1)
        self.collector.check()

    def full_passes_while_objects_pile_up(self) -> int:
        """Objects that survive, as a reconciliation's do: more than the old generation holds
        (CPython's rule wants it grown by a quarter), with a young pass every 100 allocations,
        so that CPython finds a full pass due many times over on the way."""

        def pile_up() -> None:
            for i in range(len(gc.get_objects(2)) + 50_000):
                self.kept.append([i])

        return self.passes.during(pile_up)


@pytest.fixture
def window(qapp: QApplication) -> Iterator[Window]:
    saved = gc.get_threshold()
    gc.collect()
    gc.set_threshold(100, 10, 10)
    window = Window()
    window.collector.start()
    try:
        yield window
    finally:
        window.collector.stop()
        gc.set_threshold(*saved)


def test_objects_piling_up_make_cpython_start_full_passes(window: Window) -> None:
    """The control: on a quiet window, CPython starts its full passes as it always does."""
    window.check(busy=False)
    assert not window.collector.deferring()
    assert window.full_passes_while_objects_pile_up() > 0


def test_no_full_pass_while_the_window_is_busy_and_cpython_starts_it_once_quiet(
    window: Window,
) -> None:
    assert 0.1 < BUSY_SHARE < 0.9  # the scripted shares sit on either side of the bound
    window.check(busy=True)
    assert window.collector.deferring()
    assert window.full_passes_while_objects_pile_up() == 0, "a full pass while busy"
    window.check(busy=False)
    assert not window.collector.deferring()
    # What piled up while busy is now due: CPython's next middle pass starts the full one.
    assert window.full_passes_while_objects_pile_up() > 0


def test_a_window_that_stays_busy_still_gets_full_passes_after_the_longest_wait(
    window: Window,
) -> None:
    deferred_for = 0.0
    while window.collector.deferring() or deferred_for == 0.0:
        window.check(busy=True)
        deferred_for += STEP_S
        assert deferred_for <= 2 * LONGEST_WAIT_S, "full passes deferred without end"
    assert LONGEST_WAIT_S <= deferred_for <= LONGEST_WAIT_S + 2 * STEP_S
    assert window.full_passes_while_objects_pile_up() > 0
    window.check(busy=True)  # a full pass ran: the next may wait as long again
    assert window.collector.deferring()


def test_stopping_gives_cpython_its_threshold_back(window: Window) -> None:
    window.check(busy=True)
    assert gc.get_threshold()[2] != 10
    window.collector.stop()
    assert gc.get_threshold() == (100, 10, 10)


def test_bursts_with_short_quiet_dips_hold_full_passes_back_two_minutes_at_most(
    window: Window,
) -> None:
    """Bursts of 29.5 s with half a second of quiet between them: each quiet dip gives CPython
    its threshold back, but one that allocates little starts no pass. Held back in all for
    two minutes, the next burst is not deferred any more."""
    for _ in range(MIDDLE_PASSES_PER_FULL + 1):
        gc.collect(1)  # CPython would consider a full pass from now on
    held = 0.0
    for _burst in range(20):
        for _ in range(round(29.5 / STEP_S)):
            window.check(busy=True)
            if not window.collector.deferring():
                break
            held += STEP_S
        else:
            window.check(busy=False)
            continue
        break
    assert LONGEST_HELD_S - 2 * STEP_S <= held <= LONGEST_HELD_S + 2 * STEP_S


def test_starting_twice_keeps_cpythons_own_threshold(window: Window) -> None:
    window.check(busy=True)  # deferring: the threshold is out of reach now
    window.collector.start()
    window.collector.stop()
    assert gc.get_threshold() == (100, 10, 10)
