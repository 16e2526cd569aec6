"""End-to-end fixtures: the real ``mooring`` CLI as a process, the demo server as its child."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import zygote
from tests.helpers.processes import run_mooring

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "resources" / "samples"


@dataclass
class Cli:
    """Runs ``mooring`` commands against one data folder."""

    data_dir: Path
    children: list[subprocess.Popen[str]] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str | None]:
        """Environment for every command: a keyring the processes share, as a real one is."""
        return {
            "PYTHON_KEYRING_BACKEND": "tests.helpers.filekeyring.FileKeyring",
            "MOORING_TEST_KEYRING_FILE": str(self.data_dir.parent / "keyring.json"),
        }

    def run(
        self, *args: str, timeout: float = 90, env: dict[str, str | None] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run a command to its end."""
        return run_mooring(
            *args, data_dir=self.data_dir, timeout=timeout, env={**self.env, **(env or {})}
        )

    def json(self, *args: str, expect: int = 0) -> Any:
        """Run a command with ``--json``; check its exit code; parse its output."""
        done = self.run(*args, "--json")
        assert done.returncode == expect, (done.returncode, done.stdout, done.stderr)
        return json.loads(done.stdout)

    def start(
        self, *args: str, env: dict[str, str] | None = None, sigint_ignored: bool = False
    ) -> subprocess.Popen[str]:
        """Start a command without waiting (to kill it midway); ``env`` adds variables.

        The command starts with SIGINT at its default, as a terminal's foreground command does,
        whatever this test run inherited (a run started as a script's background job, or by
        ``nohup``, has SIGINT ignored, and its children would too); ``sigint_ignored`` starts
        it as such a background job instead."""
        full_env = {**os.environ, "MOORING_DATA_DIR": str(self.data_dir)}
        full_env.update({k: v for k, v in self.env.items() if v is not None})
        full_env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        full_env.update(env or {})
        # A child inherits an ignored signal and resets a handled one to its default.
        wanted = signal.SIG_IGN if sigint_ignored else signal.default_int_handler
        previous = signal.signal(signal.SIGINT, wanted)
        try:
            child = subprocess.Popen(
                [sys.executable, "-m", "mooring", *args],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=full_env,
            )
        finally:
            signal.signal(signal.SIGINT, previous)
        self.children.append(child)
        return child


@dataclass
class DemoServer:
    """A demo server configured in Mooring, and what it received."""

    name: str
    store: Path
    request_log: Path

    def requests(self) -> list[dict[str, Any]]:
        """Every JSON-RPC request the server processes logged, in order."""
        if not self.request_log.exists():
            return []
        return [json.loads(line) for line in self.request_log.read_text().splitlines() if line]

    def count(self, method: str, tool: str | None = None) -> int:
        """How many requests of ``method`` (and ``tool``) arrived."""
        return sum(
            1
            for r in self.requests()
            if r.get("method") == method and (tool is None or r.get("tool") == tool)
        )


@pytest.fixture
def fresh_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ``mooring`` command a new interpreter, as a user's are (not a fork of the zygote,
    whose imports could hide a module a command forgot to import; see ``tests/helpers/zygote.py``).
    The modules that use it run the first use and the canary this way."""
    monkeypatch.setenv(zygote.FRESH_VARIABLE, "1")


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Cli]:
    runner = Cli(tmp_path / "mooring")
    # Tests add their own demo server (with fast settings): no bundled copy on first use.
    settings = runner.data_dir / "config" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"version": 1, "values": {"demo_server.enabled": False}}))
    yield runner
    for child in runner.children:
        if child.poll() is None:
            child.kill()
        child.wait(timeout=30)
        for stream in (child.stdout, child.stderr):
            if stream is not None:
                stream.close()


def add_demo(
    cli: Cli,
    tmp_path: Path,
    *,
    name: str = "demo",
    allow: bool = True,
    **settings: str | int,
) -> DemoServer:
    """Configure the demo server over stdio with fast test settings (``poll_interval_ms=…``)."""
    server = DemoServer(name, tmp_path / f"{name}-store.sqlite3", tmp_path / f"{name}-requests.log")
    env = {
        "REQUEST_LOG": str(server.request_log),
        "POLL_INTERVAL_MS": 50,
        "LEASE_MS": 400,
        "SAMPLES_DIR": str(SAMPLES),
    }
    env.update({key.upper(): value for key, value in settings.items()})
    args = ["servers", "add", name, "--command", sys.executable]
    for arg in ("-m", "mooring.demo_server", "--store", str(server.store)):
        args.append(f"--arg={arg}")
    for key, value in env.items():
        args.append(f"--env=MOORING_DEMO_{key}={value}")
    if os.environ.get("PYTHONPATH"):  # the server runs the same sources as the CLI under test
        args.append(f"--env=PYTHONPATH={os.environ['PYTHONPATH']}")
    done = cli.run(*args)
    assert done.returncode == 0, done.stderr
    if allow:
        assert cli.run("rules", "add", name, "*", "allow").returncode == 0
    return server


@dataclass
class HttpDemo(DemoServer):
    """The demo server as a long-running Streamable HTTP process on 127.0.0.1."""

    url: str = ""
    process: subprocess.Popen[str] | None = None


def start_http_demo(tmp_path: Path, settings: dict[str, str | int], name: str = "web") -> HttpDemo:
    """Start the demo server over HTTP on a free loopback port; stop it with ``stop_http``."""

    demo = HttpDemo(name, tmp_path / f"{name}-store.sqlite3", tmp_path / f"{name}-requests.log")
    env = {**os.environ}
    env.update(
        {
            "MOORING_DEMO_REQUEST_LOG": str(demo.request_log),
            "MOORING_DEMO_POLL_INTERVAL_MS": "50",
            "MOORING_DEMO_SAMPLES_DIR": str(SAMPLES),
        }
    )
    env.update({f"MOORING_DEMO_{k.upper()}": str(v) for k, v in settings.items() if k != "port"})
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mooring.demo_server",
            "--http",
            "--host",
            "127.0.0.1",
            "--port",
            str(settings.get("port", 0)),
            "--store",
            str(demo.store),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], 30)  # printed once the socket is bound
    line = process.stdout.readline() if ready else ""
    assert "listening on " in line, line
    demo.url = line.rsplit(" ", 1)[-1].strip()
    demo.process = process
    return demo


def stop_http(demo: HttpDemo) -> None:
    """Stop the server process by its pid."""
    if demo.process is not None:
        demo.process.terminate()
        try:
            demo.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            demo.process.kill()
            demo.process.wait(timeout=20)
        if demo.process.stdout is not None:
            demo.process.stdout.close()


@pytest.fixture
def http_demo_factory(tmp_path: Path) -> Iterator[Any]:
    started: list[HttpDemo] = []

    def start(name: str = "web", **settings: str | int) -> HttpDemo:
        demo = start_http_demo(tmp_path, settings, name)
        started.append(demo)
        return demo

    yield start
    for demo in started:
        stop_http(demo)
