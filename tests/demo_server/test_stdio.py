"""The demo server over stdio, driven by a plain ``mcp.Client`` and by raw JSON-RPC lines."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.demo_server.helpers import (
    SAMPLES,
    TASKS,
    RawStdio,
    TasksDeclared,
    answer,
    cancel_task,
    envelope,
    frame,
    get_task,
    raw_stdio_command,
    rows_validated,
    start_task,
    stdio_params,
    update_task,
    wait_task,
)

pytestmark = pytest.mark.anyio


async def test_server_discover_advertises_the_tasks_extension_and_annotated_tools(
    store_path: Path,
) -> None:
    async with Client(stdio_params(store_path), extensions=[TasksDeclared()]) as client:
        assert client.protocol_version == "2026-07-28"
        caps = client.server_capabilities
        assert caps is not None
        assert caps.extensions is not None
        assert TASKS in caps.extensions
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == {
        "import_suppliers",
        "export_suppliers",
        "list_suppliers",
        "delete_supplier",
        "list_sample_files",
    }
    listing = tools["list_suppliers"].annotations
    deleting = tools["delete_supplier"].annotations
    assert listing is not None
    assert listing.read_only_hint is True
    assert deleting is not None
    assert deleting.destructive_hint is True
    assert deleting.read_only_hint is False
    description = tools["import_suppliers"].description or ""
    assert "saved before the cancel stay saved" in description
    assert "cancelled" in description
    assert (tools["import_suppliers"].meta or {}).get("dev.mooring/taskSupport") == "required"


async def test_clean_import_completes_with_saved_ids_and_a_report_link(store_path: Path) -> None:
    async with Client(stdio_params(store_path), extensions=[TasksDeclared()]) as client:
        created = await start_task(
            client.session, "import_suppliers", {"path": "suppliers_clean.csv"}
        )
        assert created.status == "working"
        assert created.ttl_ms is not None
        assert created.poll_interval_ms == 40
        assert len(created.task_id) >= 22  # >= 128 bits of url-safe base64
        done = await wait_task(client.session, created.task_id)
        assert done.status == "completed", done
        result = done.structured
        assert (result["saved"], result["skipped"], result["rejected"]) == (12, 0, 0)
        assert result["savedIds"][:2] == ["SUP-0001", "SUP-0002"]
        assert result["identifierColumn"] == "supplier_id"
        assert done.result is not None
        link = done.result["content"][1]
        assert link["type"] == "resource_link"
        assert created.task_id in link["uri"]
        report = await client.read_resource(link["uri"])
        listed = await client.call_tool("list_suppliers", {"limit": 5})
    first = report.contents[0]
    assert getattr(first, "text", "").count("SUP-00") == 12
    assert listed.structured_content is not None
    assert listed.structured_content["total"] == 12
    assert listed.structured_content["nextCursor"] == "SUP-0005"


async def test_bad_rows_are_rejected_each_with_its_reason(store_path: Path) -> None:
    async with Client(stdio_params(store_path), extensions=[TasksDeclared()]) as client:
        created = await start_task(
            client.session, "import_suppliers", {"path": str(SAMPLES / "suppliers_bad_rows.csv")}
        )
        done = await wait_task(client.session, created.task_id)
    result = done.structured
    assert (result["saved"], result["rejected"]) == (3, 6)
    reasons = {row["row"]: row["reason"] for row in result["rejectedRows"]}
    assert reasons == {
        2: "missing name",
        3: "country 'Austria' is not a two-letter ISO code",
        4: "invalid email 'not-an-email'",
        5: "missing supplier id",
        6: "expected 5 fields, found 3",
        8: "duplicate supplier id (first seen at row 1)",
    }


async def test_a_task_only_tool_without_the_extension_gets_32021_with_required_capabilities(
    store_path: Path,
) -> None:
    async with Client(stdio_params(store_path)) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("import_suppliers", {"path": "suppliers_clean.csv"})
        listed = await client.call_tool("list_suppliers", {})
    assert raised.value.error.code == -32021
    assert raised.value.error.data == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
    assert listed.is_error is False


async def test_ambiguous_identifier_asks_which_column_with_safe_samples(
    store_path: Path, tmp_path: Path
) -> None:
    csv_path = tmp_path / "ambiguous.csv"
    shutil.copy(SAMPLES / "suppliers_ambiguous_id.csv", csv_path)
    async with Client(stdio_params(store_path), extensions=[TasksDeclared()]) as client:
        created = await start_task(client.session, "import_suppliers", {"path": str(csv_path)})
        asked = await wait_task(
            client.session, created.task_id, lambda t: t.status == "input_required"
        )
        assert asked.input_requests is not None
        [(key, request)] = asked.input_requests.items()
        params: dict[str, Any] = request["params"]
        assert request["method"] == "elicitation/create"
        assert params["message"].startswith("Which column is the supplier identifier?")
        assert "- vendor_code: V-1001, V-1002, V-1003" in params["message"]
        assert "o***@acme-fasteners.exa…," in params["message"]  # e-mail samples are masked
        assert params["requestedSchema"]["properties"]["column"]["enum"][:2] == [
            "vendor_code",
            "erp_id",
        ]

        await update_task(client.session, created.task_id, {key: answer("nope")})
        again = await wait_task(
            client.session,
            created.task_id,
            lambda t: t.status == "input_required" and key not in (t.input_requests or {}),
        )
        [(key2, request2)] = (again.input_requests or {}).items()
        assert "'nope' is not a column of ambiguous.csv" in request2["params"]["message"]

        with csv_path.open("a") as handle:  # the file changes while the question is open
            handle.write("V-1009,88128,Cedar Textiles S.p.A.,IT,ordini@cedar-textiles.example\n")
        await update_task(client.session, created.task_id, {key2: answer("vendor_code")})
        third = await wait_task(
            client.session,
            created.task_id,
            lambda t: t.status == "input_required" and key2 not in (t.input_requests or {}),
        )
        [(key3, request3)] = (third.input_requests or {}).items()
        assert "changed while you were answering" in request3["params"]["message"]

        await update_task(client.session, created.task_id, {key3: answer("vendor_code")})
        done = await wait_task(client.session, created.task_id)
    assert done.status == "completed", done
    assert done.structured["identifierColumn"] == "vendor_code"
    assert done.structured["saved"] == 9
    assert len({key, key2, key3}) == 3


async def test_declining_the_question_ends_the_import_with_a_tool_error(store_path: Path) -> None:
    async with Client(stdio_params(store_path), extensions=[TasksDeclared()]) as client:
        created = await start_task(
            client.session, "import_suppliers", {"path": "suppliers_ambiguous_id.csv"}
        )
        asked = await wait_task(
            client.session, created.task_id, lambda t: t.status == "input_required"
        )
        [key] = list(asked.input_requests or {})
        await update_task(
            client.session, created.task_id, {key: {"action": "decline"}, "unknown-key": {}}
        )
        done = await wait_task(client.session, created.task_id)
    assert done.status == "completed"
    assert done.result is not None
    assert done.result["isError"] is True
    assert "declined" in done.result["content"][0]["text"]


async def test_cancel_keeps_saved_records_and_reimport_skips_them(
    store_path: Path, medium_csv: Path
) -> None:
    slow = stdio_params(store_path, "--rows-per-checkpoint", "300", "--checkpoint-delay-ms", "30")
    async with Client(slow, extensions=[TasksDeclared()]) as client:
        created = await start_task(client.session, "import_suppliers", {"path": str(medium_csv)})
        await wait_task(client.session, created.task_id, lambda t: rows_validated(t) >= 900)
        await cancel_task(client.session, created.task_id)
        cancelled = await wait_task(client.session, created.task_id)
        assert cancelled.status == "cancelled"
        assert cancelled.result is None
        assert "stay saved" in (cancelled.status_message or "")
        await cancel_task(client.session, created.task_id)  # idempotent on a terminal task
        listed = await client.call_tool("list_suppliers", {"limit": 1})
        assert listed.structured_content is not None
        kept = int(listed.structured_content["total"])
        assert 0 < kept < 5994
        assert f"the {kept:,} suppliers saved before the cancel stay saved" in (
            cancelled.status_message or ""
        )

        again = await start_task(client.session, "import_suppliers", {"path": str(medium_csv)})
        done = await wait_task(client.session, again.task_id)
    result = done.structured
    assert result["skipped"] == kept
    assert result["saved"] == 5994 - kept
    assert result["rejected"] == 6


async def test_export_writes_a_csv_and_refuses_to_overwrite(
    store_path: Path, tmp_path: Path
) -> None:
    target = tmp_path / "export.csv"
    async with Client(
        stdio_params(store_path, "--rows-per-checkpoint", "5"), extensions=[TasksDeclared()]
    ) as client:
        imported = await start_task(
            client.session, "import_suppliers", {"path": "suppliers_clean.csv"}
        )
        await wait_task(client.session, imported.task_id)
        deleted = await client.call_tool("delete_supplier", {"supplier_id": "SUP-0003"})
        missing = await client.call_tool("delete_supplier", {"supplier_id": "SUP-0003"})
        export = await start_task(client.session, "export_suppliers", {"path": str(target)})
        done = await wait_task(client.session, export.task_id)
        refused = await start_task(client.session, "export_suppliers", {"path": str(target)})
        refusal = await wait_task(client.session, refused.task_id)
    assert deleted.is_error is False
    assert missing.is_error is True
    assert done.status == "completed"
    assert done.structured == {"path": str(target), "rows": 11}
    lines = target.read_text().splitlines()
    assert lines[0] == "supplier_id,name,country,email,phone"
    assert len(lines) == 12
    assert "SUP-0003" not in target.read_text()
    assert not target.with_name("export.csv.partial").exists()
    assert refusal.result is not None
    assert refusal.result["isError"] is True


async def test_listen_stream_delivers_task_notifications_for_the_requested_ids(
    store_path: Path, medium_csv: Path
) -> None:
    command = raw_stdio_command(
        store_path, "--rows-per-checkpoint", "1000", "--checkpoint-delay-ms", "20"
    )
    process = await anyio.open_process(command)
    raw = RawStdio(process)
    try:
        with anyio.fail_after(30):
            discovered = await raw.request(1, "server/discover")
            assert TASKS in discovered["result"]["capabilities"]["extensions"]
            created = await raw.request(
                2,
                "tools/call",
                {"name": "import_suppliers", "arguments": {"path": str(medium_csv)}},
            )
            task_id = created["result"]["taskId"]
            assert created["result"]["resultType"] == "task"
            await raw.send(
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "subscriptions/listen",
                    "params": {
                        "notifications": {"taskIds": [task_id, "no-such-task"]},
                        "_meta": envelope(),
                    },
                }
            )
            ack = await raw.receive()
            assert ack["method"] == "notifications/subscriptions/acknowledged"
            assert ack["params"]["notifications"]["taskIds"] == [task_id]
            assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 3
            statuses: list[str] = []
            while not statuses or statuses[-1] != "completed":
                note = await raw.receive()
                assert note["method"] == "notifications/tasks", note
                assert note["params"]["taskId"] == task_id
                assert note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 3
                statuses.append(note["params"]["status"])
            assert note["params"]["result"]["structuredContent"]["saved"] == 5994
            assert "working" in statuses
    finally:
        await raw.close()


async def test_listen_for_task_ids_without_the_extension_gets_32021(store_path: Path) -> None:
    process = await anyio.open_process(raw_stdio_command(store_path))
    raw = RawStdio(process)
    try:
        with anyio.fail_after(20):
            await raw.send(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "subscriptions/listen",
                    "params": {"notifications": {"taskIds": ["x"]}, "_meta": envelope(tasks=False)},
                }
            )
            reply = await raw.receive()
            unknown = await raw.request(2, "tasks/get", {"taskId": "tasks-conformance-nonexistent"})
            removed = await raw.request(3, "tasks/result", {"taskId": "x"})
    finally:
        await raw.close()
    assert reply["error"]["code"] == -32021
    assert unknown["error"] == {
        "code": -32602,
        "message": "Failed to retrieve task: Task not found",
    }
    assert removed["error"]["code"] == -32601


async def test_dropped_stdio_reply_leaves_a_task_that_the_next_instance_finishes(
    store_path: Path,
) -> None:
    process = await anyio.open_process(
        raw_stdio_command(store_path, "--fault-drop-create-reply", "1")
    )
    raw = RawStdio(process)
    try:
        with anyio.fail_after(20):
            await raw.send(
                frame(
                    1,
                    "tools/call",
                    {"name": "import_suppliers", "arguments": {"path": "suppliers_clean.csv"}},
                )
            )
            with pytest.raises(anyio.IncompleteRead):
                await raw.receive()
            assert await process.wait() == 0
    finally:
        await raw.close()
    async with Client(stdio_params(store_path), extensions=[TasksDeclared()]) as client:
        # The reply was lost, so the client never learned the id; the data shows the task ran.
        with anyio.fail_after(20):
            while True:
                listed = await client.call_tool("list_suppliers", {})
                assert listed.structured_content is not None
                if listed.structured_content["total"] == 12:
                    break
                await anyio.sleep(0.04)


async def test_get_update_cancel_answer_for_the_same_client_only(store_path: Path) -> None:
    async with Client(stdio_params(store_path), extensions=[TasksDeclared()]) as client:
        created = await start_task(
            client.session, "import_suppliers", {"path": "suppliers_ambiguous_id.csv"}
        )
        first = await get_task(
            client.session, created.task_id
        )  # readable as soon as it was announced
        assert first.task_id == created.task_id
        await wait_task(client.session, created.task_id, lambda t: t.status == "input_required")
        await cancel_task(client.session, created.task_id)
        done = await wait_task(client.session, created.task_id)
    assert done.status == "cancelled"
