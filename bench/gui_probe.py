"""The window benchmarks' child process (offscreen Qt): one JSON line on stdout, then exit.

- ``paint DATA_DIR``: launch the real app (``run_gui``, the composition root) and report the
  monotonic time of the main window's first paint and of "ready" (its data shown).
- ``bare``: the baseline: a bare ``QMainWindow`` script, first paint time.
- ``reconcile DATA_DIR SECONDS``: the real app on a folder with live tasks; a 10 ms ``QTimer``
  heartbeat runs while launch reconciliation does; the worst gap between beats during it (cut
  after SECONDS if it still runs then), and when reconciliation started (``reconcile_started``:
  to line the stalls up with the servers' request logs).
- ``cards DATA_DIR SECONDS``: the real app; for SECONDS the unfinished task cards update (each
  record saved through the ledger, then ``TaskDidChange``, as the monitor does) while a reply
  streams into the open conversation (``ReplyDidStream`` every 20 ms); the worst gap meanwhile.
- ``bigresult DATA_DIR SECONDS``: the real app; a message sent from the composer makes the
  (scripted) model call a tool whose result is megabytes of text; the worst gap from the send
  until the turn ended and was drawn.
- ``local DATA_DIR PIECES``: the real app on a folder whose default provider is a local model;
  a short first turn starts the model's process, then the composer sends a prompt asking for a
  long reply, typed and sent as a user does (``ConversationsView.send``); the worst gap from the
  reply's first streamed piece until PIECES pieces arrived (then the reply is stopped, as a
  user would) or it ended. The model runs in its own process under the engine's.
- ``idle SECONDS``: the baseline heartbeat in a bare, idle ``QMainWindow``.

Times are ``time.monotonic()`` (system-wide on Linux): the parent compares them with its own.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any, NamedTuple

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication, QLabel, QMainWindow

BEAT_MS = 10
STALL_MS = 33.0
LOCAL_WARM_UP = "Say hello."
LOCAL_PROMPT = (
    "Write a long story, at least five paragraphs, about a harbour town, its boats, "
    "its fishermen and a storm."
)


def say(report: dict[str, Any]) -> None:
    """Print the one JSON line the parent reads."""
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()


class CollectorPasses:
    """Every garbage-collector pass in this process from now on: when it began and ended, and
    its generation. A pass holds the GIL throughout: no Python thread runs meanwhile, the GUI
    thread's included."""

    def __init__(self) -> None:
        self.passes: list[tuple[float, float, int]] = []
        self._began = 0.0
        gc.callbacks.append(self._seen)

    def _seen(self, phase: str, info: dict[str, Any]) -> None:
        now = time.monotonic()
        if phase == "start":
            self._began = now
        else:
            self.passes.append((self._began, now, int(info["generation"])))

    def report(self, start: float, end: float, gap: tuple[float, float] | None) -> dict[str, Any]:
        """The passes that ended between ``start`` and ``end``, and how much of ``gap`` (the
        worst heartbeat gap) was spent in a pass."""
        within = [(a, b, g) for a, b, g in self.passes if start <= b <= end]
        in_gap = 0.0
        if gap is not None:
            in_gap = sum(max(0.0, min(b, gap[1]) - max(a, gap[0])) for a, b, _ in within)
        return {
            "gc_passes": len(within),
            "gc_full_passes": sum(1 for _, _, g in within if g == 2),
            "gc_longest_ms": round(max(((b - a) * 1e3 for a, b, _ in within), default=0.0), 1),
            "worst_gap_in_gc_ms": round(in_gap * 1e3, 1),
        }


class _Counter:
    """A running total Linux keeps in a ``/proc`` file, in seconds (0 where the system does not
    say): field ``index`` of the file's first line, times ``unit_s``. The file stays open: it is
    read at every beat, on the thread being measured, with one ``pread``."""

    def __init__(self, path: str, index: int, unit_s: float) -> None:
        self._index = index
        self._unit_s = unit_s
        try:
            self._fd: int | None = os.open(path, os.O_RDONLY)
        except OSError:
            self._fd = None

    def seconds(self) -> float:
        if self._fd is None:
            return 0.0
        try:
            return int(os.pread(self._fd, 128, 0).split()[self._index]) * self._unit_s
        except (OSError, IndexError, ValueError):
            return 0.0

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _run_queue() -> _Counter:
    """The GUI thread's time so far ready to run but waiting for a core (``schedstat``, ns)."""
    return _Counter("/proc/thread-self/schedstat", 1, 1e-9)


def _steal() -> _Counter:
    """The machine's CPU time taken by the hypervisor so far (``steal`` in ``/proc/stat``, all
    cores, in clock ticks of 10 ms): a virtual machine's thread that was "running" but got no
    real CPU shows in no other counter."""
    return _Counter("/proc/stat", 8, 1.0 / os.sysconf("SC_CLK_TCK"))


class _Threads:
    """Every thread of this process and the CPU each has used so far (its ``schedstat``, ns),
    read at every beat: which threads worked in a gap. A thread is named by its Python name,
    else by the name the system gives it (Qt's threads)."""

    def __init__(self) -> None:
        self._counters: dict[int, _Counter] = {}
        self._names: dict[int, str] = {}
        """Python names, for good (a thread just started may not know its id yet: one without
        is looked up again at the next beat, meanwhile under its ``_system`` name)."""
        self._system: dict[int, str] = {}

    def seconds(self) -> dict[int, float]:
        """Each live thread's CPU so far, by thread id."""
        try:
            tids = {int(tid) for tid in os.listdir("/proc/self/task")}
        except OSError:
            return {}
        for gone in self._counters.keys() - tids:
            self._counters.pop(gone).close()
        for tid in tids - self._counters.keys():  # new, or a new thread under a finished one's id
            self._counters[tid] = _Counter(f"/proc/self/task/{tid}/schedstat", 0, 1e-9)
            self._names.pop(tid, None)
            self._system.pop(tid, None)
        unnamed = tids - self._names.keys()
        if unnamed:
            python = {thread.native_id: thread.name for thread in threading.enumerate()}
            for tid in unnamed:
                if tid in python:
                    self._names[tid] = python[tid]
                elif tid not in self._system:
                    self._system[tid] = _system_name(tid)
        return {tid: counter.seconds() for tid, counter in self._counters.items()}

    def split(self, before: dict[int, float], after: dict[int, float]) -> dict[str, float]:
        """The CPU (ms) each thread used between two readings, busiest first, over 0.5 ms."""
        spent: dict[str, float] = {}
        for tid, now in after.items():
            ms = (now - before.get(tid, 0.0)) * 1e3
            if ms > 0.5:
                name = self._names.get(tid) or self._system.get(tid) or str(tid)
                spent[name] = round(spent.get(name, 0.0) + ms, 1)
        return dict(sorted(spent.items(), key=lambda item: -item[1]))


def _system_name(tid: int) -> str:
    try:
        with open(f"/proc/self/task/{tid}/comm", encoding="utf-8") as comm:
            return comm.read().strip()
    except OSError:
        return str(tid)


class _Gap(NamedTuple):
    """The wait between two beats, and whose time it was (ms)."""

    at: float
    """The first beat (monotonic)."""
    until: float
    """The beat that ended it."""
    wall_ms: float
    gui_ms: float
    """The GUI thread's CPU."""
    process_ms: float
    """The whole process's CPU."""
    queued_ms: float
    """The GUI thread ready to run with no core free."""
    stolen_ms: float
    """The machine's CPU taken by the hypervisor (both cores, 10 ms ticks)."""
    threads: dict[str, float]
    """Each thread's CPU, by name (see ``_Threads.split``)."""


class Heartbeat:
    """A 10 ms ``QTimer`` and, at every beat, the time, the GUI thread's CPU, the process's CPU
    and the GUI thread's wait for a core (and, given one, the collector's passes meanwhile).
    Made on the GUI thread."""

    def __init__(self, collector: CollectorPasses | None = None) -> None:
        self.collector = collector
        self._queue = _run_queue()
        self._steal = _steal()
        self._threads = _Threads()
        self._beats: list[_Beat] = []
        self._per_thread: list[dict[int, float]] = []
        self._beat()
        self.timer = QTimer()
        self.timer.setInterval(BEAT_MS)
        self.timer.timeout.connect(self._beat)
        self.timer.start()

    def _beat(self) -> None:
        self._beats.append(
            (
                time.monotonic(),
                time.thread_time(),
                time.process_time(),
                self._queue.seconds(),
                self._steal.seconds(),
            )
        )
        self._per_thread.append(self._threads.seconds())

    def gaps(self, start: float = 0.0, end: float = float("inf")) -> list[_Gap]:
        """The waits between two beats, for beats that came between ``start`` and ``end`` (the
        gap that ends a stall counts)."""
        return [
            _gap(a, b, self._threads.split(a_threads, b_threads))
            for (a, a_threads), (b, b_threads) in pairwise(
                zip(self._beats, self._per_thread, strict=True)
            )
            if start <= b[0] <= end
        ]

    def report(self, start: float = 0.0, end: float = float("inf")) -> dict[str, Any]:
        """The worst gap; how the gaps spread (the 99th percentile, the number over a frame's
        33 ms): one gap decides the worst, many the spread; and whose time the gaps were.

        Whose time: the GUI thread's CPU in a gap is the window's own work (a beat cannot come
        while it runs); the rest of the process's CPU there is its other threads (holding the
        GIL the GUI thread waits for, or working beside it without the GIL, as SQLite does);
        ``queued``: how long the GUI thread was ready to run but had no core (the machine's
        other processes had them). What is left of the gap, the GUI thread was waiting: for
        the GIL, or for an event. ``longest_gui_busy_ms`` is the most CPU the GUI thread spent
        between two beats: the longest the window's own work kept a beat waiting. ``stalls``:
        the gaps over a frame, longest first, each ``[seconds from start, gap ms, GUI thread
        CPU ms, other threads' CPU ms, queued ms, stolen ms, {thread: CPU ms}]``. ``stolen``:
        the machine's CPU the hypervisor took meanwhile (both cores, in 10 ms ticks;
        ``stolen_ms`` over the whole window): on a virtual machine a thread it stops looks as if
        it were waiting. ``worst_gap_threads_cpu_ms``: the CPU each thread used in the worst
        gap (the GUI thread is ``MainThread``)."""
        gaps = sorted(self.gaps(start, end), key=lambda gap: gap.wall_ms)
        walls = [gap.wall_ms for gap in gaps]
        report: dict[str, Any] = {
            "worst_gap_ms": walls[-1] if walls else 0.0,
            "p99_gap_ms": walls[int(0.99 * (len(walls) - 1))] if walls else 0.0,
            "gaps_over_33ms": sum(1 for wall in walls if wall > STALL_MS),
            "beats": len(walls),
        }
        if gaps:
            worst = gaps[-1]
            report.update(
                worst_gap_gui_cpu_ms=round(worst.gui_ms, 1),
                worst_gap_other_threads_cpu_ms=round(_others(worst), 1),
                worst_gap_queued_ms=round(worst.queued_ms, 1),
                worst_gap_stolen_ms=round(worst.stolen_ms, 1),
                worst_gap_threads_cpu_ms=worst.threads,
                stolen_ms=round(sum(gap.stolen_ms for gap in gaps), 1),
                longest_gui_busy_ms=round(max(gap.gui_ms for gap in gaps), 1),
                stalls=[
                    [
                        round(gap.at - start, 3),
                        round(gap.wall_ms, 1),
                        round(gap.gui_ms, 1),
                        round(_others(gap), 1),
                        round(gap.queued_ms, 1),
                        round(gap.stolen_ms, 1),
                        gap.threads,
                    ]
                    for gap in reversed(gaps[-8:])
                    if gap.wall_ms > STALL_MS
                ],
            )
        if self.collector is not None:
            report.update(
                self.collector.report(start, end, (gaps[-1].at, gaps[-1].until) if gaps else None)
            )
        return report


_Beat = tuple[float, float, float, float, float]


def _gap(a: _Beat, b: _Beat, threads: dict[str, float]) -> _Gap:
    """The gap between beats ``a`` and ``b``: every counter's difference, in ms."""
    wall, gui, process, queued, stolen = ((y - x) * 1e3 for x, y in zip(a, b, strict=True))
    return _Gap(a[0], b[0], wall, gui, process, queued, stolen, threads)


def _others(gap: _Gap) -> float:
    """The CPU of the process's other threads in ``gap``."""
    return max(0.0, gap.process_ms - gap.gui_ms)


class FirstPaint(QObject):
    """Notes when a window of ``kind`` is first painted (the paint event, then the loop turn
    after it: the pixels are on the surface by then)."""

    def __init__(self, kind: type) -> None:
        super().__init__()
        self.kind = kind
        self.at: float | None = None
        self.seen = False
        self.then: Callable[[float], None] | None = None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt API
        if (
            not self.seen
            and event.type() == QEvent.Type.Paint
            and isinstance(getattr(watched, "window", lambda: None)(), self.kind)
        ):
            self.seen = True
            QTimer.singleShot(0, self._painted)
        return False

    def _painted(self) -> None:
        self.at = time.monotonic()
        if self.then is not None:
            self.then(self.at)


def bare(seconds: float | None) -> int:
    """The baseline window: first paint, or an idle heartbeat for ``seconds``."""
    app = QApplication(sys.argv[:1])
    painted = FirstPaint(QMainWindow)
    app.installEventFilter(painted)
    window = QMainWindow()
    window.setCentralWidget(QLabel("Hello"))
    window.resize(1100, 720)
    window.show()
    if seconds is None:

        def painted_then_quit(at: float) -> None:
            say({"painted": at})
            app.quit()

        painted.then = painted_then_quit
    else:
        # From the first paint on, as the real window's heartbeat starts once its data is
        # shown: a heartbeat started before would time the bare window's own first layout and
        # paint (some 70 ms of its GUI thread's CPU in one gap on the test machine), not idling.
        beats: list[Heartbeat] = []

        def done() -> None:
            say(beats[0].report())
            app.quit()

        def painted_then_beat(at: float) -> None:
            beats.append(Heartbeat())
            QTimer.singleShot(int(seconds * 1000), done)

        painted.then = painted_then_beat
    return app.exec()


def real_app(mode: str, data_dir: str, seconds: float) -> int:
    """Launch the real app on ``data_dir`` and measure per ``mode``."""
    # Only what the app itself loads before its first paint: the modes' hooks load after it,
    # or (the reconcile hook) only in their own mode, so ``paint`` times the app, not the probe.
    from mooring.bootstrap import run_gui
    from mooring.cli.parser import build_parser
    from mooring.ui.app import ensure_app
    from mooring.ui.main_window import MainWindow

    report: dict[str, Any] = {}
    ready: dict[str, float] = {}
    app = ensure_app()
    painted = FirstPaint(MainWindow)
    app.installEventFilter(painted)
    jobs: list[asyncio.Future[None]] = []

    collector = CollectorPasses()

    def on_ready(window: MainWindow) -> None:
        ready["at"] = time.monotonic()
        beat = Heartbeat(collector)

        async def paint() -> None:
            def close(at: float) -> None:
                report["painted"] = at
                report["ready"] = ready["at"]
                window.close()

            if painted.at is not None:
                close(painted.at)
            else:
                painted.then = close

        async def reconcile() -> None:
            # The engine reconciles at launch, in its own process; asked here, a
            # reconciliation joins the pass under way and returns as it ends (or the run is
            # cut after ``seconds``).
            start = time.monotonic()
            end: float | None = None
            try:
                async with asyncio.timeout(seconds):
                    await window.host.reconcile()
                end = time.monotonic()
            except TimeoutError:
                pass
            report.update(beat.report(start, end or time.monotonic()))
            report["reconcile_s"] = None if end is None else end - start
            report["reconcile_started"] = start
            report["cut_after_s"] = None if end is not None else seconds
            window.close()

        async def cards() -> None:
            from mooring.core.events import ReplyDidStream, TaskDidChange
            from mooring.link import wire

            # The window is a face: what changes reaches it as frames from the engine. The
            # probe feeds it such frames, encoded and decoded as the link does, to the link's
            # receiving end (the bench's only hook): the window's work per update, unpickling
            # included, without an engine process competing for the same two cores.
            from mooring.link.client import Remote

            host = window.host
            assert isinstance(host, Remote)  # the window's host is the engine's, through a link
            link = host.link
            conversation = window.conversations.messages.conversation_id or "none"
            window.show_view(window.tasks)
            records = [v.record for v in await window.host.tasks(active=True)]
            streaming = True

            def tell(event: object) -> None:
                frame = wire.dumps((wire.EVENT, event))
                link._receive(wire.loads(frame[wire.HEADER.size :]))

            async def stream() -> None:
                n = 0
                while streaming:
                    tell(ReplyDidStream(conversation, "bench-reply", f"word{n} "))
                    n += 1
                    await asyncio.sleep(0.02)

            streamer = asyncio.ensure_future(stream())
            start = time.monotonic()
            updates = 0
            while time.monotonic() - start < seconds:
                for record in records:
                    changed = record.evolve(
                        at=datetime.now(UTC), status_message=f"validated {updates:,} rows"
                    )
                    tell(TaskDidChange(changed, previous_state=changed.state))
                    updates += 1
                    await asyncio.sleep(0)
            streaming = False
            await streamer
            report.update(beat.report(start, time.monotonic()))
            report["card_updates"] = updates
            report["cards"] = len(records)
            window.close()

        async def big_result() -> None:
            # Typed and sent from the composer, as a user would: the model (scripted by the
            # bench) asks for a tool whose result is megabytes of text; the engine calls it,
            # stores the round and answers the model, and the window shows the round.
            view = window.conversations
            window.show_view(view)
            ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()

            def on_end(_id: str) -> None:
                if not ended.done():
                    ended.set_result(None)

            view.turn_ended.connect(on_end)
            start = time.monotonic()
            view.composer.setPlainText("Show me every supplier row")
            view.send_button.click()
            async with asyncio.timeout(seconds):
                await ended
            turn_s = time.monotonic() - start
            await asyncio.sleep(0.5)  # what the turn's last events lay out and paint
            report.update(beat.report(start, time.monotonic()))
            report["turn_s"] = turn_s
            report["transcript"] = [
                str(view.messages.index(r, 0).data(Qt.ItemDataRole.AccessibleTextRole))[:120]
                for r in range(view.messages.rowCount())
            ]
            window.close()

        async def local() -> None:
            from mooring.core.events import Event, ReplyDidStream, TurnDidEnd

            view = window.conversations
            window.show_view(view)
            wanted = int(seconds)
            pieces: list[float] = []
            chars = [0]
            enough = asyncio.Event()

            def on_event(event: Event) -> None:
                if isinstance(event, ReplyDidStream) and event.delta:
                    pieces.append(time.monotonic())
                    chars[0] += len(event.delta)
                    if len(pieces) >= wanted:
                        enough.set()
                elif isinstance(event, TurnDidEnd):
                    enough.set()

            view.composer.setPlainText(LOCAL_WARM_UP)  # starts the model's process
            await view.send()
            unsubscribe = window.host.events.subscribe(on_event)
            try:
                view.composer.setPlainText(LOCAL_PROMPT)
                pressed = time.monotonic()
                sent = asyncio.ensure_future(view.send())
                await enough.wait()
                end = time.monotonic()
                if not sent.done():
                    view.stop_reply()
                await sent
            finally:
                unsubscribe()
            if not pieces:
                raise RuntimeError("the local model's reply streamed nothing")
            report.update(beat.report(pieces[0], end))
            report["pieces"] = len(pieces)
            report["chars"] = chars[0]
            report["streamed_s"] = end - pieces[0]
            report["first_piece_s"] = pieces[0] - pressed
            window.close()

        work = {
            "paint": paint,
            "reconcile": reconcile,
            "cards": cards,
            "bigresult": big_result,
            "local": local,
        }[mode]

        async def guarded() -> None:  # a probe that breaks says so and ends, never hangs
            try:
                await work()
            except Exception as exc:  # noqa: BLE001 - reported, and the probe ends
                report["error"] = f"{type(exc).__name__}: {exc}"
                window.close()

        jobs.append(asyncio.ensure_future(guarded()))

    code = int(
        run_gui(build_parser().parse_args(["--data-dir", data_dir, "gui"]), on_ready=on_ready)
    )
    say(report)
    return code


def plain_window_loop() -> None:
    """Run the window as qasync alone would: qasync's own loop (a Qt timer per callback and
    per deadline) with only the async-generator hooks, and CPython's collector left to its own
    rule. The ``plain`` figures beside each stall measure what ``ui/loop.py`` and
    ``ui/collector.py`` still buy, now that the engine does the host's work elsewhere."""
    import qasync

    import mooring.ui.loop as loop_module
    from mooring.ui.collector import FullPassesBetweenBursts

    class PlainLoop(qasync.QEventLoop):  # type: ignore[misc]  # qasync ships no types
        def run_forever(self) -> Any:
            with loop_module.async_generators_closed_on(self):
                return super().run_forever()

    def plain(app: QApplication) -> asyncio.AbstractEventLoop:
        made: asyncio.AbstractEventLoop = PlainLoop(app)
        return made

    loop_module.qt_event_loop = plain  # looked up at each use
    FullPassesBetweenBursts.start = lambda self: None  # type: ignore[method-assign]


def main() -> int:
    """Dispatch on the mode (see the module docstring); ``--plain-loop`` after the mode's
    arguments runs the window on :func:`plain_window_loop`."""
    if sys.argv[-1] == "--plain-loop":
        sys.argv.pop()
        plain_window_loop()
    mode = sys.argv[1]
    if mode == "bare":
        return bare(None)
    if mode == "idle":
        return bare(float(sys.argv[2]))
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
    return real_app(mode, sys.argv[2], seconds)


if __name__ == "__main__":
    raise SystemExit(main())
