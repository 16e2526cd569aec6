"""``mooring traces export``: the task-lifecycle traces as OTLP/JSON, to attach to a bug report."""

from __future__ import annotations

import argparse
import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

from mooring.adapters.telemetry import filter_requests, read_requests
from mooring.cli.context import CliContext
from mooring.cli.exit_codes import ExitCode
from mooring.core.errors import KnownError, NotFound
from mooring.core.ids import short_id


def _since(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise KnownError(f"--since {text!r} is not a date (use 2026-11-29 or ISO 8601).") from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


async def export(ctx: CliContext, args: argparse.Namespace, traces_dir: Path) -> ExitCode:
    """Write matching spans (one OTLP/JSON request per line) to ``-o FILE`` or stdout."""
    trace_ids: set[str] | None = None
    if args.task:
        record = await ctx.ledger.find(args.task)
        if record is None:
            raise NotFound("task", args.task)
        if not record.trace_context:
            raise KnownError(f"Task {short_id(record.id)} has no trace (tracing was off).")
        trace_ids = {record.trace_context.split("-")[1]}
    lines = [
        json.dumps(request, separators=(",", ":"))
        for request in filter_requests(
            read_requests(traces_dir), trace_ids=trace_ids, since=_since(args.since)
        )
    ]
    spans = sum(
        len(s["spans"])
        for line in lines
        for r in json.loads(line)["resourceSpans"]
        for s in r["scopeSpans"]
    )
    text = "".join(line + "\n" for line in lines)
    if args.output in (None, "-"):
        ctx.out.write(text)
    else:
        await asyncio.to_thread(Path(args.output).write_text, text, encoding="utf-8")
        ctx.warn(f"Wrote {spans} span(s) to {args.output}.")
    return ExitCode.OK
