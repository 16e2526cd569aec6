"""Durability: tasks survive SIGKILL and restarts, instances share a store, writes fail cleanly."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.demo_server.helpers import (
    Servers,
    TasksDeclared,
    answer,
    cancel_task,
    get_task,
    rows_validated,
    start_task,
    update_task,
    wait_task,
)

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def _client(url: str) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(timeout=30) as http,
        Client(
            streamable_http_client(url, http_client=http), extensions=[TasksDeclared()]
        ) as client,
    ):
        yield client


async def test_sigkill_mid_import_then_restart_finishes_without_saving_a_row_twice(
    servers: Servers, medium_csv: Path
) -> None:
    first = servers.http("--rows-per-checkpoint", "250", "--checkpoint-delay-ms", "25")
    async with _client(first.url) as client:
        created = await start_task(client.session, "import_suppliers", {"path": str(medium_csv)})
        await wait_task(
            client.session,
            created.task_id,
            lambda t: rows_validated(t) >= 1_000,
        )
    first.kill()

    second = servers.http(store=first.store)  # any instance that starts resumes abandoned tasks
    async with _client(second.url) as client:
        done = await wait_task(client.session, created.task_id)
    assert done.status == "completed", done
    result = done.structured
    assert (result["rowsRead"], result["saved"], result["rejected"], result["skipped"]) == (
        6000,
        5994,
        6,
        0,
    )
    assert result["resumes"] >= 1
    assert all("duplicate" not in row["reason"] for row in result["rejectedRows"])
    with closing(sqlite3.connect(first.store)) as db:
        outcomes = db.execute(
            "SELECT COUNT(*), COUNT(DISTINCT row_number) FROM import_rows"
        ).fetchone()
        saved = db.execute(
            "SELECT COUNT(*) FROM suppliers WHERE source_task_id = ?", (created.task_id,)
        ).fetchone()
    assert outcomes == (6000, 6000)
    assert saved == (5994,)


async def test_two_instances_answer_each_others_get_update_and_cancel(
    servers: Servers, medium_csv: Path
) -> None:
    runner = servers.http("--rows-per-checkpoint", "200", "--checkpoint-delay-ms", "25")
    other = servers.http(store=runner.store)
    async with _client(runner.url) as on_runner, _client(other.url) as on_other:
        asking = await start_task(
            on_runner.session, "import_suppliers", {"path": "suppliers_ambiguous_id.csv"}
        )
        asked = await wait_task(
            on_other.session, asking.task_id, lambda t: t.status == "input_required"
        )
        [key] = list(asked.input_requests or {})
        await update_task(on_other.session, asking.task_id, {key: answer("erp_id")})
        done = await wait_task(on_other.session, asking.task_id)
        assert done.structured["identifierColumn"] == "erp_id"
        assert done.structured["savedIds"][0] == "88120"

        slow = await start_task(on_runner.session, "import_suppliers", {"path": str(medium_csv)})
        await wait_task(on_other.session, slow.task_id, lambda t: rows_validated(t) >= 400)
        await cancel_task(on_other.session, slow.task_id)
        cancelled = await wait_task(on_runner.session, slow.task_id)
        seen_elsewhere = await get_task(on_other.session, slow.task_id)
    assert cancelled.status == "cancelled"
    assert seen_elsewhere.status == "cancelled"


async def test_a_database_write_failure_ends_the_task_failed_and_keeps_earlier_checkpoints(
    servers: Servers,
) -> None:
    server = servers.http("--rows-per-checkpoint", "5", "--fault-db-write-fail-at-checkpoint", "2")
    async with _client(server.url) as client:
        created = await start_task(
            client.session, "import_suppliers", {"path": "suppliers_clean.csv"}
        )
        failed = await wait_task(client.session, created.task_id)
        listed = await client.call_tool("list_suppliers", {})
    assert failed.status == "failed"
    assert failed.result is None
    assert failed.error is not None
    assert failed.error["code"] == -32603
    assert "Database write failed at checkpoint 2 (rows 6-10)" in failed.error["message"]
    assert "simulated write failure" in failed.error["message"]
    assert failed.error["data"] == {"checkpoint": 2, "savedBeforeFailure": 5}
    assert listed.structured_content is not None
    assert listed.structured_content["total"] == 5
