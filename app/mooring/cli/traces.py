"""``mooring traces export``: the task-lifecycle traces as OTLP/JSON, to attach to a bug report."""

from __future__ import annotations

import argparse
import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

from mooring.adapters.trace_files import filter_requests, read_requests
from mooring.cli.context import CliContext
from mooring.cli.exit_codes import ExitCode
from mooring.cli.lookup import find_task
from mooring.core.errors import KnownError
from mooring.core.ids import short_id


def _since(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise KnownError(f"--since {text!r} is not a date (use 2026-11-29 or ISO 8601).") from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _write(target: Path, text: str) -> None:
    """Write the export, turning a wrong ``-o`` into a clear error (nothing half-written)."""
    if target.is_dir():
        raise KnownError(
            f"-o {target} is a folder.",
            hint=f"Name a file in it, e.g. -o {target / 'traces.jsonl'}",
            code="usage",
        )
    if not target.parent.is_dir():
        raise KnownError(
            f"-o {target}: the folder {target.parent} does not exist.",
            hint="Create it first, or name a file in an existing folder.",
            code="usage",
        )
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise KnownError(f"Cannot write {target}: {exc.strerror or exc}.") from exc


async def export(ctx: CliContext, args: argparse.Namespace, traces_dir: Path) -> ExitCode:
    """Write matching spans (one OTLP/JSON request per line) to ``-o FILE`` or stdout."""
    trace_ids: set[str] | None = None
    if args.task:
        record = await find_task(ctx, args.task)
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
        await asyncio.to_thread(_write, Path(args.output), text)
        ctx.warn(f"Wrote {spans} span(s) to {args.output}.")
    return ExitCode.OK
