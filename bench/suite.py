"""The suite's shared shape: result rows, sizes, the machine description, the table and the JSON.

Every benchmark returns :class:`Result` rows; ``python -m bench`` collects them into
``build/bench/results.json``::

    {"machine": {...}, "size": "full",
     "results": [{"id", "what", "value", "baseline", "ratio", "unit", "target", "met", ...}]}

``met`` is ``True``/``False`` when the figure was measured against its target, ``None`` (with
a ``reason``) when it could not be measured, or when the target is "report" only.
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import mooring

REPO = Path(__file__).resolve().parents[1]
OUT_DIR = REPO / "build" / "bench"
"""Where results and profiles go (``python -m bench --out`` moves it: the folder of ``--out``)."""
SizeName = Literal["small", "full"]


@dataclass(frozen=True)
class Size:
    """How big each benchmark runs. ``full`` is issue 16's definition; ``small`` is a smoke run
    that proves every figure can be produced, in seconds (its numbers mean nothing)."""

    name: SizeName
    servers: int
    tasks: int
    poll_interval_ms: int
    watch_s: float
    messages: int
    task_records: int
    cards: int
    stall_s: float
    notify_tasks: int
    chat_rounds: int
    import_rows: int
    cli_runs: int
    reconcile_cut_s: float
    """``gui_stall_reconcile`` stops after this long even if the window still reconciles."""

    @staticmethod
    def named(name: str) -> Size:
        """``small`` or ``full``."""
        if name == "small":
            return Size("small", 2, 6, 1000, 4.0, 300, 60, 12, 1.5, 3, 3, 2_000, 2, 60.0)
        if name == "full":
            return Size(
                "full", 10, 1000, 5000, 60.0, 50_000, 10_000, 200, 10.0, 20, 200, 200_000, 7, 120.0
            )
        raise ValueError(f"unknown size {name!r}: small or full")


Result = dict[str, Any]
"""One row of ``results``."""


def measured(
    id: str,
    what: str,
    *,
    value: float,
    baseline: float | None,
    unit: str,
    target: str,
    met: bool | None,
    ratio: float | None = None,
    **notes: Any,
) -> Result:
    """A measured figure; ``ratio`` defaults to value/baseline."""
    if ratio is None and baseline:
        ratio = value / baseline
    row: Result = {
        "id": id,
        "what": what,
        "value": round(value, 3),
        "baseline": None if baseline is None else round(baseline, 3),
        "ratio": None if ratio is None else round(ratio, 3),
        "unit": unit,
        "target": target,
        "met": met,
    }
    if met is None and "reason" not in notes:
        notes["reason"] = "reported, no pass/fail target"
    row.update(notes)
    return row


PAIRED = (
    "which side first alternating (value, baseline: medians; ratio: geometric mean of the "
    "pairs' ratios)"
)
"""How a figure measured in pairs (:func:`paired`) is taken, for its ``what``."""


def in_turn(block: int, first: str, second: str) -> tuple[str, str]:
    """The order of the two sides in pair ``block``: which goes first alternates, so drift in
    the machine's speed and any edge of going first hit both sides alike over the pairs."""
    return (first, second) if block % 2 == 0 else (second, first)


def paired(
    id: str,
    what: str,
    pairs: Sequence[tuple[float, float]],
    *,
    unit: str,
    target: str,
    limit: float,
    **notes: Any,
) -> Result:
    """A figure from (value, baseline) pairs: medians of each side, and the geometric mean of
    the pairs' ratios as the ratio, met when at most ``limit``."""
    ratios = [value / baseline for value, baseline in pairs]
    ratio = statistics.geometric_mean(ratios)
    return measured(
        id,
        what,
        value=statistics.median(value for value, _ in pairs),
        baseline=statistics.median(baseline for _, baseline in pairs),
        unit=unit,
        target=target,
        met=ratio <= limit,
        ratio=ratio,
        pair_ratios=[round(r, 3) for r in ratios],
        **notes,
    )


def unmeasured(id: str, what: str, *, unit: str, target: str, reason: str) -> Result:
    """A figure that could not be measured in this run, and why."""
    return {
        "id": id,
        "what": what,
        "value": None,
        "baseline": None,
        "ratio": None,
        "unit": unit,
        "target": target,
        "met": None,
        "reason": reason,
    }


def machine() -> dict[str, Any]:
    """What the figures were taken on: CPU, cores, load, Python, OS and Mooring's commit."""
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        commit = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit, dirty = "unknown", ""
    return {
        "cpu_model": cpu,
        "cores": os.cpu_count(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "python": sys.version.split()[0],
        "os": platform.platform(),
        "mooring_version": mooring.__version__,
        "mooring_commit": commit + ("+dirty" if dirty else ""),
    }


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def table(results: list[Result]) -> str:
    """The results as a fixed-width text table (unmeasured rows say why)."""
    head = ("id", "value", "baseline", "ratio", "unit", "target", "met")
    rows = [
        (
            r["id"],
            _cell(r["value"]),
            _cell(r["baseline"]),
            _cell(r["ratio"]) + ("x" if r["ratio"] is not None else ""),
            r["unit"],
            r["target"],
            {True: "yes", False: "NO", None: "—"}[r["met"]],
        )
        for r in results
    ]
    widths = [max(len(str(row[i])) for row in [head, *rows]) for i in range(len(head))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(head, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    for r in results:
        if r["met"] is None and r.get("reason") and r["value"] is None:
            lines.append(f"{r['id']}: not measured: {r['reason']}")
    return "\n".join(lines)
