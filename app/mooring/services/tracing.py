"""Task-lifecycle spans, through the OpenTelemetry API only (the SDK is set up in bootstrap).

Span tree of one tool round (names documented in docs/tracing.md):

    mooring.tool_round {tool}                  root: tool, server, conversation, operation, task id
    ├── mooring.approval                       the approval wait (policy or user)
    ├── mooring.queue                          approved → request handed to the connection
    ├── mooring.create                         tools/call sent → answer received
    │   └── MCP send tools/call …              (the MCP SDK's own client span)
    ├── mooring.task.run                       task created → terminal state observed
    ├── mooring.task.reconcile                 one status read after a relaunch
    └── mooring.result.persist                 final result received → stored

The task can outlive the process, so the root's W3C ``traceparent`` is stored in the task
record; spans emitted later (another process, after a restart) join the same trace with their
true start times. No arguments, results, status messages or secrets are recorded unless the
user opted in to content capture — sizes and digests only.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState

TRACER_NAME = "mooring"
_PROPAGATOR = TraceContextTextMapPropagator()

ROOT = "mooring.tool_round"
APPROVAL = "mooring.approval"
QUEUE = "mooring.queue"
CREATE = "mooring.create"
RUN = "mooring.task.run"
RECONCILE = "mooring.task.reconcile"
PERSIST = "mooring.result.persist"


@functools.cache
def tracer() -> trace.Tracer:
    """Mooring's tracer (from whatever provider is installed; a no-op one by default).

    One per process: the global provider is set once, and a tracer asked for before that is
    a proxy that follows it (the SDK would build a new tracer for every span otherwise).
    """
    return trace.get_tracer(TRACER_NAME)


def ns(moment: datetime) -> int:
    """A datetime as OpenTelemetry's nanoseconds since the epoch."""
    return int(moment.timestamp() * 1_000_000_000)


def traceparent_of(span: Span) -> str | None:
    """The W3C ``traceparent`` of ``span`` (None when tracing is off)."""
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier, context=trace.set_span_in_context(span))
    return carrier.get("traceparent")


def context_of(record: TaskRecord) -> Context | None:
    """The trace context stored in ``record``, to parent spans emitted later."""
    if not record.trace_context:
        return None
    return _PROPAGATOR.extract({"traceparent": record.trace_context})


def record_attributes(record: TaskRecord) -> dict[str, Any]:
    """Identifying attributes (never content)."""
    attributes: dict[str, Any] = {
        "mooring.operation.id": record.id,
        "mcp.tool.name": record.tool,
        "mooring.server.id": record.server_id,
        "mooring.arguments.digest": record.argument_digest,
    }
    if record.task_id:
        attributes["mcp.task.id"] = record.task_id
    if record.conversation_id:
        attributes["mooring.conversation.id"] = record.conversation_id
    return attributes


@contextmanager
def child_span(
    name: str,
    record: TaskRecord,
    *,
    start: datetime | None = None,
    attributes: dict[str, Any] | None = None,
) -> Iterator[Span]:
    """A span under the record's stored trace context (or the current one)."""
    parent = context_of(record)
    span = tracer().start_span(
        name,
        context=parent,
        kind=SpanKind.INTERNAL,
        start_time=ns(start) if start is not None else None,
        attributes={**record_attributes(record), **(attributes or {})},
    )
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        yield span
    except BaseException as exc:
        span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
        raise
    finally:
        otel_context.detach(token)
        span.end()


def emit_run_span(
    record: TaskRecord,
    *,
    start: datetime,
    end: datetime,
    input_wait_ms: int,
    notifications: int,
) -> None:
    """The task run, from creation to the terminal state observed (emitted once, at the end)."""
    attributes: dict[str, Any] = {
        **record_attributes(record),
        "poll.count": record.poll_count,
        "poll.errors": record.poll_errors,
        "notifications.count": notifications,
        "input.wait_ms": input_wait_ms,
        "mcp.task.status": record.state.value,
    }
    if record.last_checked_at is not None:
        attributes["poll.last_at"] = record.last_checked_at.isoformat(timespec="milliseconds")
    if record.server_created_at and record.server_updated_at:
        run = record.server_updated_at - record.server_created_at
        attributes["server.run_ms"] = int(run.total_seconds() * 1000)
    span = tracer().start_span(
        RUN,
        context=context_of(record),
        kind=SpanKind.INTERNAL,
        start_time=ns(start),
        attributes=attributes,
    )
    if record.state in (LocalState.FAILED, LocalState.EXPIRED):
        span.set_status(Status(StatusCode.ERROR, record.state.value))
    span.end(end_time=ns(max(end, start)))
