"""Run the benchmark suite: ``python -m bench [--size small|full] [--only id,id] [--out FILE]``.

Prints a table and writes ``build/bench/results.json`` (see ``docs/benchmarks.md``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from bench import (
    bench_chat,
    bench_cli,
    bench_import,
    bench_local,
    bench_notify,
    bench_providers,
    bench_scale,
    bench_tracing,
    bench_transcript,
    bench_window,
    suite,
)
from bench.suite import REPO, Result, Size, machine, table, unmeasured

Runner = Callable[[Size, Path, Callable[[str], bool]], list[Result]]
"""A benchmark module's ``run``: the figures of its ids that are wanted."""

MODULES: tuple[tuple[tuple[str, ...], Runner], ...] = (
    (bench_cli.IDS, bench_cli.run),
    (bench_scale.IDS, bench_scale.run),
    (bench_window.IDS, bench_window.run),
    (bench_notify.IDS, bench_notify.run),
    (bench_chat.IDS, bench_chat.run),
    (bench_providers.IDS, bench_providers.run),
    (bench_local.IDS, bench_local.run),
    (bench_import.IDS, bench_import.run),
    (bench_transcript.IDS, bench_transcript.run),
    # Last: it installs a tracer provider for this process and shuts it down.
    (bench_tracing.IDS, bench_tracing.run),
)
ALL_IDS = tuple(i for ids, _run in MODULES for i in ids)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--size", choices=["small", "full"], default="full")
    parser.add_argument(
        "--only", metavar="ID,ID", help=f"run only these figures (of: {', '.join(ALL_IDS)})"
    )
    parser.add_argument("--out", type=Path, default=REPO / "build" / "bench" / "results.json")
    args = parser.parse_args(argv)
    if args.only:
        unknown = set(args.only.split(",")) - set(ALL_IDS)
        if unknown:
            parser.error(f"unknown id(s): {', '.join(sorted(unknown))}")
    return args


def _stop_engines(folder: Path) -> None:
    """End the engine of every data folder a benchmark left under ``folder`` (as a user would:
    ``mooring agent stop``), so none outlives its folder or weighs on the next benchmark."""
    for lock in folder.rglob("engine.lock"):
        subprocess.run(
            [sys.executable, "-m", "mooring", "--data-dir", str(lock.parent), "agent", "stop"],
            capture_output=True,
            timeout=60,
            check=False,
        )


def main(argv: list[str] | None = None) -> int:
    """Run what was asked, print the table, write the JSON; 0 unless the suite itself broke."""
    args = parse(argv)
    suite.OUT_DIR = args.out.parent
    size = Size.named(args.size)
    only = set(args.only.split(",")) if args.only else set(ALL_IDS)
    report: dict[str, object] = {"machine": machine(), "size": size.name, "results": []}
    results: list[Result] = []
    started = time.monotonic()
    for ids, run in MODULES:
        wanted = [i for i in ids if i in only]
        if not wanted:
            continue
        with tempfile.TemporaryDirectory(prefix="mooring-bench-") as tmp:
            try:
                got = run(size, Path(tmp), lambda i: i in only)
            except Exception as exc:  # noqa: BLE001 - one broken benchmark must not lose the rest
                traceback.print_exc()
                got = []
                reason = f"the benchmark failed: {type(exc).__name__}: {exc}"[:400]
            else:
                reason = "the benchmark produced no figure"
            finally:
                _stop_engines(Path(tmp))
        done = {r["id"] for r in got}
        for missing in (i for i in wanted if i not in done):
            got.append(unmeasured(missing, missing, unit="", target="", reason=reason))
        results += got
        print(f"[bench] {', '.join(wanted)} done at {time.monotonic() - started:.0f} s", flush=True)
    order = {i: n for n, i in enumerate(ALL_IDS)}
    results.sort(key=lambda r: order.get(r["id"], len(order)))
    report["results"] = results
    report["elapsed_s"] = round(time.monotonic() - started, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(table(results))
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
