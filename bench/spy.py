"""Sampling profiles of running processes with ``py-spy`` (every thread: SQLite work runs on the
database thread, the demo server's import in worker threads), summarised as text.

``Spy.attach(pid, raw)`` records until :meth:`Spy.stop`; :func:`summary` turns the collapsed
stacks into the share of samples per area (SQLite, the MCP SDK, HTTP, pydantic, tracing, ...)
and the heaviest functions, inclusive and self.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

AREAS = {
    "SQLite / SQLAlchemy": ("(sqlite3", "(sqlalchemy/"),
    "MCP SDK": ("(mcp/",),
    "HTTP (httpx2/httpcore/h11/uvicorn/starlette)": (
        "(httpx",
        "(httpcore",
        "(h11/",
        "(uvicorn/",
        "(starlette/",
        "(sse_starlette",
    ),
    "pydantic": ("(pydantic",),
    "OpenTelemetry": ("(opentelemetry/",),
    "logging": ("(logging/",),
    "json": ("(json/",),
    "imports (module loading)": ("(<frozen importlib", "(importlib/"),
    "Mooring: storage": ("(mooring/storage/",),
    "Mooring: mcp layer": ("(mooring/mcp/",),
    "Mooring: services": ("(mooring/services/",),
    "Mooring: core": ("(mooring/core/",),
    "demo server code": ("(mooring/demo_server/",),
    "Mooring: other": ("(mooring/",),
    "threads and queues (hand-offs, waits)": ("(threading.py", "(queue.py", "(concurrent/"),
    "asyncio / anyio machinery": ("(asyncio/", "(anyio/", "(selectors.py"),
}
"""Where a sample's time is charged: the innermost frame that matches one of these."""


def py_spy() -> str | None:
    """The ``py-spy`` executable next to this Python, or on the path."""
    beside = Path(sys.executable).with_name("py-spy")
    return str(beside) if beside.exists() else shutil.which("py-spy")


@dataclass
class Spy:
    """A ``py-spy record`` attached to one process."""

    process: subprocess.Popen[bytes]
    raw: Path

    @classmethod
    def attach(cls, pid: int, raw: Path, rate: int = 50) -> Spy | None:
        """Start recording ``pid`` into ``raw`` (collapsed stacks); ``None`` without py-spy."""
        exe = py_spy()
        if exe is None:
            return None
        options = ["--format", "raw", "--rate", str(rate), "--nonblocking", "--output", str(raw)]
        process = subprocess.Popen(
            [exe, "record", "--pid", str(pid), *options],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return cls(process, raw)

    def stop(self) -> None:
        """Stop recording (it also stops by itself when the process ends); the file is written."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def summary(raw: Path, title: str, top: int = 25) -> str:
    """Share of samples per area and the heaviest functions of a collapsed-stack file."""
    stacks: list[tuple[list[str], int]] = []
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            stacks.append((stack.split(";"), int(count)))
    total = sum(n for _s, n in stacks)
    if not total:
        return f"{title}: no samples\n"
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    areas: Counter[str] = Counter()
    for frames, n in stacks:
        for frame in set(frames):
            inclusive[frame] += n
        own[frames[-1]] += n
        leaf_area = "other"
        for frame in reversed(frames):  # the innermost known frame on the stack owns the sample
            hit = next((a for a, keys in AREAS.items() if any(k in frame for k in keys)), None)
            if hit is not None:
                leaf_area = hit
                break
        areas[leaf_area] += n
    lines = [
        f"{title}: {total} samples (busy threads only)",
        "",
        "by area (innermost known frame):",
    ]
    lines += [f"  {n * 100 / total:5.1f} %  {area}" for area, n in areas.most_common()]
    lines += ["", f"top {top} functions, inclusive:"]
    lines += [f"  {n * 100 / total:5.1f} %  {f}" for f, n in inclusive.most_common(top)]
    lines += ["", f"top {top} functions, self:"]
    lines += [f"  {n * 100 / total:5.1f} %  {f}" for f, n in own.most_common(top)]
    return "\n".join(lines) + "\n"
