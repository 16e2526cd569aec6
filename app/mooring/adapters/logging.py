"""Named loggers under ``mooring.*``, a rotating log file, and a JSON mode for end-to-end tests.

Log records never carry secrets or tool arguments: code logs ids, digests and sizes.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from mooring.core.text import neutralize

ROOT = "mooring"
_LIBRARIES_MARK = "_mooring_libraries"


class _ConsoleFormatter(logging.Formatter):
    """One neutralised line per record: no traceback, no terminal control from quoted text."""

    def format(self, record: logging.LogRecord) -> str:
        return neutralize(f"mooring: {record.levelname}: {record.getMessage()}", multiline=False)


class _OncePerProcess(logging.Filter):
    """Lets each distinct console message through once (a retried connection says it once)."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: set[tuple[str, str]] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, record.getMessage())
        if key in self._seen:
            return False
        self._seen.add(key)
        return True


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
    """Configure the ``mooring`` logger: a rotating file (5 x 2 MiB; none when ``log_file`` is
    None), warnings to stderr.

    Libraries' own warnings and errors (the MCP SDK's tracebacks, httpx) go to the log file
    only, never to the terminal: what the user must know, Mooring says itself, in one line.
    """
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
    file_handler: logging.Handler | None = None
    if log_file is not None:
        from logging.handlers import RotatingFileHandler  # (sockets, pickle): only for a file

        try:
            log_file.parent.mkdir(parents=True, exist_ok=True)
            file_handler = RotatingFileHandler(
                log_file, maxBytes=2 * 1024 * 1024, backupCount=5, encoding="utf-8"
            )
        except OSError:
            pass  # an unwritable log folder must not stop the app; stderr still gets warnings
        else:
            file_handler.setFormatter(formatter)
            root.addHandler(file_handler)
    console = logging.StreamHandler()
    console.setLevel(logging.WARNING)
    console.setFormatter(_ConsoleFormatter())
    console.addFilter(_OncePerProcess())
    root.addHandler(console)
    _route_libraries(file_handler)
    return root


def _route_libraries(file_handler: logging.Handler | None) -> None:
    """Send other packages' warnings to the log file (or nowhere), not to Python's stderr."""
    top = logging.getLogger()
    for handler in list(top.handlers):
        if getattr(handler, _LIBRARIES_MARK, False):
            top.removeHandler(handler)
    target: logging.Handler = file_handler if file_handler is not None else logging.NullHandler()
    setattr(target, _LIBRARIES_MARK, True)
    top.addHandler(target)
