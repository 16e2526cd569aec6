"""Conversations worth looking at: a reply with a code block, regenerated once (two versions);
a message with a text file and an image attached.

Used by the AT-SPI check of the chat controls and by ``make screenshots``; ``run`` runs one
``mooring`` command in the data folder and returns its standard output (failing if it fails).
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

from tests.helpers.model_endpoints import ModelEndpoint, Text

FIRST = (
    "Here is one way to add them up:\n\n"
    "```python\n"
    "def total(rows):\n"
    '    """The sum of every row\'s amount."""\n'
    "    return sum(row.amount for row in rows)\n"
    "```\n\n"
    "It reads each row once."
)
SECOND = (
    "A shorter way, with a generator expression:\n\n"
    "```python\n"
    "total = sum(row.amount for row in rows)\n"
    'print(f"{total:.2f} EUR")\n'
    "```\n\n"
    "Both give the same figure; the first is easier to test."
)
QUESTION = "How do I add up the amounts of my supplier rows in Python?"


def seed_versions(run: Callable[..., str], endpoint: ModelEndpoint) -> str:
    """Ask, then regenerate the reply: the conversation's id."""
    endpoint.script(Text(FIRST, chunk=40), Text(SECOND, chunk=40))
    asked = json.loads(run("chat", "--json", QUESTION))
    conversation_id = str(asked["conversation_id"])
    run("conversations", "regenerate", conversation_id)
    return conversation_id


SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"


def chart_png(width: int = 160, height: int = 100) -> bytes:
    """A small bar chart as a PNG made here (five blue bars on white)."""
    bars = (0.35, 0.6, 0.45, 0.9, 0.7)
    slot = width // len(bars)
    rows = []
    for y in range(height):
        row = bytearray(b"\x00")
        for x in range(width):
            bar, inside = divmod(x, slot)
            tall = bar < len(bars) and 4 <= inside < slot - 4 and y >= height * (1 - bars[bar])
            row += b"\x2f\x6f\xc0" if tall else b"\xff\xff\xff"
        rows.append(bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"".join(rows)))
        + chunk(b"IEND", b"")
    )


def seed_attachments(run: Callable[..., str], endpoint: ModelEndpoint, folder: Path) -> str:
    """A message with a CSV file and a chart attached, sent to a model that reads images (a
    provider on the scripted endpoint named as a vision model): the conversation's id."""
    chart = folder / "suppliers-by-city.png"
    chart.write_bytes(chart_png())
    run(
        "providers", "add", "vision", "--kind", "openai",
        "--base-url", endpoint.openai_url, "--model", "gpt-4o-mini",
    )  # fmt: skip
    endpoint.script(
        Text(
            "The chart has five cities; the fourth, with the tallest bar, has the most "
            "suppliers. The CSV lists the suppliers themselves, one per row.",
            chunk=40,
        )
    )
    files = ["--file", str(SAMPLES / "suppliers_clean.csv"), "--file", str(chart)]
    asked = run("chat", "--json", "--provider", "vision", *files, "Which city has the most?")
    return str(json.loads(asked)["conversation_id"])
