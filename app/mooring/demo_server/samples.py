"""Synthetic supplier CSV files: ``python -m mooring.demo_server.samples`` writes the large one.

The small samples are committed in ``resources/samples/``; the 200,000-row file is generated
(deterministically) into ``resources/samples/generated/``, which git ignores.
"""

from __future__ import annotations

import argparse
import csv
import random
from collections.abc import Sequence
from pathlib import Path

from mooring.demo_server.config import default_samples_dir

LARGE_ROWS = 200_000
LARGE_NAME = "suppliers_large.csv"
BAD_ROW_EVERY = 1000
"""Every 1000th row is invalid (a bad country code), so the large import has rejections too."""

_COUNTRIES = ("DE", "FR", "NL", "BE", "AT", "PL", "IT", "ES", "SE", "DK", "CZ", "PT", "IE", "FI")
_WORDS = (
    "Acme",
    "Nordic",
    "Alpine",
    "Harbor",
    "Summit",
    "Vertex",
    "Lumen",
    "Orbit",
    "Cedar",
    "Atlas",
)
_FORMS = ("GmbH", "SARL", "B.V.", "AB", "Ltd", "S.p.A.", "sp. z o.o.", "A/S", "s.r.o.")


def write_large(path: Path, rows: int = LARGE_ROWS, seed: int = 2663) -> Path:
    """Write a large, clean-ish supplier file (``supplier_id`` identifier) with ``rows`` rows."""
    rng = random.Random(seed)  # noqa: S311 - synthetic data, not security
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["supplier_id", "name", "country", "email", "phone"])
        for number in range(1, rows + 1):
            name = f"{rng.choice(_WORDS)} {rng.choice(_WORDS)} {rng.choice(_FORMS)}"
            country = "XX1" if number % BAD_ROW_EVERY == 0 else rng.choice(_COUNTRIES)
            email = f"orders{number}@supplier{number % 977}.example"
            phone = f"+49 30 {rng.randrange(1_000_000, 9_999_999)}"
            writer.writerow([f"SUP-{number:07d}", name, country, email, phone])
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """Generate the large sample file."""
    samples = default_samples_dir() or Path("resources/samples")
    parser = argparse.ArgumentParser(
        prog="python -m mooring.demo_server.samples", description=__doc__
    )
    parser.add_argument("--rows", type=int, default=LARGE_ROWS)
    parser.add_argument("--out", type=Path, default=samples / "generated" / LARGE_NAME)
    args = parser.parse_args(argv)
    path = write_large(args.out, args.rows)
    print(f"wrote {args.rows:,} rows to {path}")  # noqa: T201 - a command-line tool reports its output
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
