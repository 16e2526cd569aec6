"""The window's figures (offscreen Qt, each launch a child process: ``bench.gui_probe``).

- ``first_paint_big``: a data folder with ``size.messages`` messages and ``size.task_records``
  task records (seeded through the storage layer); from spawning ``run_gui`` to the main
  window's first paint, versus spawning a bare ``QMainWindow`` script to its first paint
  (medians of alternating launches). The time until the window's data is shown ("ready") is
  reported beside it.
- ``gui_stall_cards``: the worst gap of a 10 ms heartbeat while ``size.cards`` task cards update
  (each change saved through the ledger, then announced as the monitor does) and a reply streams
  into the open conversation, versus the same heartbeat in an idle bare window.
"""

from __future__ import annotations

import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from bench.bench_scale import STALL_TARGET_MS, gap_spread, gui_probe, plain_loop
from bench.fleet import data_folder
from bench.seed import seed
from bench.suite import Result, Size, measured, unmeasured

IDS = ("first_paint_big", "gui_stall_cards")
PAINT_TARGET = 1.5
LAUNCHES = {"small": 1, "full": 3}


def _launch(*args: str) -> tuple[float, dict[str, float]]:
    spawned = time.monotonic()
    report = gui_probe(*args)
    return report["painted"] - spawned, report


def _first_paint(size: Size, folder: Path) -> Result:
    paths = data_folder(folder / "big", tracing=False)
    seed(paths.database, messages=size.messages, records=size.task_records, working=100)
    ours, base, ready = [], [], []
    for _ in range(LAUNCHES[size.name]):
        painted, report = _launch("paint", str(paths.data_dir))
        ours.append(painted)
        ready.append(report["ready"] - report["painted"] + painted)
        base.append(_launch("bare")[0])
    value, baseline = statistics.median(ours) * 1e3, statistics.median(base) * 1e3
    return measured(
        "first_paint_big",
        f"process start to first paint of the main window, {size.messages:,} messages and "
        f"{size.task_records:,} task records in the database",
        value=value,
        baseline=baseline,
        unit="ms",
        target=f"<= {PAINT_TARGET:g}x",
        met=value / baseline <= PAINT_TARGET,
        ready_ms=round(statistics.median(ready) * 1e3, 1),
        launches=len(ours),
    )


def _cards(size: Size, folder: Path) -> Result:
    paths = data_folder(folder / "cards", tracing=False)
    seed(paths.database, messages=40, records=size.cards, working=size.cards)
    shown = gui_probe("cards", str(paths.data_dir), str(size.stall_s))
    plain = (
        gui_probe("cards", str(paths.data_dir), str(size.stall_s), "--plain-loop")
        if size.name == "full"
        else None
    )
    idle = gui_probe("idle", str(size.stall_s))
    value, base = float(shown["worst_gap_ms"]), float(idle["worst_gap_ms"])
    return measured(
        "gui_stall_cards",
        f"worst gap of a 10 ms QTimer heartbeat while {shown['cards']} task cards update "
        f"({shown['card_updates']} updates in {size.stall_s:g} s) and a reply streams",
        value=value,
        baseline=base,
        unit="ms",
        target=f"<= {STALL_TARGET_MS:g} ms",
        met=value <= STALL_TARGET_MS,
        **gap_spread(shown, idle),
        **plain_loop(plain),
    )


def run(size: Size, folder: Path, wanted: Callable[[str], bool]) -> list[Result]:
    """The wanted window figures (one that cannot run says why)."""
    results = []
    for id_, measure, what in (
        ("first_paint_big", _first_paint, "first paint with a big database"),
        ("gui_stall_cards", _cards, "heartbeat gap while cards update and a reply streams"),
    ):
        if not wanted(id_):
            continue
        try:
            results.append(measure(size, folder))
        except (RuntimeError, subprocess.TimeoutExpired, KeyError) as exc:
            results.append(unmeasured(id_, what, unit="ms", target="", reason=str(exc)[-300:]))
    return results
