"""The host against a Tasks server nobody here wrote: fastmcp-tasks 4.1.4, over HTTP.

Normal, cancel, failure and input flows through the real CLI, as for the bundled server.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Cli
from tests.mcp.servers import free_port, wait_for_port

PEER = Path(__file__).resolve().parents[1] / "mcp" / "peers" / "fastmcp_tasks_server.py"


@pytest.fixture
def peer(cli: Cli) -> Iterator[str]:
    """The fastmcp-tasks peer on a free loopback port, configured as server "peer"."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(PEER), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process, timeout=60)
        url = f"http://127.0.0.1:{port}/mcp"
        assert cli.run("servers", "add", "peer", "--url", url).returncode == 0
        assert cli.run("rules", "add", "peer", "*", "allow").returncode == 0
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)


def test_a_peer_task_completes(cli: Cli, peer: str) -> None:
    shown = cli.json("call", "peer", "crunch", "--args", '{"n": 5}')
    assert shown["state"] == "completed"
    assert shown["task_id"]
    assert "crunched 5" in str(shown["result"])


def test_a_peer_task_is_cancelled(cli: Cli, peer: str) -> None:
    shown = cli.json("call", "peer", "linger", "--detach", "--args", '{"seconds": 60}')
    assert shown["state"] == "working"
    cancelled = cli.json("tasks", "cancel", shown["id"], expect=6)
    assert cancelled["state"] == "cancelled"


def test_a_peer_protocol_error_fails_and_a_tool_error_completes(cli: Cli, peer: str) -> None:
    failed = cli.json("call", "peer", "malfunction", expect=5)
    assert failed["state"] == "failed"
    assert failed["error"]["message"] == "the backend is down"
    tool_error = cli.json("call", "peer", "explode", expect=4)
    assert tool_error["state"] == "completed"
    assert tool_error["result"]["isError"] is True


def test_a_peer_input_request_is_answered(cli: Cli, peer: str) -> None:
    started = cli.run("call", "peer", "confirm", "--args", '{"item": "SUP-1"}')
    assert started.returncode == 9, (started.stdout, started.stderr)
    [record] = cli.json("tasks", "list", "--active")
    assert record["inputs"][0]["message"] == "Really delete SUP-1?"
    answered = cli.json("tasks", "answer", record["id"], "--value", '{"ok": true}')
    assert answered["delivered"] is True
    final = cli.json("tasks", "watch", record["id"])
    assert final["state"] == "completed"
    assert "deleted SUP-1" in str(final["result"])
