"""Run every benchmark: ``python -m bench`` (``make bench``)."""

from __future__ import annotations

from bench import (
    bench_chat,
    bench_ledger,
    bench_notify,
    bench_providers,
    bench_scheduler,
    bench_tracing,
    bench_transcript,
)


def main() -> None:
    """Run the benchmarks in turn."""
    bench_ledger.main()
    bench_tracing.main()
    bench_scheduler.main()
    bench_providers.main()
    bench_chat.main()
    bench_notify.main()
    bench_transcript.main()


if __name__ == "__main__":
    main()
