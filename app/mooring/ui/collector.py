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
grown by a quarter) at its next middle pass. A burst that never ends still gets full passes:
after :data:`LONGEST_WAIT_S` of deferring, the threshold is back until one has run. Younger
passes are untouched. This is the "sustained low latency" mode of other runtimes' collectors
(.NET's ``GCLatencyMode.SustainedLowLatency``), by hand: CPython 3.11 has neither that nor an
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
        self._deferring_since: float | None = None
        self._threshold: int | None = None  # CPython's own, while started

    def deferring(self) -> bool:
        """Whether full passes wait now."""
        return self._threshold is not None and gc.get_threshold()[2] == OUT_OF_REACH

    def start(self) -> None:
        """Check the GUI thread from now on."""
        self._threshold = gc.get_threshold()[2]
        self._timer.start()

    def stop(self) -> None:
        """Stop checking; CPython's threshold is as it was."""
        self._timer.stop()
        if self._threshold is not None:
            self._set_last_threshold(self._threshold)
            self._threshold = None

    def check(self) -> None:
        """Defer full passes while the GUI thread is busy, at most :data:`LONGEST_WAIT_S` at
        a time; let CPython start them otherwise."""
        if self._threshold is None:
            return
        now, cpu = self._clock(), self._cpu()
        elapsed = now - self._seen_at
        busy = elapsed > 0 and (cpu - self._seen_cpu) / elapsed > BUSY_SHARE
        self._seen_at, self._seen_cpu = now, cpu
        passes = _full_passes()
        if passes != self._full_passes:  # one ran: the next may be deferred as long again
            self._full_passes = passes
            self._deferring_since = None
        if busy and self._deferring_since is None:
            self._deferring_since = now
        elif not busy:
            self._deferring_since = None
        waited_enough = (
            self._deferring_since is not None and now - self._deferring_since >= LONGEST_WAIT_S
        )
        if busy and not waited_enough:
            self._set_last_threshold(OUT_OF_REACH)
        else:
            self._set_last_threshold(self._threshold)

    @staticmethod
    def _set_last_threshold(value: int) -> None:
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, value)


def _full_passes() -> int:
    """How many full passes this process has run."""
    return int(gc.get_stats()[2]["collections"])
