"""The server half of the Tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663).

Intercepts ``tools/call`` to turn calls of task-capable tools into durable tasks, and serves
``tasks/get``, ``tasks/update`` and ``tasks/cancel`` from the shared SQLite store, so any instance
answers for any task. Tasks are scoped to the caller: with ``--oauth-issuer`` the verified token's
principal (client, issuer, subject), so refreshed tokens keep their tasks; otherwise on HTTP the
bearer token's hash, else ``anonymous``. A task is invisible (``-32602``, as if unknown) outside
its scope.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import principal_components
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_NAME_HEADER, decode_header_value
from mcp.types import CallToolRequestParams
from pydantic import ValidationError

from mooring.demo_server.config import ServerConfig
from mooring.demo_server.runner import JobSpec, TaskRunner
from mooring.demo_server.store import NewTask, Store, TaskRow
from mooring.demo_server.wire import (
    EXPIRED_MESSAGE,
    HEADER_MISMATCH,
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    MODERN_PROTOCOL,
    NOT_FOUND_MESSAGE,
    TASKS_EXTENSION,
    TaskIdParams,
    UpdateTaskParams,
    iso_ms,
    now_ms,
    required_extension_error_data,
)

logger = logging.getLogger("mooring.demo_server.tasks")

ANONYMOUS_SCOPE = "anonymous"


@dataclass(frozen=True)
class NeedInput:
    """An MRTR round: the ``tools/call`` must be retried with answers before a task is created."""

    input_requests: dict[str, Any]


Gather = Callable[[CallToolRequestParams], "dict[str, Any] | NeedInput"]
"""Turns a ``tools/call`` into task arguments, or asks for input first (MRTR composition)."""


def client_declared_tasks(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether *this request* declared the Tasks extension (the declaration is per request)."""
    if ctx.protocol_version != MODERN_PROTOCOL:
        return False
    capabilities = ctx.session.client_capabilities
    return bool(
        capabilities and capabilities.extensions and TASKS_EXTENSION in capabilities.extensions
    )


def require_tasks(ctx: ServerRequestContext[Any, Any]) -> None:
    """Raise ``-32021`` naming the extension unless the request declared it."""
    if not client_declared_tasks(ctx):
        raise MCPError(
            code=MISSING_REQUIRED_CLIENT_CAPABILITY,
            message=f"Client did not declare required extension {TASKS_EXTENSION!r}",
            data=required_extension_error_data(),
        )


def request_headers(ctx: ServerRequestContext[Any, Any]) -> Mapping[str, str] | None:
    """The HTTP request headers, or None on stdio."""
    headers = getattr(ctx.request, "headers", None)
    return headers if isinstance(headers, Mapping) else None


def _problem(err: Any) -> str:
    if err["type"] == "missing":
        return "missing"
    message = str(err["msg"])
    return message[:1].lower() + message[1:]


def argument_errors(tool: str, exc: ValidationError) -> str:
    """``Invalid arguments for TOOL: path (missing), limit (should be an integer)``."""
    problems = sorted(
        {
            f"{'.'.join(str(p) for p in err['loc']) or 'arguments'} ({_problem(err)})"
            for err in exc.errors()
        }
    )
    return f"Invalid arguments for {tool}: {', '.join(problems) or 'input'}"


def caller_scope(headers: Mapping[str, str] | None) -> str:
    """The identity tasks are bound to: the OAuth principal when the request's token was
    verified, else a hash of the bearer token, else ``anonymous``."""
    verified = get_access_token()
    if verified is not None:
        principal = json.dumps(principal_components(verified), separators=(",", ":"))
        return "oauth:" + hashlib.sha256(principal.encode()).hexdigest()
    if headers is None:
        return ANONYMOUS_SCOPE
    authorization = headers.get("authorization", "")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return ANONYMOUS_SCOPE
    return "bearer:" + hashlib.sha256(token.strip().encode()).hexdigest()


def task_wire(task: TaskRow, result_type: str, *, detailed: bool) -> dict[str, Any]:
    """The task as the wire shows it: ``CreateTaskResult`` (flat) or a ``DetailedTask``."""
    out: dict[str, Any] = {
        "resultType": result_type,
        "taskId": task.task_id,
        "status": task.status,
        "createdAt": iso_ms(task.created_at_ms),
        "lastUpdatedAt": iso_ms(task.updated_at_ms),
        "ttlMs": task.ttl_ms,
        "pollIntervalMs": task.poll_interval_ms,
    }
    if task.status_message is not None:
        out["statusMessage"] = task.status_message
    if detailed:
        if task.status == "input_required":
            out["inputRequests"] = dict(task.input_requests)
        elif task.status == "completed" and task.result is not None:
            out["result"] = task.result
        elif task.status == "failed" and task.error is not None:
            out["error"] = task.error
    return out


class TasksExtension(Extension):
    """Durable Tasks on top of ``MCPServer``'s extension hooks."""

    identifier = TASKS_EXTENSION

    def __init__(
        self,
        store: Store,
        runner: TaskRunner,
        config: ServerConfig,
        *,
        gatherers: Mapping[str, Gather] | None = None,
        on_drop_reply: Callable[[ServerRequestContext[Any, Any], str], None] | None = None,
    ) -> None:
        self.store = store
        self.runner = runner
        self.config = config
        self.gatherers = dict(gatherers or {})
        self.on_drop_reply = on_drop_reply
        self._drops_left = config.faults.drop_create_reply

    @property
    def jobs(self) -> Mapping[str, JobSpec]:
        """The task-capable tools."""
        return self.runner.jobs

    # -- tools/call --------------------------------------------------------------------------------

    async def intercept_tool_call(
        self,
        params: CallToolRequestParams,
        ctx: ServerRequestContext[Any, Any],
        call_next: CallNext,
    ) -> HandlerResult:
        """Create a task for a task-capable tool if, and only if, this request declared tasks."""
        spec = self.jobs.get(params.name)
        if spec is None:
            return await call_next(ctx)
        if not client_declared_tasks(ctx):
            if spec.task_support == "required":
                require_tasks(ctx)
            return await call_next(ctx)
        gather = self.gatherers.get(params.name)
        if gather is not None:
            gathered = gather(params)
            if isinstance(gathered, NeedInput):
                return {"resultType": "input_required", "inputRequests": gathered.input_requests}
            arguments: dict[str, Any] = gathered
        else:
            arguments = params.arguments or {}
        try:
            validated = spec.args_model.model_validate(arguments)
        except ValidationError as exc:
            # Same shape the SDK gives a synchronous call with bad arguments: a tool error
            # (a complete result, so a client reads it as the tool's answer, not a failure).
            return {
                "resultType": "complete",
                "content": [{"type": "text", "text": argument_errors(params.name, exc)}],
                "isError": True,
            }
        created = now_ms()
        task = await self.store.run(
            self.store.create_task,
            NewTask(
                task_id=secrets.token_urlsafe(
                    24
                ),  # 192 bits: unguessable, usable as a bearer handle
                scope=caller_scope(request_headers(ctx)),
                tool=spec.name,
                arguments=validated.model_dump(mode="json"),
                status_message=spec.initial_message,
                ttl_ms=self.config.ttl_ms,
                poll_interval_ms=self.config.poll_interval_ms,
                lease_owner=self.runner.owner,
                lease_ms=self.config.lease_ms,
                created_at_ms=created,
            ),
        )
        # The row is committed: tasks/get resolves before the CreateTaskResult leaves.
        if self._drops_left > 0 and self.on_drop_reply is not None:
            self._drops_left -= 1
            self.on_drop_reply(ctx, task.task_id)
        self.runner.start(task)
        self.runner.changes.publish()
        return task_wire(task, "task", detailed=False)

    # -- tasks/* ---------------------------------------------------------------------------------

    def methods(self) -> Sequence[MethodBinding]:
        """``tasks/get``, ``tasks/update`` and ``tasks/cancel`` (2026-07-28 only)."""
        versions = frozenset({MODERN_PROTOCOL})
        return [
            MethodBinding("tasks/get", TaskIdParams, self.get, protocol_versions=versions),
            MethodBinding(
                "tasks/update", UpdateTaskParams, self.update, protocol_versions=versions
            ),
            MethodBinding("tasks/cancel", TaskIdParams, self.cancel, protocol_versions=versions),
        ]

    def _check_routing_header(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> None:
        headers = request_headers(ctx)
        if headers is None:
            return
        if decode_header_value(headers.get(MCP_NAME_HEADER)) != task_id:
            raise MCPError(
                code=HEADER_MISMATCH,
                message=f"{MCP_NAME_HEADER} header does not match the request body's 'taskId'",
            )

    async def lookup(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> TaskRow:
        """The caller's task, or ``-32602`` (unknown, expired or someone else's, alike)."""
        task = await self.store.run(self.store.get_task, task_id)
        if task is None or task.scope != caller_scope(request_headers(ctx)):
            raise MCPError(code=INVALID_PARAMS, message=NOT_FOUND_MESSAGE)
        at = now_ms()
        forget = self.config.faults.forget_after_ms
        if task.expired(at) or (forget is not None and at >= task.created_at_ms + forget):
            self.runner.expunge_local(task_id)
            await self.store.run(self.store.delete_task, task_id)
            raise MCPError(code=INVALID_PARAMS, message=EXPIRED_MESSAGE)
        return task

    async def get(
        self, ctx: ServerRequestContext[Any, Any], params: TaskIdParams
    ) -> dict[str, Any]:
        """``tasks/get``: the authoritative ``DetailedTask``."""
        require_tasks(ctx)
        self._check_routing_header(ctx, params.task_id)
        if self.config.faults.slow_get_ms:
            await anyio.sleep(self.config.faults.slow_get_ms / 1000)
        task = await self.lookup(ctx, params.task_id)
        wire = task_wire(task, "complete", detailed=True)
        malformed = self.config.faults.malformed_status
        if malformed == "unknown-status":
            wire["status"] = "exploded"
        elif malformed == "missing-status":
            del wire["status"]
        return wire

    async def update(
        self, ctx: ServerRequestContext[Any, Any], params: UpdateTaskParams
    ) -> dict[str, Any]:
        """``tasks/update``: record answers to outstanding input requests; ignore other keys."""
        require_tasks(ctx)
        self._check_routing_header(ctx, params.task_id)
        task = await self.lookup(ctx, params.task_id)
        changed = False
        if params.input_responses:
            changed = await self.store.run(
                self.store.apply_input_responses, task.task_id, params.input_responses
            )
        if changed:
            self.runner.poke(task.task_id)
            self.runner.changes.publish()
        return {"resultType": "complete"}

    async def cancel(
        self, ctx: ServerRequestContext[Any, Any], params: TaskIdParams
    ) -> dict[str, Any]:
        """``tasks/cancel``: cooperative; an empty ack, also for tasks that already ended."""
        require_tasks(ctx)
        self._check_routing_header(ctx, params.task_id)
        task = await self.lookup(ctx, params.task_id)
        if task.terminal:
            return {"resultType": "complete"}
        await self.store.run(self.store.request_cancel, task.task_id)
        if not self.runner.cancel_local(task.task_id) and self.runner.owner_gone(task, now_ms()):
            await self.runner.cancel_orphan(task)
        return {"resultType": "complete"}
