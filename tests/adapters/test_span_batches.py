"""The CLI's span export: prompt, the spans that end together written together."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider

from mooring.adapters.span_batches import PromptSpanProcessor
from mooring.adapters.telemetry import OtlpJsonLinesExporter, TelemetryConfig, setup_tracing


def lines_and_names(folder: Path) -> tuple[int, list[str]]:
    path = folder / "traces.jsonl"
    if not path.exists():
        return 0, []
    lines = path.read_text().splitlines()
    names = [
        span["name"]
        for line in lines
        for rs in json.loads(line)["resourceSpans"]
        for ss in rs["scopeSpans"]
        for span in ss["spans"]
    ]
    return len(lines), names


def provider_for(folder: Path, *, window_s: float, most: int = 512) -> TracerProvider:
    provider = TracerProvider()
    exporter = OtlpJsonLinesExporter(folder)
    provider.add_span_processor(PromptSpanProcessor(exporter, window_s=window_s, most=most))
    return provider


def test_spans_ending_together_in_a_loop_are_written_in_one_line_soon(tmp_path: Path) -> None:
    provider = provider_for(tmp_path, window_s=0.05)
    tracer = provider.get_tracer("test")

    async def reconcile_many() -> tuple[int, list[str]]:
        for n in range(100):
            with tracer.start_as_current_span(f"mooring.task.reconcile {n}"):
                pass
        assert lines_and_names(tmp_path) == (0, [])  # held for the window, not written one by one
        for _ in range(200):  # bounded: the window closes within a few loop turns of 50 ms
            await asyncio.sleep(0.05)
            if lines_and_names(tmp_path)[0]:
                break
        return lines_and_names(tmp_path)

    lines, names = asyncio.run(reconcile_many())
    assert lines == 1
    assert names == [f"mooring.task.reconcile {n}" for n in range(100)]
    provider.shutdown()
    assert lines_and_names(tmp_path)[0] == 1  # nothing written twice


def test_what_is_held_when_the_command_ends_is_written_at_shutdown(tmp_path: Path) -> None:
    provider = provider_for(tmp_path, window_s=3600)
    tracer = provider.get_tracer("test")

    async def command() -> None:
        with tracer.start_as_current_span("mooring.task.reconcile"):
            pass

    asyncio.run(command())  # the loop is gone before the window closed
    assert lines_and_names(tmp_path) == (0, [])
    provider.shutdown()
    assert lines_and_names(tmp_path) == (1, ["mooring.task.reconcile"])


def test_outside_an_event_loop_each_span_is_written_as_it_ends(tmp_path: Path) -> None:
    provider = provider_for(tmp_path, window_s=3600)
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("mooring.tool_round"):
        pass
    assert lines_and_names(tmp_path) == (1, ["mooring.tool_round"])


def test_a_full_hold_is_written_without_waiting_for_the_window(tmp_path: Path) -> None:
    provider = provider_for(tmp_path, window_s=3600, most=10)
    tracer = provider.get_tracer("test")

    async def many() -> None:
        for n in range(25):
            with tracer.start_as_current_span(f"span {n}"):
                pass

    asyncio.run(many())
    lines, names = lines_and_names(tmp_path)
    assert (lines, len(names)) == (2, 20)  # two full holds; five wait for shutdown
    provider.shutdown()
    assert len(lines_and_names(tmp_path)[1]) == 25


def test_the_command_line_configuration_writes_a_burst_in_one_line(tmp_path: Path) -> None:
    provider = setup_tracing(TelemetryConfig(folder=tmp_path, synchronous=True), install=False)
    tracer = provider.get_tracer("test")

    async def command() -> None:
        for n in range(3):
            with tracer.start_as_current_span(f"mooring.task.reconcile {n}"):
                pass

    asyncio.run(command())
    provider.shutdown()  # as the command line does on its way out
    lines, names = lines_and_names(tmp_path)
    assert (lines, len(names)) == (1, 3)
