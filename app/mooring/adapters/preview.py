"""What a call would touch, where the arguments let us tell: shown with the approval question.

Only local facts the user may not know offhand (a file's size and row count); nothing is sent
anywhere and nothing is logged. Runs in a worker thread (the broker bounds it with a deadline)
and reads at most :data:`MAX_COUNTED_BYTES` of a file to count its lines.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mooring.core.approval.request import PreviewResult

MAX_COUNTED_BYTES = 64 * 1024 * 1024
"""Larger files show their size only (counting their lines would hold the question up)."""


def _count_lines(path: Path) -> int:
    count = 0
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            count += chunk.count(b"\n")
    return count


def preview_arguments(arguments: dict[str, Any]) -> PreviewResult:
    """One line per argument that names an existing local file: its size and line count.

    A named file that exists but cannot be read makes a refusal: the call would only fail.
    """
    lines: list[str] = []
    for name, value in arguments.items():
        if not isinstance(value, str) or len(value) > 4096 or os.sep not in value:
            continue
        path = Path(value).expanduser()
        try:
            if not path.is_file():
                continue
            size = path.stat().st_size
        except OSError:
            continue
        text = f"{name}: {path} ({size:,} bytes"
        if size <= MAX_COUNTED_BYTES:
            try:
                rows = _count_lines(path)
            except OSError as exc:
                reason = exc.strerror or type(exc).__name__
                return PreviewResult(
                    lines,
                    refusal=f"Mooring cannot read {path} ({reason}); the call was not sent.",
                )
            text += f", {rows:,} lines"
            if path.suffix.lower() in (".csv", ".tsv") and rows:
                text += f" ≈ {rows - 1:,} data rows"
        lines.append(text + ")")
    return PreviewResult(lines)
