"""The trace exporters: OTLP/JSON lines on disk, OTLP/HTTP to a collector, rotation."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from google.protobuf import json_format
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, Decision, ParentBased
from opentelemetry.trace import INVALID_SPAN, NonRecordingSpan, SpanContext, TraceFlags, TraceState

from mooring.adapters.telemetry import (
    LifecycleSampler,
    OtlpJsonLinesExporter,
    TelemetryConfig,
    filter_requests,
    read_requests,
    setup_tracing,
    trace_files,
)


def emit(provider: TracerProvider, name: str, **attributes: str | int) -> str:
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span(name, attributes=attributes) as span:
        with tracer.start_as_current_span(f"{name}.child"):
            pass
        return format(span.get_span_context().trace_id, "032x")


def parse_line(line: str) -> ExportTraceServiceRequest:
    """Decode one OTLP/JSON line the way a collector does (hex ids back to bytes)."""
    data = json.loads(line)
    for rs in data["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return json_format.ParseDict(data, ExportTraceServiceRequest())


def test_the_file_is_otlp_json_a_collector_can_decode(tmp_path: Path) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonLinesExporter(tmp_path)))
    trace_id = emit(provider, "mooring.tool_round import", **{"mcp.tool.name": "import"})
    provider.shutdown()

    lines = (tmp_path / "traces.jsonl").read_text().splitlines()
    assert len(lines) == 2  # one export request per ended span
    decoded = [parse_line(line) for line in lines]
    spans = [
        s for r in decoded for rs in r.resource_spans for ss in rs.scope_spans for s in ss.spans
    ]
    assert {s.name for s in spans} == {
        "mooring.tool_round import",
        "mooring.tool_round import.child",
    }
    assert {s.trace_id.hex() for s in spans} == {trace_id}
    raw = json.loads(lines[0])["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert raw["traceId"] == trace_id  # hex, as OTLP/JSON requires (not base64)
    assert isinstance(raw["kind"], int)


def test_files_rotate_at_the_cap_and_old_ones_go(tmp_path: Path) -> None:
    exporter = OtlpJsonLinesExporter(tmp_path, max_bytes=2_000, backups=2)
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    for i in range(40):
        emit(provider, f"span-{i}")
    provider.shutdown()
    files = trace_files(tmp_path)
    assert [f.name for f in files] == ["traces.jsonl.2", "traces.jsonl.1", "traces.jsonl"]
    assert all(f.stat().st_size <= 2_000 for f in files)
    names = [
        s["name"]
        for r in read_requests(tmp_path)
        for rs in r["resourceSpans"]
        for ss in rs["scopeSpans"]
        for s in ss["spans"]
    ]
    assert names[-1] == "span-39"
    assert "span-0" not in names  # the oldest were dropped with the oldest file


def test_export_filters_by_trace(tmp_path: Path) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonLinesExporter(tmp_path)))
    wanted = emit(provider, "wanted")
    emit(provider, "other")
    provider.shutdown()
    kept = list(filter_requests(read_requests(tmp_path), trace_ids={wanted}))
    names = {
        s["name"]
        for r in kept
        for rs in r["resourceSpans"]
        for ss in rs["scopeSpans"]
        for s in ss["spans"]
    }
    assert names == {"wanted", "wanted.child"}


class _Collector(BaseHTTPRequestHandler):
    received: ClassVar[list[ExportTraceServiceRequest]] = []
    got_one: ClassVar[threading.Event] = threading.Event()

    def do_POST(self) -> None:  # http.server's naming
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        type(self).received.append(request)
        type(self).got_one.set()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def collector() -> Iterator[str]:
    _Collector.received = []
    _Collector.got_one = threading.Event()
    server = HTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_spans_reach_an_otlp_http_collector(tmp_path: Path, collector: str) -> None:
    provider = setup_tracing(
        TelemetryConfig(folder=tmp_path, file_export=False, otlp_endpoint=collector),
        install=False,
    )
    emit(provider, "mooring.tool_round export", **{"mooring.operation.id": "op-1"})
    provider.shutdown()  # flushes the batch
    assert _Collector.got_one.wait(timeout=30)
    spans = [
        s
        for r in _Collector.received
        for rs in r.resource_spans
        for ss in rs.scope_spans
        for s in ss.spans
    ]
    assert "mooring.tool_round export" in {s.name for s in spans}
    resource = _Collector.received[0].resource_spans[0].resource
    assert {a.key: a.value.string_value for a in resource.attributes}["service.name"] == "mooring"


def written_names(folder: Path) -> list[str]:
    return [
        span["name"]
        for line in (folder / "traces.jsonl").read_text().splitlines()
        for rs in json.loads(line)["resourceSpans"]
        for ss in rs["scopeSpans"]
        for span in ss["spans"]
    ]


@pytest.mark.parametrize("each_poll", [False, True])
def test_status_requests_are_written_only_when_each_poll_is_asked_for(
    tmp_path: Path, each_poll: bool
) -> None:
    config = TelemetryConfig(folder=tmp_path, synchronous=True, each_poll=each_poll)
    provider = setup_tracing(config, install=False)
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("mooring.task.reconcile"):
        for method in ("tasks/get", "tasks/cancel"):
            with tracer.start_as_current_span(
                f"MCP send {method}", attributes={"mcp.method.name": method}
            ):
                pass
    provider.shutdown()

    names = written_names(tmp_path)
    assert "mooring.task.reconcile" in names
    assert "MCP send tasks/cancel" in names
    assert ("MCP send tasks/get" in names) is each_poll


def test_the_sampler_follows_a_parent_as_the_sdks_default_sampler_does() -> None:
    # Ours decides in one step what ParentBased(ALWAYS_ON) decides in three: it must decide
    # the same for every kind of parent a span can have (none, local or remote, sampled or
    # not, with a vendor's trace state), and keep only the per-poll requests out.
    ours, sdk = LifecycleSampler(), ParentBased(ALWAYS_ON)
    state = TraceState([("vendor", "opaque")])
    parents: list[Context | None] = [None, trace.set_span_in_context(INVALID_SPAN)]
    for remote in (False, True):
        for flags in (TraceFlags(TraceFlags.SAMPLED), TraceFlags(TraceFlags.DEFAULT)):
            context = SpanContext(
                0xABC, 0xDEF, is_remote=remote, trace_flags=flags, trace_state=state
            )
            parents.append(trace.set_span_in_context(NonRecordingSpan(context)))
    decisions = []
    for parent in parents:
        mine = ours.should_sample(parent, 0xABC, "mooring.create", attributes={"a": "1"})
        theirs = sdk.should_sample(parent, 0xABC, "mooring.create", attributes={"a": "1"})
        assert mine.decision is theirs.decision
        assert dict(mine.attributes or {}) == dict(theirs.attributes or {})
        assert mine.trace_state == theirs.trace_state
        decisions.append(mine.decision)
    assert Decision.DROP in decisions  # the unsampled parents' children
    assert Decision.RECORD_AND_SAMPLE in decisions

    poll = {"mcp.method.name": "tasks/get"}
    assert ours.should_sample(None, 0xABC, "MCP send", attributes=poll).decision is Decision.DROP
    each = LifecycleSampler(each_poll=True).should_sample(None, 0xABC, "MCP send", attributes=poll)
    assert each.decision is Decision.RECORD_AND_SAMPLE
