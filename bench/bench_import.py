"""``import_200k``: the demo server's 200,000-row supplier import, rows per second.

The generated large sample (``mooring.demo_server.samples.write_large``) is imported by a demo
server over HTTP, started by the raw SDK client (nothing of Mooring's host in between: this is
the server's own throughput), polled every 100 ms; timed from the task's creation to the
completed ``tasks/get``. A second run, sampled by ``py-spy`` (every thread), writes where the
server's time goes to ``import_200k.profile.txt`` beside the results (the figure is from the
first run).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from tests.demo_server.helpers import TasksDeclared, start_task, wait_task

from bench import suite
from bench.fleet import child_env
from bench.spy import Spy, summary
from bench.suite import Result, Size, measured, unmeasured
from mooring.demo_server.samples import write_large

IDS = ("import_200k",)


def _server(store: Path) -> tuple[subprocess.Popen[str], str]:
    argv = [sys.executable, "-m", "mooring.demo_server", "--http", "--port", "0"]
    argv += ["--store", str(store)]
    argv += ["--poll-interval-ms", "100"]
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=child_env()
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if "listening on " not in line:
        process.kill()
        process.wait()
        raise RuntimeError(f"the demo server did not start: {line!r}")
    return process, line.rsplit(" ", 1)[1].strip()


async def _import(url: str, csv: Path) -> tuple[float, str, dict[str, object]]:
    async with (
        httpx2.AsyncClient(timeout=120) as http,
        Client(streamable_http_client(url, http_client=http), extensions=[TasksDeclared()]) as c,
    ):
        start = time.perf_counter()
        created = await start_task(c.session, "import_suppliers", {"path": str(csv)})
        done = await wait_task(c.session, created.task_id, within=1800)
        return time.perf_counter() - start, done.status, done.structured


def _stop(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stdout is not None:
        process.stdout.close()


def run(size: Size, folder: Path, wanted: Callable[[str], bool]) -> list[Result]:
    """The ``import_200k`` figure (and the profile, at full size)."""
    if not wanted("import_200k"):
        return []
    csv = write_large(folder / "suppliers_large.csv", rows=size.import_rows)
    what = f"the demo server's {size.import_rows:,}-row import over HTTP (tools/call to completed)"
    process, url = _server(folder / "plain.sqlite3")
    try:
        seconds, status, structured = anyio.run(_import, url, csv)
    finally:
        _stop(process)
    if status != "completed":
        return [unmeasured("import_200k", what, unit="rows/s", target="report", reason=status)]
    notes: dict[str, Any] = {"seconds": round(seconds, 3), "saved": structured.get("saved")}
    profile = suite.OUT_DIR / "import_200k.profile.txt"
    try:
        profile.parent.mkdir(parents=True, exist_ok=True)
        profiled, url = _server(folder / "profiled.sqlite3")
        spy = Spy.attach(profiled.pid, folder / "import.raw")
        try:
            profiled_s, _status, _ = anyio.run(_import, url, csv)
        finally:
            if spy is not None:
                spy.stop()
            _stop(profiled)
        if spy is None:
            notes["profile"] = "not written: py-spy is not installed"
        else:
            profile.write_text(summary(spy.raw, f"demo server, {size.import_rows:,}-row import"))
            notes["profile"] = str(profile)
            notes["profiled_seconds"] = round(profiled_s, 3)
    except (RuntimeError, OSError) as exc:
        notes["profile"] = f"not written: {exc}"
    return [
        measured(
            "import_200k",
            what,
            value=size.import_rows / seconds,
            baseline=None,
            unit="rows/s",
            target="report",
            met=None,
            **notes,
        )
    ]
