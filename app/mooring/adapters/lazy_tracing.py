"""A tracer provider that loads the OpenTelemetry SDK when the first span starts.

Installed globally at start-up like the real one, so every tracer (Mooring's and the MCP SDK's
proxies) reaches it; a command that records nothing (``tasks list``) never loads the SDK,
its exporters or protobuf.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from opentelemetry import trace
from opentelemetry.util.types import Attributes

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider


class LazyTracerProvider(trace.TracerProvider):
    """Builds the real provider (with ``build``) on the first ``get_tracer``."""

    def __init__(self, build: Callable[[], SdkTracerProvider]) -> None:
        self._build = build
        self._real: SdkTracerProvider | None = None
        self._lock = threading.Lock()

    @classmethod
    def install(cls, build: Callable[[], SdkTracerProvider]) -> LazyTracerProvider:
        """Make one the global provider and return it."""
        provider = cls(build)
        trace.set_tracer_provider(provider)
        return provider

    @property
    def built(self) -> bool:
        """Whether the SDK provider exists (a span was started)."""
        return self._real is not None

    def _provider(self) -> SdkTracerProvider:
        with self._lock:
            if self._real is None:
                self._real = self._build()
            return self._real

    def get_tracer(
        self,
        instrumenting_module_name: str,
        instrumenting_library_version: str | None = None,
        schema_url: str | None = None,
        attributes: Attributes | None = None,
    ) -> trace.Tracer:
        return self._provider().get_tracer(
            instrumenting_module_name, instrumenting_library_version, schema_url, attributes
        )

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Export what is buffered (nothing to do before the first span)."""
        real = self._real
        return True if real is None else real.force_flush(timeout_millis)

    def shutdown(self) -> None:
        """Flush and stop the real provider, if one was built."""
        real = self._real
        if real is not None:
            real.shutdown()
