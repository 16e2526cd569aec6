"""The hand-built OTLP/JSON encoding equals the OpenTelemetry SDK's own, span for span.

The reference is the SDK's protobuf encoder followed by protobuf's JSON mapping, with the ids
turned to hex as OTLP/JSON requires: what the trace files held before. Every kind of span
content Mooring or the MCP SDK produces is covered, and the edge cases of the JSON mapping
(64-bit integers as strings, defaults left out, a false or empty attribute value kept).
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    TraceFlags,
    TraceState,
)
from opentelemetry.trace.status import Status, StatusCode

from mooring.adapters.otlp_json import otlp_json


def reference(spans: list[ReadableSpan]) -> dict[str, Any]:
    """The SDK's encoding, ids in hex."""

    def hex_ids(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                k: base64.b64decode(v).hex()
                if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str)
                else hex_ids(v)
                for k, v in node.items()
            }
        if isinstance(node, list):
            return [hex_ids(v) for v in node]
        return node

    return hex_ids(MessageToDict(encode_spans(spans), use_integers_for_enums=True))  # type: ignore[no-any-return]


def recorded(
    resource: Resource, limits: SpanLimits | None = None
) -> tuple[TracerProvider, InMemorySpanExporter]:
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=resource, span_limits=limits)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return provider, memory


REMOTE = SpanContext(
    trace_id=0x0AF7651916CD43DD8448EB211C80319C,
    span_id=0x00F067AA0BA902B7,
    is_remote=True,
    trace_flags=TraceFlags(TraceFlags.SAMPLED),
    trace_state=TraceState([("vendor", "value"), ("other", "x")]),
)


def test_every_kind_of_span_content_encodes_as_the_sdk_does() -> None:
    provider, memory = recorded(Resource.create({"service.name": "mooring", "n": 3}))
    tracer = provider.get_tracer("mooring", "1.2.3", schema_url="https://example.test/schema")
    attributes: dict[str, Any] = {
        "text": 'a <b> "quoted" ☃',
        "empty": "",
        "yes": True,
        "no": False,
        "zero": 0,
        "negative": -5,
        "big": 2**62,
        "ratio": 0.25,
        "whole": 3.0,
        "nan": math.nan,
        "inf": math.inf,
        "-inf": -math.inf,
        "names": ["a", "b"],
        "numbers": (1, 2, 3),
        "flags": [True, False],
        "floats": [1.5, 2.0],
        "nothing": [],
    }
    with tracer.start_as_current_span("root", attributes=attributes, kind=SpanKind.SERVER) as root:
        root.add_event("started", {"count": 2, "what": "x"})
        root.add_event("bare")
        with tracer.start_as_current_span(
            "child",
            kind=SpanKind.CLIENT,
            links=[Link(REMOTE, {"why": "follows"}), Link(root.get_span_context())],
        ) as child:
            child.set_status(Status(StatusCode.ERROR, "the server said no"))
        with tracer.start_as_current_span("ok", kind=SpanKind.PRODUCER) as ok:
            ok.set_status(Status(StatusCode.OK))
        tracer.start_span("consumer", kind=SpanKind.CONSUMER).end()
    remote_parent = trace.set_span_in_context(NonRecordingSpan(REMOTE))
    token = otel_context.attach(remote_parent)
    try:
        with tracer.start_as_current_span("under a remote parent"):
            pass
    finally:
        otel_context.detach(token)
    provider.get_tracer("mcp").start_span("MCP send tasks/get").end()  # another scope
    provider.get_tracer("").start_span("").end()  # no scope name, no span name

    spans = list(memory.get_finished_spans())
    assert len(spans) == 7
    assert otlp_json(spans) == reference(spans)


def test_dropped_counts_and_spans_of_two_resources_encode_as_the_sdk_does() -> None:
    limits = SpanLimits(max_span_attributes=2, max_events=1, max_links=1, max_event_attributes=1)
    first, first_memory = recorded(Resource.create({"service.name": "one"}), limits)
    second, second_memory = recorded(Resource({}, schema_url="https://example.test/r"))
    links = [Link(REMOTE), Link(REMOTE, {"a": 1})]
    with first.get_tracer("t").start_as_current_span(
        "crowded", attributes={"a": 1, "b": 2, "c": 3}, links=links
    ) as span:
        span.add_event("one", {"x": 1, "y": 2})
        span.add_event("two")
    second.get_tracer("t").start_span("plain").end()

    spans = list(first_memory.get_finished_spans()) + list(second_memory.get_finished_spans())
    encoded = otlp_json(spans)
    assert encoded == reference(spans)
    crowded = encoded["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert crowded["droppedAttributesCount"] == 1  # the case is really there
    assert len(encoded["resourceSpans"]) == 2


def test_the_document_is_valid_json_and_nothing_is_an_empty_request() -> None:
    provider, memory = recorded(Resource.create({}))
    with provider.get_tracer("t").start_as_current_span("s", attributes={"nan": math.nan}):
        pass
    line = json.dumps(otlp_json(list(memory.get_finished_spans())), allow_nan=False)
    assert '"doubleValue":"NaN"' in line.replace(" ", "")
    assert otlp_json([]) == reference([]) == {}


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1])
def test_an_integer_beyond_64_bits_is_left_out_as_the_sdk_leaves_it(value: int) -> None:
    provider, memory = recorded(Resource.create({}))
    provider.get_tracer("t").start_span("s", attributes={"huge": value, "kept": 1}).end()
    spans = list(memory.get_finished_spans())
    encoded = otlp_json(spans)
    assert encoded == reference(spans)
    kept = encoded["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]
    assert [a["key"] for a in kept] == ["kept"]
