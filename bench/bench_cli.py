"""``cli_start``: how long a one-shot CLI command takes on an empty data folder;
``detached_call``: what ``mooring call --detach`` costs with the engine running.

``cli_start``: ``mooring tasks list`` (a fresh data folder: the database is created and
migrated on the first run, so one warm-up run comes first) versus ``python -c "import
mooring"``; the sides alternate and the medians of whole-process wall times are compared.

``detached_call``: a real stdio demo server behind the data folder's engine (started by the
first, warm-up call); each run is a whole ``mooring call bench slow_compute --detach`` (approval
by rule, the ledger record, ``tools/call``, the task created) versus ``python -c "import
mooring"``, alternating; the medians of the child's CPU time (user + system, from ``wait4``)
are compared. The engine's own CPU is the work itself and is not counted.
"""

from __future__ import annotations

import compileall
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.fleet import REPO, child_env, data_folder
from bench.suite import Result, Size, measured

IDS = ("cli_start", "detached_call")
TARGET = 5.0
DETACHED_TARGET = 10.0


def _wall(argv: Sequence[str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        list(argv), env=child_env(), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    return time.perf_counter() - start


def _cpu(argv: Sequence[str]) -> float:
    """The CPU seconds (user + system) the whole child process used."""
    child = subprocess.Popen(
        list(argv), env=child_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _pid, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    err = child.stderr.read() if child.stderr else b""
    if child.returncode != 0:
        raise RuntimeError(f"{argv[3:]} exited {child.returncode}: {err.decode()[-400:]}")
    return usage.ru_utime + usage.ru_stime


def run(size: Size, folder: Path, wanted: Callable[[str], bool]) -> list[Result]:
    """The ``cli_start`` and ``detached_call`` figures."""
    results = []
    if wanted("cli_start"):
        results += _cli_start(size, folder)
    if wanted("detached_call"):
        results += _detached_call(size, folder)
    return results


def _detached_call(size: Size, folder: Path) -> list[Result]:
    paths = data_folder(folder / "detached", tracing=False)
    mooring = [sys.executable, "-m", "mooring", "--data-dir", str(paths.data_dir)]
    store = folder / "detached-demo.sqlite3"
    add = [*mooring, "servers", "add", "bench", "--command", sys.executable]
    add += [
        f"--arg={a}"
        for a in ("-m", "mooring.demo_server", "--conformance-fixtures", "--store", str(store))
    ]
    rule = [*mooring, "rules", "add", "bench", "slow_compute", "allow"]
    for setup in (add, rule):
        done = subprocess.run(setup, env=child_env(), check=False, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{setup[3:6]} exited {done.returncode}: {done.stderr[-400:]}")
    call = [*mooring, "call", "bench", "slow_compute", "--detach", "--args", '{"seconds": 600}']
    bare = [sys.executable, "-c", "import mooring"]
    compileall.compile_dir(REPO / "app" / "mooring", quiet=1)
    try:
        _cpu(call)  # starts the engine and the server; warms the OS caches
        ours, base = [], []
        for _ in range(size.cli_runs):
            ours.append(_cpu(call))
            base.append(_cpu(bare))
    finally:
        stop = [*mooring, "agent", "stop"]
        subprocess.run(stop, env=child_env(), check=False, capture_output=True, timeout=120)
    return [
        _median_ratio(
            "detached_call",
            "`mooring call … --detach` with the engine running: the command's CPU (median)",
            ours,
            base,
            DETACHED_TARGET,
        )
    ]


def _cli_start(size: Size, folder: Path) -> list[Result]:
    empty = data_folder(folder / "empty", tracing=True).data_dir
    listing = [sys.executable, "-m", "mooring", "--data-dir", str(empty), "tasks", "list"]
    bare = [sys.executable, "-c", "import mooring"]
    compileall.compile_dir(REPO / "app" / "mooring", quiet=1)
    _wall(listing)  # creates and migrates the database once
    ours, base = [], []
    for _ in range(size.cli_runs):
        ours.append(_wall(listing))
        base.append(_wall(bare))
    return [
        _median_ratio(
            "cli_start",
            "`mooring tasks list` on an empty data folder, whole process (median)",
            ours,
            base,
            TARGET,
        )
    ]


def _median_ratio(
    result_id: str, what: str, ours: list[float], base: list[float], target: float
) -> Result:
    """The median of ``ours`` (seconds) against the median of ``base``, met at ``target`` times."""
    value, baseline = statistics.median(ours), statistics.median(base)
    return measured(
        result_id,
        what,
        value=value * 1e3,
        baseline=baseline * 1e3,
        unit="ms",
        target=f"<= {target:g}x",
        met=value / baseline <= target,
        runs=len(ours),
    )
