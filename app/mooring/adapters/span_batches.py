"""Span export for one process's own commands: prompt, but the spans ending together in one write.

The CLI wrote each span to the trace file the moment it ended: one encode, one open and one
append per ``mooring.task.reconcile`` span, a thousand of them in one ``mooring reconcile``,
all on the event loop's thread. :class:`PromptSpanProcessor` keeps that promise up to a short
window: inside a running event loop the spans that end within ``window_s`` of the first are
written together when it closes; outside one (or when ``most`` are held) at once. Shutting the
provider down writes what is held, so a command's spans are on disk when it exits.
"""

from __future__ import annotations

import asyncio
import logging
import threading

from opentelemetry.context import (
    _SUPPRESS_INSTRUMENTATION_KEY,
    Context,
    attach,
    detach,
    set_value,
)
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter

log = logging.getLogger("mooring.telemetry")


class PromptSpanProcessor(SpanProcessor):
    """Exports ended spans within ``window_s`` (at once outside an event loop), those ending
    close together in one call to the exporter."""

    def __init__(self, exporter: SpanExporter, *, window_s: float = 0.25, most: int = 512):
        self.exporter = exporter
        self._window_s = window_s
        self._most = most
        self._held: list[ReadableSpan] = []
        self._lock = threading.Lock()
        self._timer: tuple[asyncio.AbstractEventLoop, asyncio.TimerHandle] | None = None
        self._shutdown = False

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        if not (span.context and span.context.trace_flags.sampled) or self._shutdown:
            return
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        with self._lock:
            self._held.append(span)
            now = loop is None or len(self._held) >= self._most
            if not now and loop is not None and (self._timer is None or self._timer[0] is not loop):
                self._timer = (loop, loop.call_later(self._window_s, self._write))
        if now:
            self._write()

    def _write(self) -> None:
        with self._lock:
            spans, self._held = self._held, []
            timer, self._timer = self._timer, None
        if timer is not None:
            timer[1].cancel()  # no-op when it is the timer that called us
        if not spans:
            return
        token = attach(set_value(_SUPPRESS_INSTRUMENTATION_KEY, True))
        try:
            self.exporter.export(spans)
        except Exception:  # a trace file problem must never break the command
            log.exception("could not export %d span(s)", len(spans))
        finally:
            detach(token)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        self._write()
        return True

    def shutdown(self) -> None:
        self._write()
        self._shutdown = True
        self.exporter.shutdown()
