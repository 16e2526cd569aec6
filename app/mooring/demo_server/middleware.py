"""Server middleware: the request log, and ``subscriptions/listen`` streams for task ids.

The SDK's stock listen handler rebuilds its acknowledgement from the four core filters and so
drops ``taskIds``; a listen request that asks for task ids is served here instead, before the
SDK validates it. Listen streams re-read the store on every local change and at the poll
interval, so they also see tasks that another instance runs.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, cast

import mcp.types as types
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY
from pydantic import BaseModel

from mooring.demo_server.extension import (
    TasksExtension,
    caller_scope,
    request_headers,
    require_tasks,
    task_wire,
)
from mooring.demo_server.store import TaskRow
from mooring.demo_server.wire import iso_ms, now_ms

logger = logging.getLogger("mooring.demo_server.middleware")


class RequestLog:
    """Append-only JSON-lines log of received JSON-RPC requests (one line per request).

    Each line: ``{"ts", "pid", "transport", "method", "id"}`` plus ``"tool"`` for ``tools/call``,
    ``"taskId"`` for ``tasks/*``, ``"filters"`` (the filter names) and ``"taskIds"`` (those asked
    for) for ``subscriptions/listen`` and, with ``--oauth-issuer``, ``"client"`` (the verified
    token's OAuth client id). Several processes may append to the same file. ``"inflight"``
    counts the requests of the same method this process was handling as this one arrived,
    itself included (its maximum is how many a client had in flight at once).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._inflight: dict[str, int] = {}

    def write(self, entry: Mapping[str, Any]) -> None:
        """Append one line with a single write (atomic for O_APPEND files of this size)."""
        line = (json.dumps(dict(entry), separators=(",", ":"), ensure_ascii=False) + "\n").encode()
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Log a request as it arrives, then handle it."""
        if ctx.request_id is not None:
            params = ctx.params or {}
            entry: dict[str, Any] = {
                "ts": iso_ms(now_ms()),
                "pid": os.getpid(),
                "transport": "http" if request_headers(ctx) is not None else "stdio",
                "method": ctx.method,
                "id": ctx.request_id,
            }
            if ctx.method == "tools/call" and isinstance(params.get("name"), str):
                entry["tool"] = params["name"]
            if ctx.method.startswith("tasks/") and isinstance(params.get("taskId"), str):
                entry["taskId"] = params["taskId"]
            if ctx.method == "subscriptions/listen" and isinstance(
                params.get("notifications"), Mapping
            ):
                entry["filters"] = sorted(str(key) for key in params["notifications"])
                task_ids = params["notifications"].get("taskIds")
                if isinstance(task_ids, list):
                    entry["taskIds"] = [str(task_id) for task_id in task_ids]
            verified = get_access_token()
            if verified is not None:  # --oauth-issuer: who asked (never the token itself)
                entry["client"] = verified.client_id
            inflight = self._inflight[ctx.method] = self._inflight.get(ctx.method, 0) + 1
            entry["inflight"] = inflight
            try:
                self.write(entry)
                return await call_next(ctx)
            finally:
                self._inflight[ctx.method] -= 1
        return await call_next(ctx)


class _TasksNotification(BaseModel):
    """``notifications/tasks``: a full ``DetailedTask`` (not among the SDK's core notifications)."""

    method: Literal["notifications/tasks"] = "notifications/tasks"
    params: dict[str, Any]


class TaskListen:
    """Serves ``subscriptions/listen`` requests that carry ``notifications.taskIds``."""

    def __init__(self, tasks: TasksExtension) -> None:
        self.tasks = tasks

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Take over listen requests for task ids; pass everything else on."""
        if ctx.method != "subscriptions/listen" or ctx.request_id is None:
            return await call_next(ctx)
        notifications = (ctx.params or {}).get("notifications")
        if not isinstance(notifications, Mapping) or "taskIds" not in notifications:
            return await call_next(ctx)
        require_tasks(ctx)
        requested = notifications.get("taskIds")
        if not isinstance(requested, list):
            requested = []
        return await self._serve(
            ctx, cast(Mapping[str, Any], notifications), [str(t) for t in requested]
        )

    async def _visible(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> TaskRow | None:
        store = self.tasks.store
        task = await store.run(store.get_task, task_id)
        if (
            task is None
            or task.scope != caller_scope(request_headers(ctx))
            or task.expired(now_ms())
        ):
            return None
        return task

    async def _serve(
        self, ctx: ServerRequestContext[Any, Any], requested: Mapping[str, Any], task_ids: list[str]
    ) -> HandlerResult:
        meta = {SUBSCRIPTION_ID_META_KEY: ctx.request_id}
        accepted = [
            task_id
            for task_id in dict.fromkeys(task_ids)
            if await self._visible(ctx, task_id) is not None
        ]
        honored: dict[str, Any] = {
            key: True
            for key in ("toolsListChanged", "promptsListChanged", "resourcesListChanged")
            if requested.get(key) is True
        }
        if requested.get("resourceSubscriptions"):
            honored["resourceSubscriptions"] = list(requested["resourceSubscriptions"])
        honored["taskIds"] = accepted
        ack = types.SubscriptionsAcknowledgedNotification(
            params=types.SubscriptionsAcknowledgedNotificationParams(
                notifications=types.SubscriptionFilter.model_validate(honored), _meta=meta
            )
        )
        await ctx.session.send_notification(ack, related_request_id=ctx.request_id)
        last_sent: dict[str, tuple[int, str]] = {}
        feed = self.tasks.runner.changes
        poll_s = max(0.02, self.tasks.config.poll_interval_ms / 1000)
        while True:
            for task_id in accepted:
                task = await self._visible(ctx, task_id)
                if task is None:
                    continue
                marker = (task.updated_at_ms, task.status)
                if last_sent.get(task_id) == marker:
                    continue
                last_sent[task_id] = marker
                params = task_wire(task, "complete", detailed=True)
                del params["resultType"]
                params["_meta"] = meta
                frame = _TasksNotification(params=params)
                await ctx.session.send_notification(
                    cast(types.ServerNotification, frame), related_request_id=ctx.request_id
                )
            await feed.wait(poll_s)
