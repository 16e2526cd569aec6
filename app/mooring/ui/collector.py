"""The window's full garbage-collector passes wait for the end of a burst of work.

A full pass walks every object the window made since start-up (what start-up loaded is frozen,
``bootstrap.settle_collector``), holding the GIL throughout: with 1,000 tasks, 30-110 ms of
CPU on the test machine, during which the window neither paints nor takes input. CPython
starts one once enough objects have survived its younger passes, which happens in the middle of
the burst of work that made them (a launch reconciliation), when the window is already at its
busiest: that pass was the window's worst freeze (``gui_stall_reconcile``'s
``worst_gap_in_gc_ms``).

So while the GUI thread is busy (it used more than :data:`BUSY_SHARE` of the last
:data:`CHECK_EVERY_MS` on the CPU), CPython's last threshold is set out of reach and it starts
no full pass; once the thread is quiet again the threshold is back, and CPython starts the pass
by its own rule (ten middle-generation passes since the last full one, and the old generation
grown by a quarter) at its next middle pass. Work that never lets up still gets full passes:
the threshold is back after :data:`LONGEST_WAIT_S` of one burst, and once bursts have held
passes back for :data:`LONGEST_HELD_S` in all since the last full pass (counted while CPython
would consider one), until one has run. Younger passes are untouched. This is the
"sustained low latency" mode of other runtimes' collectors (.NET's
``GCLatencyMode.SustainedLowLatency``), by hand: CPython 3.11 has neither that nor an
incremental collector.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

CHECK_EVERY_MS = 500
BUSY_SHARE = 0.35
"""A GUI thread that used the CPU for more of the last check's interval than this is busy."""
LONGEST_WAIT_S = 30.0
"""Full passes are deferred for at most this long at a time."""
LONGEST_HELD_S = 120.0
"""...and for at most this long in all between two full passes, counting the time CPython would
have considered one (bursts with short quiet dips between them, which may allocate too little
for CPython to start the pass then)."""
MIDDLE_PASSES_PER_FULL = 10
"""CPython's default last threshold: it considers a full pass after this many middle ones."""
OUT_OF_REACH = 1 << 30
"""A last threshold that CPython's count of middle-generation passes never reaches."""


class FullPassesBetweenBursts(QObject):
    """Defers CPython's full collector passes while the GUI thread is busy (see the module's
    docstring). Process-wide: only the window's entry point starts one."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        cpu: Callable[[], float] = time.thread_time,
        parent: QObject | None = None,
    ) -> None:
        """Made, started and checked on the GUI thread: ``cpu`` reads the calling thread's
        CPU time."""
        super().__init__(parent)
        self._clock = clock
        self._cpu = cpu
        self._timer = QTimer(self)
        self._timer.setInterval(CHECK_EVERY_MS)
        self._timer.timeout.connect(self.check)
        self._seen_at = clock()
        self._seen_cpu = cpu()
        self._full_passes = _full_passes()
        self._busy_since: float | None = None
        self._held_s = 0.0  # since the last full pass, while CPython would have considered one
        self._threshold: int | None = None  # CPython's own, while started

    def deferring(self) -> bool:
        """Whether full passes wait now."""
        return self._threshold is not None and gc.get_threshold()[2] == OUT_OF_REACH

    def start(self) -> None:
        """Check the GUI thread from now on."""
        if self._threshold is not None:
            return
        current = gc.get_threshold()[2]
        self._threshold = MIDDLE_PASSES_PER_FULL if current == OUT_OF_REACH else current
        self._timer.start()

    def stop(self) -> None:
        """Stop checking; CPython's threshold is as it was."""
        self._timer.stop()
        if self._threshold is not None:
            self._set_last_threshold(self._threshold)
            self._threshold = None

    def check(self) -> None:
        """Defer full passes while the GUI thread is busy (within the bounds above); let
        CPython start them otherwise."""
        if self._threshold is None:
            return
        now, cpu = self._clock(), self._cpu()
        elapsed = now - self._seen_at
        busy = elapsed > 0 and (cpu - self._seen_cpu) / elapsed > BUSY_SHARE
        self._seen_at, self._seen_cpu = now, cpu
        passes = _full_passes()
        if passes != self._full_passes:  # one ran: the next may be held back as long again
            self._full_passes = passes
            self._held_s = 0.0
            self._busy_since = None
        if self.deferring() and gc.get_count()[2] >= MIDDLE_PASSES_PER_FULL:
            self._held_s += elapsed
        if not busy:
            self._busy_since = None
        elif self._busy_since is None:
            self._busy_since = now
        hold = (
            self._busy_since is not None
            and now - self._busy_since < LONGEST_WAIT_S
            and self._held_s < LONGEST_HELD_S
        )
        self._set_last_threshold(OUT_OF_REACH if hold else self._threshold)

    @staticmethod
    def _set_last_threshold(value: int) -> None:
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, value)


def _full_passes() -> int:
    """How many full passes this process has run."""
    return int(gc.get_stats()[2]["collections"])
