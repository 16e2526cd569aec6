"""``cli_start``: how long a one-shot CLI command takes on an empty data folder.

``mooring tasks list`` (a fresh data folder: the database is created and migrated on the first
run, so one warm-up run comes first) versus ``python -c "import mooring"``; the sides alternate
and the medians of whole-process wall times are compared.
"""

from __future__ import annotations

import compileall
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.fleet import REPO, child_env, data_folder
from bench.suite import Result, Size, measured

IDS = ("cli_start",)
TARGET = 5.0


def _wall(argv: Sequence[str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        list(argv), env=child_env(), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    return time.perf_counter() - start


def run(size: Size, folder: Path, wanted: Callable[[str], bool]) -> list[Result]:
    """The ``cli_start`` figure."""
    if not wanted("cli_start"):
        return []
    empty = data_folder(folder / "empty", tracing=True).data_dir
    listing = [sys.executable, "-m", "mooring", "--data-dir", str(empty), "tasks", "list"]
    bare = [sys.executable, "-c", "import mooring"]
    compileall.compile_dir(REPO / "app" / "mooring", quiet=1)
    _wall(listing)  # creates and migrates the database once
    ours, base = [], []
    for _ in range(size.cli_runs):
        ours.append(_wall(listing))
        base.append(_wall(bare))
    value, baseline = statistics.median(ours), statistics.median(base)
    return [
        measured(
            "cli_start",
            "`mooring tasks list` on an empty data folder, whole process (median)",
            value=value * 1e3,
            baseline=baseline * 1e3,
            unit="ms",
            target=f"<= {TARGET:g}x",
            met=value / baseline <= TARGET,
            runs=size.cli_runs,
        )
    ]
