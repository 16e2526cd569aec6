"""A stateful stdio server keeps its state across separate ``mooring`` commands: each command is
a client of the data folder's one long-lived engine, which owns the server's process.

The server is the reference "sequential thinking" server from npm, which keeps the thoughts it
is sent in memory and reports how many it holds.
"""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.conftest import Cli
from tests.helpers.node_peers import node, sequential_thinking_server
from tests.helpers.processes import engine_pid


def think(cli: Cli, number: int, total: int, text: str) -> dict[str, Any]:
    """Send one thought with its own ``mooring call --json`` (exit 0 checked); what the server
    reported back (its structured result)."""
    arguments = {
        "thought": text,
        "thoughtNumber": number,
        "totalThoughts": total,
        "nextThoughtNeeded": number < total,
    }
    shown = cli.json("call", "thinking", "sequentialthinking", "--args", json.dumps(arguments))
    assert shown["state"] == "completed", shown
    assert shown["result"]["isError"] is False, shown
    report = shown["result"]["structuredContent"]
    assert isinstance(report, dict), shown
    return report


def test_a_stdio_servers_memory_outlives_the_command_that_called_it(cli: Cli) -> None:
    args = ["servers", "add", "thinking", "--command", node()]
    args += [f"--arg={sequential_thinking_server()}", "--env=DISABLE_THOUGHT_LOGGING=true"]
    assert cli.run(*args).returncode == 0
    assert cli.run("rules", "add", "thinking", "*", "allow").returncode == 0

    first = think(cli, 1, 2, "The tide rises twice a day.")
    engine = engine_pid(cli.data_dir)
    assert first["thoughtHistoryLength"] == 1, first
    assert engine is not None  # started by the first call; it outlives it

    second = think(cli, 2, 2, "So the Moon pulls on the sea.")
    # The server still held the first thought: one server process served both commands.
    assert second["thoughtHistoryLength"] == 2, second
    assert second["thoughtNumber"] == 2
    assert second["nextThoughtNeeded"] is False
    assert engine_pid(cli.data_dir) == engine
