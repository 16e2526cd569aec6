"""Named loggers under ``mooring.*``, a rotating log file, and a JSON mode for end-to-end tests.

Log records never carry secrets or tool arguments: code logs ids, digests and sizes.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
from pathlib import Path

ROOT = "mooring"


class JsonFormatter(logging.Formatter):
    """One JSON object per line (``{"at", "level", "logger", "message"}``)."""

    def format(self, record: logging.LogRecord) -> str:
        payload = {
            "at": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            payload["exception"] = self.formatException(record.exc_info)
        return json.dumps(payload, ensure_ascii=False)


def setup_logging(
    log_file: Path | None, *, level: int = logging.INFO, json_lines: bool = False
) -> logging.Logger:
    """Configure the ``mooring`` logger: a rotating file (5 x 2 MiB), warnings to stderr."""
    root = logging.getLogger(ROOT)
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    root.setLevel(level)
    root.propagate = False
    formatter: logging.Formatter = (
        JsonFormatter()
        if json_lines
        else logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s")
    )
    if log_file is not None:
        try:
            log_file.parent.mkdir(parents=True, exist_ok=True)
            file_handler = logging.handlers.RotatingFileHandler(
                log_file, maxBytes=2 * 1024 * 1024, backupCount=5, encoding="utf-8"
            )
        except OSError:
            pass  # an unwritable log folder must not stop the app; stderr still gets warnings
        else:
            file_handler.setFormatter(formatter)
            root.addHandler(file_handler)
    console = logging.StreamHandler()
    console.setLevel(logging.WARNING)
    console.setFormatter(logging.Formatter("mooring: %(levelname)s: %(message)s"))
    root.addHandler(console)
    return root
