"""Task-lifecycle traces: the span tree, its attributes, and a trace that survives a restart."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from mooring.services import tracing
from tests.services.conftest import SAMPLES, HostFactory, demo_definition, run_until

pytestmark = pytest.mark.anyio

_EXPORTER = InMemorySpanExporter()


@pytest.fixture(scope="session", autouse=True)
def _provider() -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
    trace.set_tracer_provider(provider)


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    _EXPORTER.clear()
    yield _EXPORTER
    _EXPORTER.clear()


def by_name(found: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [s for s in found if s.name == name or s.name.startswith(name + " ")]


def one(found: tuple[ReadableSpan, ...], name: str) -> ReadableSpan:
    [span] = by_name(found, name)
    return span


def test_trace_names_are_stable() -> None:
    assert tracing.ROOT == "mooring.tool_round"
    assert tracing.RUN == "mooring.task.run"


async def test_a_normal_task_has_queue_create_run_and_persist_spans(
    hosts: HostFactory, spans: InMemorySpanExporter, tmp_path: Path
) -> None:
    host = await hosts()
    server = demo_definition(tmp_path / "store.sqlite3", tmp_path / "requests.log")
    await host.store.add_server(server)
    record = await host.runner.call(
        server, "import_suppliers", {"path": str(SAMPLES / "suppliers_clean.csv")}
    )
    final: TaskRecord = await run_until(host, record.id, lambda r: r.is_terminal)
    assert final.state is LocalState.COMPLETED

    found = spans.get_finished_spans()
    root = one(found, tracing.ROOT)
    root_id = root.context.span_id
    for name in (tracing.APPROVAL, tracing.QUEUE, tracing.CREATE, tracing.RUN):
        child = one(found, name)
        assert child.context.trace_id == root.context.trace_id, name
        assert child.parent is not None
        assert child.parent.span_id == root_id, name
    assert root.attributes is not None
    assert root.attributes["mooring.operation.id"] == final.id
    assert root.attributes["mcp.task.id"] == final.task_id
    assert root.attributes["mcp.tool.name"] == "import_suppliers"

    # The SDK's own client span for tools/call nests under our create span, not beside it.
    create = one(found, tracing.CREATE)
    [sdk_call] = [s for s in found if s.name.startswith("MCP send tools/call")]
    assert sdk_call.parent is not None
    assert sdk_call.parent.span_id == create.context.span_id

    run = one(found, tracing.RUN)
    assert run.attributes is not None
    assert run.attributes["poll.count"] == final.poll_count
    # The end was learnt from a poll or from a notification applied without one.
    notified = run.attributes["notifications.count"]
    assert isinstance(notified, int)
    assert final.poll_count + notified >= 1
    assert run.attributes["poll.errors"] == 0
    assert run.attributes["input.wait_ms"] == 0
    assert run.attributes["mcp.task.status"] == "completed"
    assert int(str(run.attributes["server.run_ms"])) >= 0
    queue = one(found, tracing.QUEUE)
    # Queue, create and run are separate numbers, in order.
    assert queue.end_time is not None
    assert run.start_time is not None
    assert queue.end_time <= run.start_time
    assert by_name(found, tracing.PERSIST)


async def test_an_input_round_is_timed_in_the_run_span(
    hosts: HostFactory, spans: InMemorySpanExporter, tmp_path: Path
) -> None:
    host = await hosts()
    server = demo_definition(tmp_path / "store.sqlite3", tmp_path / "requests.log")
    await host.store.add_server(server)
    record = await host.runner.call(
        server, "import_suppliers", {"path": str(SAMPLES / "suppliers_ambiguous_id.csv")}
    )
    waiting = await run_until(host, record.id, lambda r: r.state is LocalState.INPUT_REQUIRED)
    [question] = await host.store.inputs(waiting.id)
    settled = await host.monitor.answer(
        waiting.id, question.key, {"action": "accept", "content": {"column": "vendor_code"}}
    )
    assert settled.delivered
    final = await run_until(host, record.id, lambda r: r.is_terminal)
    assert final.state is LocalState.COMPLETED
    run = one(spans.get_finished_spans(), tracing.RUN)
    assert run.attributes is not None
    assert int(str(run.attributes["input.wait_ms"])) > 0


async def test_a_cancel_ends_the_run_span_cancelled(
    hosts: HostFactory, spans: InMemorySpanExporter, tmp_path: Path
) -> None:
    big = tmp_path / "big.csv"
    rows = ["supplier_id,name,country,email,phone"]
    rows += [f"S-{i:05d},Supplier {i},DE,s{i}@example.org,+49 1" for i in range(300)]
    big.write_text("\n".join(rows) + "\n")
    host = await hosts()
    server = demo_definition(
        tmp_path / "store.sqlite3",
        tmp_path / "requests.log",
        checkpoint_delay_ms=200,
        rows_per_checkpoint=10,
    )
    await host.store.add_server(server)
    record = await host.runner.call(server, "import_suppliers", {"path": str(big)})
    await host.monitor.cancel(record.id)
    final = await run_until(host, record.id, lambda r: r.is_terminal)
    assert final.state is LocalState.CANCELLED
    run = one(spans.get_finished_spans(), tracing.RUN)
    assert run.attributes is not None
    assert run.attributes["mcp.task.status"] == "cancelled"


async def test_a_task_that_survives_a_restart_stays_in_one_trace_with_its_true_start(
    hosts: HostFactory, spans: InMemorySpanExporter, tmp_path: Path
) -> None:
    first = await hosts()
    server = demo_definition(
        tmp_path / "store.sqlite3",
        tmp_path / "requests.log",
        checkpoint_delay_ms=100,
        rows_per_checkpoint=3,
    )
    await first.store.add_server(server)
    record = await first.runner.call(
        server, "import_suppliers", {"path": str(SAMPLES / "suppliers_clean.csv")}
    )
    assert record.state is LocalState.WORKING
    root = one(spans.get_finished_spans(), tracing.ROOT)
    from tests.services.conftest import close_host

    await close_host(first)  # the app quits while the task runs

    second = await hosts()
    report = await second.reconciler.run()
    assert [r.id for r in report.refreshed] == [record.id]
    final = await run_until(second, record.id, lambda r: r.is_terminal)
    assert final.state is LocalState.COMPLETED

    found = spans.get_finished_spans()
    run = one(found, tracing.RUN)
    assert run.context.trace_id == root.context.trace_id
    assert run.parent is not None
    assert run.parent.span_id == root.context.span_id
    assert final.sent_at is not None
    assert run.start_time == tracing.ns(final.sent_at)  # the true start, from the first run
    reconcile = one(found, tracing.RECONCILE)
    assert reconcile.context.trace_id == root.context.trace_id
