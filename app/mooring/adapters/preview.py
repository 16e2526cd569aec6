"""What a call would touch, where the arguments let us tell: shown with the approval question.

Only local facts the user may not know offhand (a file's size and row count); nothing is sent
anywhere and nothing is logged.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

MAX_COUNTED_BYTES = 512 * 1024 * 1024


def _count_lines(path: Path) -> int:
    count = 0
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            count += chunk.count(b"\n")
    return count


def preview_arguments(arguments: dict[str, Any]) -> list[str]:
    """One line per argument that names an existing local file: its size and line count."""
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
            rows = _count_lines(path)
            text += f", {rows:,} lines"
            if path.suffix.lower() in (".csv", ".tsv") and rows:
                text += f" ≈ {rows - 1:,} data rows"
        lines.append(text + ")")
    return lines
