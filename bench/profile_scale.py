"""Where the scale figures' time goes: the same set-up as ``bench_scale``, under ``pyinstrument``.

``python -m bench.profile_scale [--size small|full] [--watch-s S]`` starts the demo-server
fleet, creates the tasks through ``Host.call``, then profiles ``mooring reconcile`` and ``mooring
tasks watch --timeout S`` (tracing off) and writes the text reports to
``build/bench/profile-reconcile.txt`` and ``build/bench/profile-watch.txt``.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.fleet import Fleet, child_env, data_folder, populate
from bench.suite import REPO, Size

OUT = REPO / "build" / "bench"


def _profiled(out: Path, data_dir: Path, *args: str) -> None:
    profiler = [sys.executable, "-m", "pyinstrument", "--renderer", "text", "--outfile", str(out)]
    subprocess.run(
        [*profiler, "-m", "mooring", "--data-dir", str(data_dir), *args],
        env=child_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
        timeout=900,
    )
    print(f"written {out}")


def main() -> None:
    """Set up, profile both commands, write the reports."""
    parser = argparse.ArgumentParser(prog="python -m bench.profile_scale")
    parser.add_argument("--size", choices=["small", "full"], default="full")
    parser.add_argument("--watch-s", type=float, default=30.0)
    args = parser.parse_args()
    size = Size.named(args.size)
    OUT.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory(prefix="mooring-profile-") as tmp,
        Fleet.running(Path(tmp) / "fleet", size.servers, size.poll_interval_ms) as fleet,
    ):
        paths = data_folder(Path(tmp) / "big", tracing=False)
        urls = [s.url for s in fleet.servers]
        asyncio.run(populate(paths, urls, size.tasks))
        _profiled(OUT / "profile-reconcile.txt", paths.data_dir, "reconcile")
        _profiled(
            OUT / "profile-watch.txt",
            paths.data_dir,
            "tasks",
            "watch",
            "--timeout",
            f"{args.watch_s:g}",
        )


if __name__ == "__main__":
    main()
