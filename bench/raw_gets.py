"""The baseline: the same ``tasks/get`` calls made with the raw MCP SDK, nothing else.

``python -m bench.raw_gets PAIRS.json [--rounds N]`` opens one ``mcp.Client`` per server (over
Streamable HTTP, Tasks extension declared), asks ``tasks/get`` for every task in PAIRS (a JSON
list of ``[url, task_id]``) all at once, and repeats that ``N`` more times; prints one JSON line:
``{"gets", "first_round_s", "steady_cpu_per_get_ms"}``. The process's own wall and CPU time,
measured from outside, are the reconcile baseline; the steady rounds give the CPU per get.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from tests.demo_server.helpers import TasksDeclared, get_task


async def _run(pairs: list[tuple[str, str]], rounds: int) -> dict[str, float]:
    by_server: dict[str, list[str]] = defaultdict(list)
    for url, task_id in pairs:
        by_server[url].append(task_id)
    async with AsyncExitStack() as stack:
        clients: dict[str, Client] = {}
        for url in by_server:
            http = await stack.enter_async_context(httpx2.AsyncClient(timeout=120))
            clients[url] = await stack.enter_async_context(
                Client(streamable_http_client(url, http_client=http), extensions=[TasksDeclared()])
            )

        async def one_round() -> None:
            async with anyio.create_task_group() as tg:
                for url, ids in by_server.items():
                    for task_id in ids:
                        tg.start_soon(get_task, clients[url].session, task_id)

        start = time.perf_counter()
        await one_round()
        first = time.perf_counter() - start
        cpu = time.process_time()
        for _ in range(rounds):
            await one_round()
        steady = time.process_time() - cpu
    return {
        "gets": len(pairs) * (rounds + 1),
        "first_round_s": first,
        "steady_cpu_per_get_ms": steady * 1e3 / max(1, len(pairs) * rounds),
    }


def main() -> None:
    """Parse the arguments, make the calls, print the figures."""
    parser = argparse.ArgumentParser(prog="python -m bench.raw_gets")
    parser.add_argument("pairs", type=Path)
    parser.add_argument("--rounds", type=int, default=0)
    args = parser.parse_args()
    pairs = [(str(url), str(task)) for url, task in json.loads(args.pairs.read_text())]
    print(json.dumps(anyio.run(_run, pairs, args.rounds)), flush=True)


if __name__ == "__main__":
    main()
