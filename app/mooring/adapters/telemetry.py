"""OpenTelemetry, configured once: a tracer provider, a local OTLP JSON file, optional OTLP/HTTP.

Everything else in Mooring uses only the OpenTelemetry *API*. The MCP SDK emits its own
``MCP send …`` client spans through the same global provider; ours parent them.

The local file is the OpenTelemetry file-exporter format: one ``ExportTraceServiceRequest``
in OTLP/JSON per line (hex trace and span ids, lowerCamelCase keys, integer enums), readable by
the collector's ``otlpjsonfile`` receiver. Files rotate at a size cap and old ones are dropped.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult
from opentelemetry.trace import Link, SpanKind, TraceState
from opentelemetry.util.types import Attributes

from mooring import __version__
from mooring.adapters.otlp_json import otlp_json
from mooring.adapters.span_batches import PromptSpanProcessor
from mooring.adapters.trace_files import (
    TRACE_FILE,
    export_to,
    filter_requests,
    read_requests,
    trace_files,
)

__all__ = [
    "TRACE_FILE",
    "LifecycleSampler",
    "OtlpJsonLinesExporter",
    "TelemetryConfig",
    "export_to",
    "filter_requests",
    "otlp_json",
    "read_requests",
    "setup_tracing",
    "trace_files",
]

log = logging.getLogger("mooring.telemetry")


class OtlpJsonLinesExporter(SpanExporter):
    """Appends each batch as one OTLP/JSON line; rotates at ``max_bytes``, keeps ``backups``."""

    def __init__(self, folder: Path, *, max_bytes: int = 10 * 1024 * 1024, backups: int = 5):
        self.folder = folder
        self.path = folder / TRACE_FILE
        self.max_bytes = max_bytes
        self.backups = backups
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not spans:
            return SpanExportResult.SUCCESS
        line = json.dumps(otlp_json(spans), separators=(",", ":")) + "\n"
        try:
            with self._lock:
                self.folder.mkdir(parents=True, exist_ok=True)
                self._rotate_if_needed(len(line))
                with self.path.open("a", encoding="utf-8") as fh:
                    fh.write(line)
        except OSError as exc:
            log.warning("could not write traces to %s: %s", self.path, exc.strerror)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def _rotate_if_needed(self, incoming: int) -> None:
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return
        if size + incoming <= self.max_bytes:
            return
        oldest = self.path.with_name(f"{TRACE_FILE}.{self.backups}")
        oldest.unlink(missing_ok=True)
        for n in range(self.backups - 1, 0, -1):
            older = self.path.with_name(f"{TRACE_FILE}.{n}")
            if older.exists():
                older.replace(self.path.with_name(f"{TRACE_FILE}.{n + 1}"))
        self.path.replace(self.path.with_name(f"{TRACE_FILE}.1"))

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


PER_POLL_METHODS = frozenset({"tasks/get"})
"""Requests sent once per poll of every watched task: the MCP SDK's client span for each would
fill the rotating files within minutes at a thousand tasks, pushing out the lifecycle spans the
files exist for. Their count and errors are aggregated on ``mooring.task.run`` instead."""


class LifecycleSampler(Sampler):
    """Records every span except the per-poll request spans (unless ``each_poll``); everything
    else follows its parent, as the SDK's default sampler (``ParentBased(ALWAYS_ON)``) does:
    a root span or a sampled parent's child is recorded, an unsampled parent's child is not,
    and the parent's trace state is kept. Decided here in one step, not through the SDK's
    three samplers (some 10 µs a span on the test machine, every span of every tool round)."""

    def __init__(self, *, each_poll: bool = False) -> None:
        self._each_poll = each_poll

    def should_sample(
        self,
        parent_context: otel_context.Context | None,
        trace_id: int,
        name: str,
        kind: SpanKind | None = None,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        trace_state: TraceState | None = None,
    ) -> SamplingResult:
        if (
            not self._each_poll
            and attributes is not None
            and attributes.get("mcp.method.name") in PER_POLL_METHODS
        ):
            return SamplingResult(Decision.DROP)
        parent = trace.get_current_span(parent_context).get_span_context()
        if parent is None or not parent.is_valid:
            return SamplingResult(Decision.RECORD_AND_SAMPLE, attributes, None)
        if not parent.trace_flags.sampled:
            return SamplingResult(Decision.DROP, None, parent.trace_state)
        return SamplingResult(Decision.RECORD_AND_SAMPLE, attributes, parent.trace_state)

    def get_description(self) -> str:
        return f"LifecycleSampler(each_poll={self._each_poll})"


@dataclass(frozen=True, slots=True)
class TelemetryConfig:
    """What to export where (from the declared settings)."""

    folder: Path
    file_export: bool = True
    otlp_endpoint: str = ""
    synchronous: bool = False
    """Export spans as they end, on the caller's thread (CLI and tests), instead of in batches
    from a background thread; inside a running event loop, those ending within a quarter of a
    second go in one write (:class:`~mooring.adapters.span_batches.PromptSpanProcessor`)."""
    each_poll: bool = False
    """Also record a span per status request (``tasks/get``); off, polls are only counted."""


def setup_tracing(config: TelemetryConfig, *, install: bool = True) -> TracerProvider:
    """Create the one tracer provider, install it globally (unless ``install`` is false), and
    return it; shut it down at exit to flush."""
    provider = TracerProvider(
        sampler=LifecycleSampler(each_poll=config.each_poll),
        resource=Resource.create({"service.name": "mooring", "service.version": __version__}),
    )
    if config.file_export:
        exporter = OtlpJsonLinesExporter(config.folder)
        provider.add_span_processor(
            PromptSpanProcessor(exporter) if config.synchronous else BatchSpanProcessor(exporter)
        )
    if config.otlp_endpoint:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(
            BatchSpanProcessor(OTLPSpanExporter(endpoint=config.otlp_endpoint))
        )
    if install:
        trace.set_tracer_provider(provider)
    return provider
