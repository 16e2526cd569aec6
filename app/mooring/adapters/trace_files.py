"""Reading the local trace files back (``mooring traces export``): stdlib only, so the commands
that read traces do not load the OpenTelemetry SDK."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

log = logging.getLogger("mooring.telemetry")

TRACE_FILE = "traces.jsonl"


def trace_files(folder: Path) -> list[Path]:
    """The trace files, oldest first."""
    rotated = sorted(folder.glob(f"{TRACE_FILE}.*"), key=lambda p: int(p.suffix[1:]), reverse=True)
    current = folder / TRACE_FILE
    return [*rotated, *([current] if current.exists() else [])]


def read_requests(folder: Path) -> Iterator[dict[str, Any]]:
    """Every exported ``ExportTraceServiceRequest``, oldest first; damaged lines are skipped."""
    for path in trace_files(folder):
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                try:
                    yield json.loads(line)
                except ValueError:
                    log.warning("skipped a damaged line in %s", path.name)


def filter_requests(
    requests: Iterable[dict[str, Any]],
    *,
    trace_ids: set[str] | None = None,
    since: datetime | None = None,
) -> Iterator[dict[str, Any]]:
    """Keep only spans of ``trace_ids`` that started at or after ``since``; drop empty parts."""
    since_ns = int(since.timestamp() * 1e9) if since is not None else None
    for request in requests:
        kept_resources = []
        for resource_spans in request.get("resourceSpans", []):
            kept_scopes = []
            for scope_spans in resource_spans.get("scopeSpans", []):
                spans = [
                    s
                    for s in scope_spans.get("spans", [])
                    if (trace_ids is None or s.get("traceId") in trace_ids)
                    and (since_ns is None or int(s.get("startTimeUnixNano", 0)) >= since_ns)
                ]
                if spans:
                    kept_scopes.append({**scope_spans, "spans": spans})
            if kept_scopes:
                kept_resources.append({**resource_spans, "scopeSpans": kept_scopes})
        if kept_resources:
            yield {"resourceSpans": kept_resources}


def export_to(folder: Path, target: Path, *, trace_ids: set[str] | None = None) -> int:
    """Write the stored traces (optionally only ``trace_ids``) to ``target``; the span count."""
    spans = 0
    with target.open("w", encoding="utf-8") as out:
        for request in filter_requests(read_requests(folder), trace_ids=trace_ids):
            spans += sum(
                len(scope.get("spans", []))
                for resource in request["resourceSpans"]
                for scope in resource["scopeSpans"]
            )
            out.write(json.dumps(request, separators=(",", ":")) + "\n")
    return spans
