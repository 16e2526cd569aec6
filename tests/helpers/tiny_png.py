"""A small valid PNG made here (no image file in the repository): what an attached image is in
tests."""

from __future__ import annotations

import struct
import zlib


def tiny_png(width: int = 4, height: int = 3) -> bytes:
    """A ``width`` by ``height`` red RGB PNG that QImage (and any decoder) reads."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )
