"""The demo server over Streamable HTTP: a plain ``mcp.Client`` plus raw JSON-RPC POSTs."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.demo_server.helpers import (
    TASKS,
    HttpServer,
    Servers,
    TasksDeclared,
    frame,
    get_task,
    get_until_error,
    http_headers,
    raw_post,
    start_task,
    wait_task,
)

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def _client(url: str, token: str | None = None) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, extensions=[TasksDeclared()]) as client:
            yield client


async def test_http_import_with_the_sdk_client_and_exactly_one_tools_call_logged(
    servers: Servers, tmp_path: Path
) -> None:
    log = tmp_path / "requests.jsonl"
    server = servers.http("--request-log", str(log))
    async with _client(server.url) as client:
        created = await start_task(
            client.session, "import_suppliers", {"path": "suppliers_clean.csv"}
        )
        done = await wait_task(client.session, created.task_id)
    assert done.status == "completed"
    assert done.structured["saved"] == 12
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    calls = [e for e in entries if e["method"] == "tools/call"]
    assert [(c["tool"], c["transport"]) for c in calls] == [("import_suppliers", "http")]
    gets = [e for e in entries if e["method"] == "tasks/get"]
    assert gets
    assert all(e["taskId"] == created.task_id for e in gets)


async def test_mcp_name_must_match_the_task_id(shared_http: HttpServer) -> None:
    server = shared_http
    async with httpx2.AsyncClient(timeout=30) as http:
        status, created = await raw_post(
            http,
            server.url,
            1,
            "tools/call",
            {"name": "import_suppliers", "arguments": {"path": "suppliers_clean.csv"}},
        )
        task_id = created["result"]["taskId"]
        ok_status, ok = await raw_post(http, server.url, 2, "tasks/get", {"taskId": task_id})
        bad_status, bad = await raw_post(
            http, server.url, 3, "tasks/get", {"taskId": task_id}, name="other-task"
        )
        none_status, missing = await raw_post(
            http, server.url, 4, "tasks/cancel", {"taskId": task_id}, name=""
        )
    assert status == 200
    assert ok_status == 200
    assert ok["result"]["taskId"] == task_id
    assert bad_status == 400
    assert bad["error"]["code"] == -32020
    assert none_status == 400
    assert missing["error"]["code"] == -32020


async def test_tasks_are_scoped_to_the_bearer_token(shared_http: HttpServer) -> None:
    server = shared_http
    async with _client(server.url, token="alice-token") as alice:
        created = await start_task(
            alice.session, "import_suppliers", {"path": "suppliers_clean.csv"}
        )
        probes: list[tuple[str, dict[str, Any], str | None]] = [
            ("tasks/get", {"taskId": created.task_id}, "mallory-token"),
            ("tasks/get", {"taskId": created.task_id}, None),
            ("tasks/cancel", {"taskId": created.task_id}, "mallory-token"),
            (
                "tasks/update",
                {"taskId": created.task_id, "inputResponses": {"k": {}}},
                "mallory-token",
            ),
            ("tasks/get", {"taskId": "no-such-task"}, "mallory-token"),
        ]
        async with httpx2.AsyncClient(timeout=30) as http:
            replies = [
                await raw_post(http, server.url, n, method, params, token=token)
                for n, (method, params, token) in enumerate(probes)
            ]
        done = await wait_task(alice.session, created.task_id)
    errors = [reply["error"] for _status, reply in replies]
    assert all(
        error == {"code": -32602, "message": "Failed to retrieve task: Task not found"}
        for error in errors
    )
    assert all(status == 400 for status, _ in replies)
    assert done.status == "completed"  # mallory's cancel did nothing


async def test_token_expiry_fault_answers_401_invalid_token_after_n_requests(
    servers: Servers,
) -> None:
    server = servers.http("--fault-token-expires-after", "2")
    async with httpx2.AsyncClient(timeout=30) as http:
        first, _ = await raw_post(http, server.url, 1, "tools/list", token="t1")
        second, _ = await raw_post(http, server.url, 2, "tools/list", token="t1")
        body = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}}
        third = await http.post(server.url, json=body, headers={"Authorization": "Bearer t1"})
        other, _ = await raw_post(http, server.url, 4, "tools/list", token="t2")
    assert (first, second, other) == (200, 200, 200)
    assert third.status_code == 401
    assert 'error="invalid_token"' in third.headers["www-authenticate"]


async def test_dropped_create_reply_still_leaves_a_durable_task(
    servers: Servers, tmp_path: Path
) -> None:
    log = tmp_path / "requests.jsonl"
    server = servers.http("--fault-drop-create-reply", "1", "--request-log", str(log))
    async with httpx2.AsyncClient(timeout=30) as http:
        call = {"name": "import_suppliers", "arguments": {"path": "suppliers_clean.csv"}}
        with pytest.raises(httpx2.TransportError):
            await raw_post(http, server.url, 1, "tools/call", call)
        with closing(sqlite3.connect(server.store)) as db:
            [(task_id,)] = db.execute("SELECT task_id FROM tasks").fetchall()
        status, retry = await raw_post(http, server.url, 2, "tools/call", call)
        assert status == 200
        assert retry["result"]["resultType"] == "task"
        with anyio.fail_after(20):
            while True:
                _, got = await raw_post(http, server.url, 3, "tasks/get", {"taskId": task_id})
                if got["result"]["status"] == "completed":
                    break
                await anyio.sleep(0.04)
    calls = [json.loads(line) for line in log.read_text().splitlines() if '"tools/call"' in line]
    assert len(calls) == 2  # the server saw both calls: the lost reply was an unknown outcome
    # Both tasks import the same file; whichever checkpoints a row first saves it (the other
    # skips it), so the first task accounts for every row, saved or skipped.
    content = got["result"]["result"]["structuredContent"]
    assert content["saved"] + content["skipped"] == 12


async def test_slow_get_fault_delays_tasks_get_but_not_other_requests(servers: Servers) -> None:
    server = servers.http("--fault-slow-get-ms", "400")
    order: list[str] = []
    async with _client(server.url) as client:
        created = await start_task(
            client.session, "import_suppliers", {"path": "suppliers_clean.csv"}
        )

        async def slow_get() -> None:
            await get_task(client.session, created.task_id)
            order.append("tasks/get")

        async def quick_list() -> None:
            await client.list_tools()
            order.append("tools/list")

        async with anyio.create_task_group() as tg:
            tg.start_soon(slow_get)
            await anyio.lowlevel.checkpoint()
            tg.start_soon(quick_list)
    assert order == ["tools/list", "tasks/get"]


@pytest.mark.parametrize(
    ("mode", "expected"), [("unknown-status", "exploded"), ("missing-status", None)]
)
async def test_malformed_status_fault(servers: Servers, mode: str, expected: str | None) -> None:
    server = servers.http("--fault-malformed-status", mode)
    async with httpx2.AsyncClient(timeout=30) as http:
        _, created = await raw_post(
            http,
            server.url,
            1,
            "tools/call",
            {"name": "import_suppliers", "arguments": {"path": "suppliers_clean.csv"}},
        )
        _, got = await raw_post(
            http, server.url, 2, "tasks/get", {"taskId": created["result"]["taskId"]}
        )
    assert created["result"]["status"] == "working"
    assert got["result"].get("status") == expected


async def test_ttl_expiry_and_the_forget_fault_answer_32602(servers: Servers) -> None:
    short = servers.http(
        "--ttl-ms", "300", "--checkpoint-delay-ms", "50", "--rows-per-checkpoint", "1"
    )
    forgetful = servers.http(
        "--fault-forget-after-ms", "0", store=short.store.with_name("other.sqlite3")
    )
    async with _client(short.url) as client:
        created = await start_task(
            client.session, "import_suppliers", {"path": "suppliers_clean.csv"}
        )
        assert created.ttl_ms == 300
        expired = await get_until_error(client.session, created.task_id)
    async with _client(forgetful.url) as client:
        forgotten = await start_task(
            client.session, "import_suppliers", {"path": "suppliers_clean.csv"}
        )
        with pytest.raises(MCPError) as gone:
            await get_task(client.session, forgotten.task_id)
    assert expired.error.code == -32602
    # "has expired" when a get sees the task first; "not found" when the instance's purge (at
    # most a second apart) came first, as it can on a loaded machine. Both are -32602.
    assert expired.error.message.endswith(("Task has expired", "Task not found"))
    assert gone.value.error.code == -32602


async def test_without_the_extension_task_methods_answer_32021_and_optional_tools_run_inline(
    shared_http: HttpServer,
) -> None:
    server = shared_http
    async with httpx2.AsyncClient(timeout=30) as http:
        get_status, get = await raw_post(
            http, server.url, 1, "tasks/get", {"taskId": "x"}, tasks=False
        )
        call_status, call = await raw_post(
            http,
            server.url,
            2,
            "tools/call",
            {"name": "slow_compute", "arguments": {"seconds": 0}},
            tasks=False,
        )
        legacy_status, legacy = await raw_post(
            http,
            server.url,
            3,
            "tools/call",
            {"name": "greet", "arguments": {"name": "x"}, "task": {"ttl": 1000}},
        )
    assert get_status == 400
    assert get["error"]["code"] == -32021
    assert get["error"]["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
    assert call_status == 200
    assert call["result"]["resultType"] == "complete"
    assert "taskId" not in call["result"]
    assert legacy_status == 200
    assert legacy["result"]["content"][0]["text"] == "Hello, x!"


async def test_listen_over_http_streams_task_notifications(
    servers: Servers, medium_csv: Path
) -> None:
    server = servers.http("--rows-per-checkpoint", "2000", "--checkpoint-delay-ms", "20")
    async with httpx2.AsyncClient(timeout=30) as http:
        _, created = await raw_post(
            http,
            server.url,
            1,
            "tools/call",
            {"name": "import_suppliers", "arguments": {"path": str(medium_csv)}},
        )
        task_id = created["result"]["taskId"]
        body = frame(2, "subscriptions/listen", {"notifications": {"taskIds": [task_id]}})
        frames: list[dict[str, Any]] = []
        with anyio.fail_after(20):
            async with http.stream(
                "POST", server.url, json=body, headers=http_headers("subscriptions/listen")
            ) as response:
                assert response.headers["content-type"].startswith("text/event-stream")
                async for line in response.aiter_lines():
                    if not line.startswith("data:"):
                        continue
                    frames.append(json.loads(line[5:]))
                    if frames[-1].get("params", {}).get("status") == "completed":
                        break
    assert frames[0]["method"] == "notifications/subscriptions/acknowledged"
    assert frames[0]["params"]["notifications"]["taskIds"] == [task_id]
    assert {f["method"] for f in frames[1:]} == {"notifications/tasks"}
    assert frames[-1]["params"]["result"]["structuredContent"]["saved"] == 5994
