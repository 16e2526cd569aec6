"""Where the scale figures' time goes: the same set-up as ``bench_scale``, sampled by ``py-spy``.

``python -m bench.profile_scale [--size small|full] [--watch-s S]`` starts the demo-server
fleet, creates the tasks through ``Host.call``, then records ``mooring reconcile`` and ``mooring
tasks watch --timeout S`` (tracing off) with ``py-spy`` (every thread) and writes summaries to
``build/bench/profile-reconcile.txt`` and ``build/bench/profile-watch.txt`` (the collapsed
stacks beside them, ``*.raw``, for a flame graph).
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.fleet import Fleet, child_env, data_folder, populate
from bench.spy import Spy, summary
from bench.suite import REPO, Size

OUT = REPO / "build" / "bench"


def _profiled(name: str, data_dir: Path, *args: str) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "mooring", "--data-dir", str(data_dir), *args],
        env=child_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    raw = OUT / f"profile-{name}.raw"
    spy = Spy.attach(process.pid, raw)
    process.wait(timeout=1800)
    if spy is None:
        print("py-spy is not installed: pip install py-spy")
        return
    spy.stop()
    text = summary(raw, f"mooring {' '.join(args)}")
    (OUT / f"profile-{name}.txt").write_text(text)
    print(text)


def main() -> None:
    """Set up, profile both commands, write the summaries."""
    parser = argparse.ArgumentParser(prog="python -m bench.profile_scale")
    parser.add_argument("--size", choices=["small", "full"], default="full")
    parser.add_argument("--watch-s", type=float, default=60.0)
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
        _profiled("reconcile", paths.data_dir, "reconcile")
        _profiled("watch", paths.data_dir, "tasks", "watch", "--timeout", f"{args.watch_s:g}")


if __name__ == "__main__":
    main()
