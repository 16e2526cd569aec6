"""Every setting, declared once: key, type, default and what it does.

The settings file carries a ``version``; :data:`UPGRADES` turns an older file into the current
shape, the way migrations do for the database.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

TYPE_CHECKING = False  # not typing's: the quick listing loads no typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

SETTINGS_VERSION = 2


@dataclass(frozen=True, slots=True)
class Setting:
    """One declared setting."""

    key: str
    type: type
    default: Any
    description: str
    choices: tuple[str, ...] | None = None
    """The only values a text setting may take (``None``: any)."""


SETTINGS: tuple[Setting, ...] = (
    Setting("demo_server.enabled", bool, True, "Configure the bundled demo server on first run."),
    Setting("polling.max_interval_ms", int, 30_000, "Longest wait between status checks."),
    Setting(
        "engine.idle_exit_s",
        int,
        600,
        "The background engine ends after this many seconds with nothing to do: no window "
        "or command connected, no task to follow. Until then it keeps server connections "
        "(and what stateful servers remember) for the next command; with no window open, "
        "a connection nothing needed for this long (no call, task or question on it) ends.",
    ),
    Setting(
        "mcp.request_timeout_ms",
        int,
        30_000,
        "A status, answer or cancel request without a reply by then counts as failed.",
    ),
    Setting(
        "mcp.call_timeout_ms",
        int,
        3_600_000,
        "Longest a plain tools/call may run in all; then it is stopped (outcome unknown).",
    ),
    Setting(
        "mcp.call_idle_timeout_ms",
        int,
        120_000,
        "A plain tools/call with no reply and no progress for this long is stopped.",
    ),
    Setting(
        "mcp.server_call_limits",
        str,
        "",
        'Per-server call limits as JSON: {"alias": {"idle_timeout_ms": N, "max_ms": N}}.',
    ),
    Setting(
        "polling.per_server_concurrency", int, 4, "Status requests in flight per server at most."
    ),
    Setting(
        "polling.covered_interval_ms",
        int,
        300_000,
        "Status checks of a task whose server reports its changes (an open notification"
        " stream) only this often; normal checks resume at once if the stream ends.",
    ),
    # Model providers (issue 12)
    Setting(
        "providers.connect_timeout_ms",
        int,
        10_000,
        "A model endpoint that cannot be reached by then counts as unreachable.",
    ),
    Setting(
        "providers.read_timeout_ms",
        int,
        180_000,
        "A reply with no new piece for this long stopped halfway (local models may load first).",
    ),
    Setting(
        "local_models.idle_stop_s",
        int,
        300,
        "A local model's process (it holds the model in memory) ends after this many seconds "
        "with no reply to make; the next message starts it again (a few seconds).",
    ),
    Setting(
        "local_models.context_tokens",
        int,
        4096,
        "How many tokens of conversation a local model keeps in view (more needs more memory).",
    ),
    Setting(
        "local_models.threads",
        int,
        0,
        "CPU threads a local model uses (0: llama.cpp's choice, about the number of cores).",
    ),
    Setting(
        "approval.max_argument_bytes",
        int,
        256 * 1024,
        "Tool calls with larger arguments are refused before sending.",
    ),
    Setting(
        "notifications.when",
        str,
        "when_inactive",
        "When to notify about background work: always, when_inactive (only while the window "
        "is not active) or never.",
        choices=("always", "when_inactive", "never"),
    ),
    Setting(
        "notifications.show_names",
        bool,
        False,
        "Name the server and tool in notifications (never arguments, results, status "
        "messages, file names or task ids).",
    ),
    Setting(
        "notifications.asked",
        bool,
        False,
        "Whether the window already asked if Mooring may notify you (it asks once).",
    ),
    Setting(
        "notifications.muted_conversations",
        list,
        [],
        "Conversations whose tasks never notify (ids, comma-separated).",
    ),
    Setting(
        "window.close_to_tray",
        bool,
        True,
        "Closing the window keeps Mooring running in the system tray (where the desktop has "
        "one), still following tasks and notifying; Quit ends it.",
    ),
    Setting(
        "window.welcome_shown",
        bool,
        False,
        "Whether the first-run welcome was shown (it shows once).",
    ),
    Setting(
        "window.close_to_tray_explained",
        bool,
        False,
        "Whether the first close into the tray was explained.",
    ),
    Setting(
        "chat.system_prompt",
        str,
        "",
        "Your instructions to the model in conversations that have none of their own "
        "(sent after Mooring's guidance on tools, tasks and approvals).",
    ),
    Setting(
        "chat.continue_automatically",
        bool,
        False,
        "New conversations start a model turn when one of their tasks ends.",
    ),
    Setting("telemetry.file_export", bool, True, "Write traces to OTLP JSON files locally."),
    Setting("telemetry.otlp_endpoint", str, "", "Also send traces to this OTLP/HTTP endpoint."),
    Setting(
        "telemetry.capture_content",
        bool,
        False,
        "Put tool arguments and results in traces (off: sizes and digests only).",
    ),
    Setting(
        "telemetry.trace_each_poll",
        bool,
        False,
        "Record a span for every status request (off: polls are counted on the task's run span).",
    ),
)

BY_KEY: dict[str, Setting] = {s.key: s for s in SETTINGS}


def _drop_model_settings(values: dict[str, Any]) -> dict[str, Any]:
    """Version 1 → 2: ``model.*`` was never read; model providers are configured with
    ``mooring providers`` instead."""
    return {k: v for k, v in values.items() if not k.startswith("model.")}


def _v1_notifications(values: dict[str, Any]) -> dict[str, Any]:
    """1 → 2: ``notifications.enabled`` became ``notifications.when``; ``show_details`` (which
    promised status text) became ``show_names`` (server and tool names only)."""
    upgraded = dict(values)
    if upgraded.pop("notifications.enabled", True) is False:
        upgraded["notifications.when"] = "never"
    if "notifications.show_details" in upgraded:
        upgraded["notifications.show_names"] = upgraded.pop("notifications.show_details")
    return upgraded


def _v1_to_v2(values: dict[str, Any]) -> dict[str, Any]:
    """1 → 2: the notification settings got their real meaning, and ``model.*`` went."""
    return _drop_model_settings(_v1_notifications(values))


UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2}
"""``UPGRADES[n]`` turns version ``n`` values into version ``n + 1`` values."""
