"""What each process of Mooring does first (paths, logging, settings), and what its runners
share: the tracer provider, the garbage collector's settings, the command that starts the
engine."""

from __future__ import annotations

import argparse
import gc
import logging
from typing import TYPE_CHECKING

from mooring import __version__
from mooring.adapters import launcher
from mooring.settings.paths import Paths, resolve_paths
from mooring.settings.store import Settings, load_settings

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

    from mooring.adapters.lazy_tracing import LazyTracerProvider

log = logging.getLogger("mooring.bootstrap")
"""The composition root's logger (one name for every module of the package)."""


def start_up(args: argparse.Namespace) -> tuple[Paths, Settings]:
    """The data folder's paths (checked), logging to its log file, and its settings."""
    from mooring.adapters.logging import setup_logging

    paths = resolve_paths(args.data_dir)
    paths.check()
    setup_logging(paths.log_file, json_lines=args.log_json)
    log.info("mooring %s starting; data folder %s", __version__, paths.data_dir)
    settings = load_settings(paths.settings_file)
    return paths, settings


def agent_command(paths: Paths) -> list[str]:
    """How a face starts the engine of this data folder (in the background)."""
    return launcher.mooring_command("agent", "run", "--data-dir", str(paths.data_dir))


def tracing(paths: Paths, settings: Settings, *, synchronous: bool) -> LazyTracerProvider:
    """This process's tracer provider, installed; the SDK, its exporters and protobuf load
    only when the first span starts."""
    from mooring.adapters.lazy_tracing import LazyTracerProvider

    def build() -> TracerProvider:
        from mooring.adapters.telemetry import TelemetryConfig, setup_tracing

        config = TelemetryConfig(
            folder=paths.traces_dir,
            file_export=bool(settings.get("telemetry.file_export")),
            otlp_endpoint=str(settings.get("telemetry.otlp_endpoint")),
            synchronous=synchronous,
            each_poll=bool(settings.get("telemetry.trace_each_poll")),
        )
        return setup_tracing(config, install=False)

    return LazyTracerProvider.install(build)


YOUNG_OBJECTS_PER_COLLECTION = 5_000
"""The garbage collector's first threshold (CPython's default: 700). Every poll and request
allocates hundreds of objects: at 700, a 1,000-task reconciliation ran ~570 collections
(~0.36 s, 13 % of its CPU); at 5,000, with start-up frozen, ~190 (~0.09 s). Young garbage
waits a little longer."""


def settle_collector(*, young: int = YOUNG_OBJECTS_PER_COLLECTION) -> None:
    """Take what is loaded now (modules, classes, the MCP SDK's models: up to ~200,000
    objects, there for the life of the process) out of the collector's sight, and collect
    young objects less often. A full collection then walks only what was made since: one
    that walked everything took 40-110 ms, a stall in the window. Called after start-up and
    again once the SDK is loaded.

    No collection first: what is garbage by then stays frozen, ~800 objects for a CLI command
    (measured), while a full collection there cost 11-21 ms, a third of the command's start."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(young, middle, old)
