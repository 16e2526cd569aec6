"""The host against a Tasks server nobody here wrote: fastmcp-tasks 4.1.4, over HTTP.

Normal, cancel, failure and input flows through the real CLI, as for the bundled server.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Cli
from tests.mcp.servers import start_peer, stop_processes

PEER = Path(__file__).resolve().parents[1] / "mcp" / "peers" / "fastmcp_tasks_server.py"


@pytest.fixture
def peer(cli: Cli) -> Iterator[str]:
    """The fastmcp-tasks peer on a free loopback port, configured as server "peer"."""
    process, url = start_peer(PEER)
    try:
        assert cli.run("servers", "add", "peer", "--url", url).returncode == 0
        assert cli.run("rules", "add", "peer", "*", "allow").returncode == 0
        yield url
    finally:
        stop_processes([process])


def test_a_peer_task_completes(cli: Cli, peer: str) -> None:
    shown = cli.json("call", "peer", "crunch", "--args", '{"n": 5}')
    assert shown["state"] == "completed"
    assert shown["task_id"]
    assert "crunched 5" in str(shown["result"])


def test_a_peer_task_is_cancelled(cli: Cli, peer: str) -> None:
    shown = cli.json("call", "peer", "linger", "--detach", "--args", '{"seconds": 60}')
    assert shown["state"] == "working"
    cancelled = cli.json("tasks", "cancel", shown["id"])  # delivered: exit 0
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
