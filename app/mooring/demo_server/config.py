"""Command-line flags and environment switches of the demo server, declared once."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

ENV_PREFIX = "MOORING_DEMO_"

MalformedMode = Literal["unknown-status", "missing-status"]


@dataclass(frozen=True)
class Faults:
    """Fault switches for tests; every one is off by default.

    Attributes:
        drop_create_reply: drop the reply of this many task-creating ``tools/call`` requests
            (after the task is durably created). HTTP: the connection is aborted mid-response.
            stdio: the server process exits, which is the only way to drop a pipe.
        forget_after_ms: expunge every task this long after its creation, whatever its TTL.
        slow_get_ms: delay every ``tasks/get`` answer by this long.
        malformed_status: make ``tasks/get`` answer a malformed task: ``unknown-status``
            (a status outside the spec's enum) or ``missing-status`` (no status at all).
        token_expires_after: on HTTP, answer 401 ``invalid_token`` to a bearer token once it
            has been used for this many requests (a token expiring mid-task).
        db_write_fail_at_checkpoint: make the import's Nth checkpoint write fail (a database
            write failure), which ends the task ``failed``.
        no_task_notifications: send no ``notifications/tasks`` (a server without the optional
            feature: a listen request for task ids is acknowledged with none), so clients
            learn everything by polling.
    """

    drop_create_reply: int = 0
    forget_after_ms: int | None = None
    slow_get_ms: int = 0
    malformed_status: MalformedMode | None = None
    token_expires_after: int | None = None
    db_write_fail_at_checkpoint: int | None = None
    no_task_notifications: bool = False


@dataclass(frozen=True)
class ServerConfig:
    """Everything the server's behaviour depends on, fixed at start-up."""

    store: Path
    http: bool = False
    host: str = "127.0.0.1"
    port: int = 8765
    poll_interval_ms: int = 1000
    ttl_ms: int | None = 3_600_000
    lease_ms: int = 10_000
    rows_per_checkpoint: int = 2000
    checkpoint_delay_ms: int = 0
    samples_dir: Path | None = None
    conformance_fixtures: bool = False
    request_log: Path | None = None
    log_level: str = "WARNING"
    oauth_issuer: str | None = None
    """HTTP only: require bearer tokens that this OAuth issuer's introspection endpoint
    (``<issuer>/introspect``) reports active for this server (``None``: no authentication)."""
    faults: Faults = field(default_factory=Faults)

    @property
    def heartbeat_s(self) -> float:
        """How often a running task renews its lease and looks for cancel requests and answers."""
        return max(0.02, min(self.lease_ms / 3, max(self.poll_interval_ms, 50)) / 1000)

    @property
    def scan_s(self) -> float:
        """How often an instance looks for abandoned tasks to claim and expired tasks to purge."""
        return max(0.05, min(self.lease_ms / 2, 1000) / 1000)


def default_store_path(env: Mapping[str, str]) -> Path:
    """``$XDG_DATA_HOME/mooring/demo-server.sqlite3`` (or under ``~/.local/share``)."""
    data_home = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "mooring" / "demo-server.sqlite3"


def default_samples_dir() -> Path | None:
    """The bundled sample CSVs: ``sample_data`` inside this package (shipped in the wheel; in a
    source checkout a link to ``resources/samples``), else the checkout's ``resources/samples``."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "sample_data", here.parents[2] / "resources" / "samples"):
        if candidate.is_dir():
            return candidate.resolve()
    return None


def _env_default(env: Mapping[str, str], name: str) -> str | None:
    return env.get(ENV_PREFIX + name.upper().replace("-", "_"))


def _ttl(value: str) -> int | None:
    if value.lower() in {"none", "null", "unlimited"}:
        return None
    ttl = int(value)
    if ttl <= 0:
        raise argparse.ArgumentTypeError("ttl must be a positive number of milliseconds or 'none'")
    return ttl


def _positive(value: str) -> int:
    number = int(value)
    if number <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}")
    return number


def _non_negative(value: str) -> int:
    number = int(value)
    if number < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {value!r}")
    return number


def build_parser(env: Mapping[str, str]) -> argparse.ArgumentParser:
    """The argument parser; every flag also reads ``MOORING_DEMO_<FLAG>`` from ``env``."""

    def default(name: str, fallback: str | None = None) -> str | None:
        value = _env_default(env, name)
        return value if value is not None else fallback

    def flag(name: str) -> bool:
        return (default(name) or "").lower() in {"1", "true", "yes", "on"}

    parser = argparse.ArgumentParser(
        prog="python -m mooring.demo_server",
        description="Mooring's bundled MCP server: a supplier CSV import run as a durable Task. "
        "Every flag can also be set as MOORING_DEMO_<FLAG> (e.g. MOORING_DEMO_TTL_MS).",
    )
    parser.add_argument(
        "--http",
        action="store_true",
        default=flag("http"),
        help="serve Streamable HTTP instead of stdio",
    )
    parser.add_argument(
        "--host", default=default("host", "127.0.0.1"), help="HTTP bind address (default 127.0.0.1)"
    )
    parser.add_argument(
        "--port",
        type=_non_negative,
        default=default("port", "8765"),
        help="HTTP port; 0 picks a free one. The URL is printed on stdout once listening.",
    )
    parser.add_argument(
        "--store", type=Path, default=default("store"), help="the server's SQLite file"
    )
    parser.add_argument(
        "--poll-interval-ms", type=_positive, default=default("poll-interval-ms", "1000")
    )
    parser.add_argument(
        "--ttl-ms", type=_ttl, default=default("ttl-ms", "3600000"), help="task TTL or 'none'"
    )
    parser.add_argument(
        "--lease-ms",
        type=_positive,
        default=default("lease-ms", "10000"),
        help="how long a running task stays claimed by its instance without a heartbeat",
    )
    parser.add_argument(
        "--rows-per-checkpoint", type=_positive, default=default("rows-per-checkpoint", "2000")
    )
    parser.add_argument(
        "--checkpoint-delay-ms",
        type=_non_negative,
        default=default("checkpoint-delay-ms", "0"),
        help="pause after each import/export checkpoint (lets tests cancel or kill mid-run)",
    )
    parser.add_argument("--samples-dir", type=Path, default=default("samples-dir"))
    parser.add_argument(
        "--conformance-fixtures",
        action="store_true",
        default=flag("conformance-fixtures"),
        help="also expose the MCP conformance suite's task fixture tools",
    )
    parser.add_argument(
        "--request-log",
        type=Path,
        default=default("request-log"),
        help="append one JSON line per received JSON-RPC request to this file",
    )
    parser.add_argument("--log-level", default=default("log-level", "WARNING"))
    parser.add_argument(
        "--oauth-issuer",
        default=default("oauth-issuer"),
        metavar="URL",
        help="HTTP only: protect /mcp with OAuth bearer tokens issued by this authorization "
        "server, verified at its introspection endpoint (URL/introspect); off by default",
    )
    faults = parser.add_argument_group("fault switches (tests only; all off by default)")
    faults.add_argument(
        "--fault-drop-create-reply",
        type=_non_negative,
        default=default("fault-drop-create-reply", "0"),
    )
    faults.add_argument(
        "--fault-forget-after-ms", type=_non_negative, default=default("fault-forget-after-ms")
    )
    faults.add_argument(
        "--fault-slow-get-ms", type=_non_negative, default=default("fault-slow-get-ms", "0")
    )
    faults.add_argument(
        "--fault-malformed-status",
        choices=["unknown-status", "missing-status"],
        default=default("fault-malformed-status"),
    )
    faults.add_argument(
        "--fault-token-expires-after", type=_positive, default=default("fault-token-expires-after")
    )
    faults.add_argument(
        "--fault-no-task-notifications",
        action="store_true",
        default=flag("fault-no-task-notifications"),
    )
    faults.add_argument(
        "--fault-db-write-fail-at-checkpoint",
        type=_positive,
        default=default("fault-db-write-fail-at-checkpoint"),
    )
    return parser


def parse_config(
    argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None
) -> ServerConfig:
    """Build the configuration from ``argv`` (flags win) and ``env``."""
    env = os.environ if env is None else env
    parser = build_parser(env)
    args = parser.parse_args(argv)
    if args.oauth_issuer and not args.http:
        parser.error("--oauth-issuer needs --http (stdio has no bearer tokens)")
    return ServerConfig(
        store=args.store if args.store is not None else default_store_path(env),
        http=bool(args.http),
        host=str(args.host),
        port=int(args.port),
        poll_interval_ms=int(args.poll_interval_ms),
        ttl_ms=args.ttl_ms,
        lease_ms=int(args.lease_ms),
        rows_per_checkpoint=int(args.rows_per_checkpoint),
        checkpoint_delay_ms=int(args.checkpoint_delay_ms),
        samples_dir=args.samples_dir if args.samples_dir is not None else default_samples_dir(),
        conformance_fixtures=bool(args.conformance_fixtures),
        request_log=args.request_log,
        log_level=str(args.log_level).upper(),
        oauth_issuer=str(args.oauth_issuer) if args.oauth_issuer else None,
        faults=Faults(
            drop_create_reply=int(args.fault_drop_create_reply),
            forget_after_ms=None
            if args.fault_forget_after_ms is None
            else int(args.fault_forget_after_ms),
            slow_get_ms=int(args.fault_slow_get_ms),
            no_task_notifications=bool(args.fault_no_task_notifications),
            malformed_status=args.fault_malformed_status,
            token_expires_after=(
                None
                if args.fault_token_expires_after is None
                else int(args.fault_token_expires_after)
            ),
            db_write_fail_at_checkpoint=(
                None
                if args.fault_db_write_fail_at_checkpoint is None
                else int(args.fault_db_write_fail_at_checkpoint)
            ),
        ),
    )
