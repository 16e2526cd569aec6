"""Finding other MCP hosts' configuration files on this machine (Claude Desktop, VS Code,
Cursor), in their usual per-system places."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from mooring.core.server_import import ConfigSource, known_config_files

MAX_CONFIG_BYTES = 4 * 1024 * 1024
"""A configuration file larger than this is not read (it is not a server list)."""


class LocalConfigFiles:
    """Implements ``ConfigFiles`` for the current user (``home``, ``env`` and ``system``
    default to this process's; tests point them at a temporary folder)."""

    def __init__(
        self,
        *,
        home: Path | None = None,
        env: Mapping[str, str] | None = None,
        system: str | None = None,
    ) -> None:
        self._home = home
        self._env = env
        self._system = system

    def found(self) -> list[ConfigSource]:
        home = self._home or Path.home()
        env = os.environ if self._env is None else self._env
        return [
            source
            for source in known_config_files(self._system or sys.platform, home, env)
            if Path(source.path).is_file()
        ]

    def read(self, path: str) -> str:
        file = Path(path)
        if file.stat().st_size > MAX_CONFIG_BYTES:
            raise OSError(f"{path} is larger than {MAX_CONFIG_BYTES // 1024 // 1024} MB")
        return file.read_text(encoding="utf-8", errors="replace")
