"""Composition root: the store, the task runner, the Tasks extension and the tools, in order."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from mcp.server.auth.settings import AuthSettings
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from mooring.demo_server import __version__, oauth
from mooring.demo_server.config import ServerConfig
from mooring.demo_server.extension import TasksExtension, caller_scope
from mooring.demo_server.fixtures import FIXTURE_JOBS, gather_user_name, large_rows
from mooring.demo_server.jobs import (
    EXPORT_DESCRIPTION,
    EXPORT_JOB,
    IMPORT_DESCRIPTION,
    IMPORT_JOB,
    REPORT_URI,
)
from mooring.demo_server.middleware import RequestLog, TaskListen
from mooring.demo_server.runner import JobContext, JobError, JobSpec, NeedsTaskError, TaskRunner
from mooring.demo_server.store import Store
from mooring.demo_server.wire import (
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    TASK_SUPPORT_META_KEY,
    required_extension_error_data,
)

SERVER_NAME = "mooring-demo"
INSTRUCTIONS = (
    "Supplier records: import a supplier CSV (import_suppliers, a task), list, delete and "
    "export them. "
    "Call list_sample_files for bundled example files."
)

SAMPLES_URI = "mooring-demo://samples"
"""A text resource: the bundled sample files, one a line."""

DropHook = Callable[[ServerRequestContext[Any, Any], str], None]


@dataclass
class DemoServer:
    """Everything one server instance is made of."""

    config: ServerConfig
    store: Store
    runner: TaskRunner
    tasks: TasksExtension
    mcp: MCPServer[Any]


def build_jobs(config: ServerConfig) -> dict[str, JobSpec]:
    """The task-capable tools of this configuration."""
    jobs = [IMPORT_JOB, EXPORT_JOB, *(FIXTURE_JOBS if config.conformance_fixtures else [])]
    return {job.name: job for job in jobs}


def _tool_result(result: Mapping[str, Any]) -> CallToolResult:
    return CallToolResult.model_validate(dict(result), by_name=False)


def build_server(
    config: ServerConfig,
    *,
    on_drop_reply: DropHook | None = None,
    resource_url: str | None = None,
) -> DemoServer:
    """Build a server instance (not yet serving: run ``runner.serve`` and a transport).

    ``resource_url`` is the served ``/mcp`` URL; it is required with ``config.oauth_issuer``
    (tokens must be issued for it, and the protected resource metadata names it).
    """
    store = Store(config.store)
    jobs = build_jobs(config)
    runner = TaskRunner(store, config, jobs)
    gatherers = {"test_tool_with_task": gather_user_name} if config.conformance_fixtures else {}
    tasks = TasksExtension(store, runner, config, gatherers=gatherers, on_drop_reply=on_drop_reply)
    middleware: list[Any] = []
    if config.request_log is not None:
        middleware.append(RequestLog(config.request_log))
    if not config.faults.no_task_notifications:
        middleware.append(TaskListen(tasks))
    auth: AuthSettings | None = None
    verifier: oauth.IntrospectionVerifier | None = None
    if config.oauth_issuer is not None:
        if resource_url is None:
            raise ValueError("an OAuth-protected server needs its resource URL")
        auth = oauth.auth_settings(config.oauth_issuer, resource_url)
        verifier = oauth.IntrospectionVerifier(config.oauth_issuer)
    server: MCPServer[Any] = MCPServer(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        extensions=[tasks],
        middleware=middleware,
        log_level=config.log_level if config.log_level in _LEVELS else "WARNING",  # type: ignore[arg-type]
        auth=auth,
        token_verifier=verifier,
    )
    if config.oauth_issuer is not None and resource_url is not None:
        server.custom_route("/.well-known/oauth-protected-resource", methods=["GET"])(
            oauth.root_metadata_endpoint(config.oauth_issuer, resource_url)
        )

    async def run_inline(spec: JobSpec, arguments: dict[str, Any]) -> CallToolResult:
        """Run a task-capable tool synchronously (for clients without the Tasks extension)."""
        try:
            return _tool_result(await spec.run(JobContext(store, config), arguments))
        except JobError as exc:
            raise MCPError(code=exc.code, message=exc.message, data=exc.data) from exc
        except NeedsTaskError as exc:
            raise MCPError(
                code=MISSING_REQUIRED_CLIENT_CAPABILITY,
                message=str(exc),
                data=required_extension_error_data(),
            ) from exc

    def task_meta(spec: JobSpec) -> dict[str, Any]:
        return {TASK_SUPPORT_META_KEY: spec.task_support}

    @server.tool(
        name="import_suppliers",
        title="Import suppliers from a CSV file",
        description=IMPORT_DESCRIPTION,
        annotations=ToolAnnotations(
            title="Import suppliers",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
        meta=task_meta(IMPORT_JOB),
        structured_output=False,
    )
    async def import_suppliers(
        path: Annotated[
            str,
            Field(
                description="CSV file to import (absolute, or relative to the samples directory)"
            ),
        ],
    ) -> CallToolResult:
        return await run_inline(IMPORT_JOB, {"path": path})

    @server.tool(
        name="export_suppliers",
        title="Export suppliers to a CSV file",
        description=EXPORT_DESCRIPTION,
        annotations=ToolAnnotations(
            title="Export suppliers",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        ),
        meta=task_meta(EXPORT_JOB),
        structured_output=False,
    )
    async def export_suppliers(
        path: Annotated[str, Field(description="CSV file to create (must not exist yet)")],
    ) -> CallToolResult:
        return await run_inline(EXPORT_JOB, {"path": path})

    @server.tool(
        name="list_suppliers",
        title="List saved suppliers",
        annotations=ToolAnnotations(
            title="List suppliers", read_only_hint=True, idempotent_hint=True, open_world_hint=False
        ),
        structured_output=False,
    )
    async def list_suppliers(
        limit: Annotated[int, Field(ge=1, le=500, description="Page size")] = 50,
        after: Annotated[
            str | None, Field(description="Cursor: the last supplier id of the previous page")
        ] = None,
        query: Annotated[str | None, Field(description="Substring of the id or name")] = None,
    ) -> CallToolResult:
        """List saved suppliers in id order, a page at a time. Read-only."""
        rows, total = await store.run(store.list_suppliers, limit, after, query)
        page: dict[str, Any] = {"suppliers": rows, "total": total}
        if len(rows) == limit:
            page["nextCursor"] = rows[-1]["supplier_id"]
        text = f"{len(rows)} of {total} suppliers" + (f" matching {query!r}" if query else "")
        return _tool_result(
            {"content": [{"type": "text", "text": text}], "structuredContent": page}
        )

    @server.tool(
        name="delete_supplier",
        title="Delete a supplier",
        annotations=ToolAnnotations(
            title="Delete supplier",
            read_only_hint=False,
            destructive_hint=True,
            idempotent_hint=True,
            open_world_hint=False,
        ),
        structured_output=False,
    )
    async def delete_supplier(
        supplier_id: Annotated[str, Field(description="The supplier's id")],
    ) -> CallToolResult:
        """Permanently delete one saved supplier record. Destructive: it cannot be undone."""
        if await store.run(store.delete_supplier, supplier_id):
            return _tool_result(
                {
                    "content": [{"type": "text", "text": f"Deleted supplier {supplier_id}."}],
                    "structuredContent": {"deleted": supplier_id},
                }
            )
        return _tool_result(
            {
                "content": [{"type": "text", "text": f"No supplier with id {supplier_id!r}."}],
                "isError": True,
            }
        )

    @server.tool(
        name="list_sample_files",
        title="List the bundled sample CSV files",
        annotations=ToolAnnotations(
            title="List sample files", read_only_hint=True, open_world_hint=False
        ),
        structured_output=False,
    )
    async def list_sample_files() -> CallToolResult:
        """List the bundled synthetic supplier CSV files that import_suppliers accepts by name."""
        files = _sample_files(config.samples_dir)
        text = (
            "\n".join(f"{name} ({size:,} bytes)" for name, size in files)
            or "No sample files found."
        )
        structured = {"files": [{"path": name, "bytes": size} for name, size in files]}
        return _tool_result(
            {"content": [{"type": "text", "text": text}], "structuredContent": structured}
        )

    @server.resource(
        REPORT_URI,
        name="import-report",
        title="Import report",
        description="Every row outcome of an import task: saved and skipped ids, rejected rows.",
        mime_type="application/json",
    )
    async def import_report(task_id: str, ctx: Context) -> str:
        task = await store.run(store.get_task, task_id)
        if task is None or task.tool != IMPORT_JOB.name or task.scope != caller_scope(ctx.headers):
            raise ResourceError(f"No import report for task {task_id}")
        report = await store.run(store.import_report, task_id)
        return json.dumps({"taskId": task_id, "status": task.status, **report})

    @server.resource(
        SAMPLES_URI,
        name="sample-files",
        title="Sample files",
        description="The bundled supplier CSV files that import_suppliers accepts by name.",
        mime_type="text/plain",
    )
    def sample_files() -> str:
        files = _sample_files(config.samples_dir)
        return "\n".join(f"{name} ({size:,} bytes)" for name, size in files) or "No files."

    @server.prompt(
        name="summarise_import",
        title="Summarise an import",
        description="Ask the model to import a supplier CSV and summarise what was rejected.",
    )
    def summarise_import(
        path: Annotated[str, Field(description="The CSV file to import")],
        focus: Annotated[str, Field(description="What to look at most")] = "",
    ) -> str:
        text = f"Import the supplier file {path} with import_suppliers, then summarise the result"
        return text + (f", looking most at {focus}." if focus else ".")

    if config.conformance_fixtures:
        _add_fixture_tools(server, run_inline, {job.name: job for job in FIXTURE_JOBS})

    return DemoServer(config=config, store=store, runner=runner, tasks=tasks, mcp=server)


_LEVELS = frozenset({"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"})


def _sample_files(samples_dir: Path | None) -> list[tuple[str, int]]:
    if samples_dir is None or not samples_dir.is_dir():
        return []
    return sorted(
        (str(path.relative_to(samples_dir)), path.stat().st_size)
        for path in samples_dir.rglob("*.csv")
        if path.is_file()
    )


def _add_fixture_tools(
    server: MCPServer[Any],
    run_inline: Callable[[JobSpec, dict[str, Any]], Any],
    jobs: Mapping[str, JobSpec],
) -> None:
    """The conformance suite's fixture tools (see ``fixtures.py``)."""

    def meta(name: str) -> dict[str, Any]:
        return {TASK_SUPPORT_META_KEY: jobs[name].task_support}

    @server.tool(name="greet", structured_output=False)
    def greet(name: str) -> str:
        """Say hello (synchronous only)."""
        return f"Hello, {name}!"

    @server.tool(name="large_text", structured_output=False)
    def large_text(megabytes: float = 1.0) -> str:
        """Return `megabytes` MB (at most 64) of supplier rows as one text result, at once: for
        testing how a host carries, stores and shows a very large result."""
        return large_rows(megabytes)

    @server.tool(name="slow_compute", meta=meta("slow_compute"), structured_output=False)
    async def slow_compute(seconds: float, label: str = "") -> CallToolResult:
        """Compute for `seconds` seconds (a task when the client supports tasks)."""
        result: CallToolResult = await run_inline(
            jobs["slow_compute"], {"seconds": seconds, "label": label}
        )
        return result

    async def required(name: str) -> CallToolResult:
        result: CallToolResult = await run_inline(jobs[name], {})
        return result

    @server.tool(name="failing_job", meta=meta("failing_job"), structured_output=False)
    async def failing_job() -> CallToolResult:
        """Fails with a tool error (task required)."""
        return await required("failing_job")

    @server.tool(
        name="protocol_error_job", meta=meta("protocol_error_job"), structured_output=False
    )
    async def protocol_error_job() -> CallToolResult:
        """Fails with a JSON-RPC error (task required)."""
        return await required("protocol_error_job")

    @server.tool(name="confirm_delete", meta=meta("confirm_delete"), structured_output=False)
    async def confirm_delete(filename: str) -> CallToolResult:
        """Asks for confirmation before 'deleting' a file (task required)."""
        return await required("confirm_delete")

    @server.tool(name="multi_input", meta=meta("multi_input"), structured_output=False)
    async def multi_input() -> CallToolResult:
        """Asks two questions at once (task required)."""
        return await required("multi_input")

    @server.tool(name="hostile_text", meta=meta("hostile_text"), structured_output=False)
    async def hostile_text() -> CallToolResult:
        """Sends control and bidi characters in its status, question and result (task
        required): for testing that hosts show server text inert."""
        return await required("hostile_text")

    @server.tool(
        name="test_tool_with_task", meta=meta("test_tool_with_task"), structured_output=False
    )
    async def test_tool_with_task() -> CallToolResult:
        """Asks for a name (MRTR), then runs as a task (task required)."""
        return await required("test_tool_with_task")
