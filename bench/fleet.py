"""Real parts for the scale benchmarks: demo servers over HTTP, data folders with live tasks,
and child processes measured from ``/proc``.

- :class:`Fleet` starts N instances of the bundled demo server (``python -m mooring.demo_server
  --http --port 0``) on 127.0.0.1, each with its own store and request log.
- :func:`populate` creates tasks through Mooring's real call path: an in-process
  :class:`~mooring.services.host.Host` from the composition root, approvals answered yes,
  ``slow_compute`` calls that stay ``working`` for an hour.
- :class:`Watched` runs a child process and samples its CPU time and resident memory from
  ``/proc/<pid>`` (the child's own, not its children's) until it exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from mooring.bootstrap import build_host
from mooring.core.approval.request import ApprovalAnswer, ApprovalOutcome, ApprovalRequest
from mooring.services.host import ServerSpec
from mooring.settings.paths import Paths
from mooring.settings.store import Settings, save_settings
from mooring.storage.db import Database

REPO = Path(__file__).resolve().parents[1]
TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
TASK_SECONDS = 3600
"""How long each benchmark task computes: longer than any run, so every task stays active."""


def child_env(**extra: str) -> dict[str, str]:
    """The environment for child processes: this checkout's sources first on the path."""
    env = dict(os.environ)
    paths = [str(REPO / "app"), str(REPO)]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.update(extra)
    return env


@dataclass
class DemoServer:
    """One running demo server instance."""

    process: subprocess.Popen[str]
    url: str
    request_log: Path

    def requests(self, method: str | None = None) -> list[dict[str, Any]]:
        """The JSON-RPC requests it logged so far (of ``method`` only, if given)."""
        if not self.request_log.exists():
            return []
        entries = [json.loads(line) for line in self.request_log.read_text().splitlines() if line]
        return [e for e in entries if method is None or e.get("method") == method]


@dataclass
class Fleet:
    """N demo servers over Streamable HTTP on 127.0.0.1 (stop them with :meth:`stop`)."""

    servers: list[DemoServer] = field(default_factory=list)

    @classmethod
    @contextlib.contextmanager
    def running(cls, folder: Path, count: int, poll_interval_ms: int) -> Iterator[Fleet]:
        """Start ``count`` instances, each on its own store; stop them on exit."""
        fleet = cls()
        try:
            for i in range(count):
                fleet.servers.append(_start_server(folder / f"server-{i}", poll_interval_ms))
            yield fleet
        finally:
            fleet.stop()

    def requests(self, method: str) -> list[dict[str, Any]]:
        """Every instance's logged requests of ``method``."""
        return [e for server in self.servers for e in server.requests(method)]

    def stop(self) -> None:
        """Terminate every instance (by its pid) and wait for it."""
        for server in self.servers:
            if server.process.poll() is None:
                server.process.terminate()
        for server in self.servers:
            try:
                server.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.process.kill()
                server.process.wait()
            if server.process.stdout is not None:
                server.process.stdout.close()
        self.servers = []


FLEET_SESSIONS = os.environ.get("MOORING_BENCH_FLEET_SESSION", "own") == "own"
"""Whether each server runs in a session of its own (``MOORING_BENCH_FLEET_SESSION=bench``:
in the bench's, as before, for a side-by-side figure)."""


def _start_server(folder: Path, poll_interval_ms: int) -> DemoServer:
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "requests.jsonl"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mooring.demo_server",
            "--http",
            "--port",
            "0",
            "--store",
            str(folder / "demo.sqlite3"),
            "--poll-interval-ms",
            str(poll_interval_ms),
            # A long lease: a running task renews it at most every pollIntervalMs, not every
            # 3.3 s, so the servers' own bookkeeping steals less CPU from the host measured.
            "--lease-ms",
            "600000",
            "--conformance-fixtures",
            "--request-log",
            str(log),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=child_env(),
        # The user's HTTP servers run outside the window's session (a service, a container,
        # another terminal's program). Linux shares CPU between sessions first (autogroups):
        # in the bench's session, the window measured would wait behind ten servers the
        # engine keeps busy, which no user's window does.
        start_new_session=FLEET_SESSIONS,
    )
    assert process.stdout is not None
    line = process.stdout.readline()  # printed once listening
    if "listening on " not in line:
        process.kill()
        raise RuntimeError(f"the demo server did not start: {line!r}")
    return DemoServer(process, line.rsplit(" ", 1)[1].strip(), log)


def data_folder(root: Path, *, tracing: bool, covered_interval_ms: int | None = None) -> Paths:
    """A fresh data folder whose settings the CLI and window will read: no bundled demo
    server, trace files written or not; ``covered_interval_ms``: the safety-net poll interval
    of tasks a listen stream covers (the default when ``None``)."""
    paths = Paths(data_dir=root, config_dir=root / "config", log_dir=root / "logs", overridden=True)
    root.mkdir(parents=True, exist_ok=True)
    values: dict[str, object] = {"demo_server.enabled": False, "telemetry.file_export": tracing}
    if covered_interval_ms is not None:
        values["polling.covered_interval_ms"] = covered_interval_ms
    save_settings(paths.settings_file, Settings(values))
    return paths


async def _approve(_request: ApprovalRequest) -> ApprovalAnswer:
    return ApprovalAnswer(ApprovalOutcome.APPROVED)


async def populate(paths: Paths, urls: Sequence[str], tasks: int) -> list[tuple[str, str]]:
    """Create ``tasks`` long ``slow_compute`` tasks spread over the servers at ``urls``, through
    the host's real call path (approval, ledger, ``tools/call``); returns (url, task id) pairs."""
    db = Database.open(paths.database)
    host = build_host(paths, Settings({"demo_server.enabled": False}), db, ask=_approve)
    made: list[tuple[str, str]] = []
    try:
        servers = [
            await host.server_desk.add(ServerSpec(alias=f"bench{i}", url=url, trusted=True))
            for i, url in enumerate(urls)
        ]
        gate = asyncio.Semaphore(8)

        async def one(n: int) -> None:
            server = servers[n % len(servers)]
            async with gate:
                record = await host.call(
                    server, "slow_compute", {"seconds": TASK_SECONDS, "label": f"b{n}"}
                )
            if record.task_id is None:
                raise RuntimeError(f"call {n} made no task: {record.state}")
            made.append((urls[n % len(urls)], record.task_id))

        await asyncio.gather(*(one(n) for n in range(tasks)))
    finally:
        await host.stop()
        db.close()
    return made


@dataclass
class Sample:
    """CPU seconds (user + system) and resident memory of a process at a moment."""

    at: float
    cpu_s: float
    rss_bytes: int


def sample(pid: int) -> Sample | None:
    """Read ``/proc/<pid>/stat`` and ``statm`` now (``None`` once the process is gone, or has
    ended and waits to be reaped: a zombie's memory reads 0, which is no sample of it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        statm = Path(f"/proc/{pid}/statm").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] in ("Z", "X"):  # the state: ended
        return None
    cpu = (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime
    return Sample(time.monotonic(), cpu, int(statm.split()[1]) * PAGE)


@dataclass
class Watched:
    """A child process run to its end, with its CPU and memory sampled every ``every_s``."""

    started: float
    ended: float
    started_wall: float
    """``time.time()`` at the start, to compare with the servers' request logs."""
    returncode: int
    samples: list[Sample]
    cpu_s: float
    """CPU of the whole run (the child's own rusage, taken as it was reaped)."""
    stdout: str
    stderr_tail: str = ""
    """The end of what it wrote to stderr (why it failed, when it did)."""

    @property
    def wall_s(self) -> float:
        return self.ended - self.started

    def cpu_between(self, start: float, end: float) -> float:
        """CPU seconds the process spent between two monotonic times (nearest samples)."""
        inside = [s for s in self.samples if start <= s.at <= end]
        if len(inside) < 2:
            return 0.0
        return inside[-1].cpu_s - inside[0].cpu_s

    @classmethod
    def run(
        cls,
        argv: Sequence[str],
        *,
        every_s: float = 0.5,
        timeout_s: float = 900,
        env: dict[str, str] | None = None,
    ) -> Watched:
        """Run ``argv`` to its end (killed after ``timeout_s``), sampling it meanwhile."""
        started_wall = time.time()
        started = time.monotonic()
        # stderr to a file, not a pipe: nobody need drain it meanwhile
        with tempfile.TemporaryFile() as errors:
            process = subprocess.Popen(
                list(argv),
                stdout=subprocess.PIPE,
                stderr=errors,
                text=True,
                env=env or child_env(),
            )
            assert process.stdout is not None
            stream = process.stdout
            out: list[str] = []
            reader = threading.Thread(target=lambda: out.append(stream.read()), daemon=True)
            reader.start()
            samples: list[Sample] = []
            reaped: list[tuple[int, Any, float]] = []
            over = threading.Event()

            def reap() -> None:
                # Reap it ourselves: wait4 gives the child's own CPU (rusage) as it ends, and the
                # end is seen at once (not at the next sample).
                _pid, status, usage = os.wait4(process.pid, 0)
                reaped.append((status, usage, time.monotonic()))
                over.set()

            threading.Thread(target=reap, daemon=True).start()
            while not over.wait(every_s):  # the sampling period; wakes as the child ends
                now = sample(process.pid)
                if now is not None:
                    samples.append(now)
                if time.monotonic() - started > timeout_s:
                    process.kill()
            status, usage, ended = reaped[0]
            process.returncode = os.waitstatus_to_exitcode(status)
            reader.join()
            stream.close()
            errors.seek(max(0, errors.seek(0, os.SEEK_END) - 800))
            tail = errors.read().decode(errors="replace")
        return cls(
            started,
            ended,
            started_wall,
            process.returncode,
            samples,
            usage.ru_utime + usage.ru_stime,
            "".join(out),
            tail,
        )


def log_time(entry: dict[str, Any]) -> float:
    """A request-log timestamp as seconds since the epoch."""
    return datetime.fromisoformat(str(entry["ts"]).replace("Z", "+00:00")).timestamp()
