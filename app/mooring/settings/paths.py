"""Where Mooring's files live: platformdirs by default, one folder when overridden.

``--data-dir DIR`` or ``MOORING_DATA_DIR=DIR`` put *everything* (database, settings, logs,
traces, the demo server's store) under ``DIR``: tests and scripts rely on this to stay away from
the user's real profile.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mooring.core.errors import KnownError

APP_NAME = "Mooring"
APP_ID = "io.mooring.Mooring"
ENV_DATA_DIR = "MOORING_DATA_DIR"


@dataclass(frozen=True, slots=True)
class Paths:
    """The folders and files Mooring uses."""

    data_dir: Path
    config_dir: Path
    log_dir: Path
    overridden: bool = False

    @property
    def database(self) -> Path:
        """The SQLite database."""
        return self.data_dir / "mooring.sqlite3"

    @property
    def settings_file(self) -> Path:
        """The user's settings (JSON)."""
        return self.config_dir / "settings.json"

    @property
    def traces_dir(self) -> Path:
        """Exported OpenTelemetry traces (OTLP JSON lines)."""
        return self.data_dir / "traces"

    @property
    def log_file(self) -> Path:
        """The rotating log file."""
        return self.log_dir / "mooring.log"

    @property
    def demo_store(self) -> Path:
        """The bundled demo server's own SQLite store."""
        return self.data_dir / "demo-server.sqlite3"

    def check(self) -> None:
        """Refuse a data, config or log folder that is a file (or lies under one).

        Raises a ``KnownError`` that says so, before anything tries to create folders inside it.
        """
        for folder in (self.data_dir, self.config_dir, self.log_dir):
            for place in (folder, *folder.parents):
                if place.exists() and not place.is_dir():
                    raise KnownError(
                        f"{place} is a file, not a folder: Mooring keeps its database, settings "
                        "and logs in a folder.",
                        hint="Choose another place with --data-dir DIR (or MOORING_DATA_DIR), "
                        "or move the file away.",
                        code="data_dir_is_file",
                    )

    def ensure(self) -> None:
        """Create the folders (not the files)."""
        for folder in (self.data_dir, self.config_dir, self.log_dir):
            folder.mkdir(parents=True, exist_ok=True)


def resolve_paths(data_dir: str | os.PathLike[str] | None = None) -> Paths:
    """The paths to use: ``data_dir`` if given, else ``$MOORING_DATA_DIR``, else platformdirs."""
    chosen = data_dir if data_dir is not None else os.environ.get(ENV_DATA_DIR) or None
    if chosen is not None:
        root = Path(chosen).expanduser().resolve()
        return Paths(
            data_dir=root, config_dir=root / "config", log_dir=root / "logs", overridden=True
        )
    import platformdirs  # only when no folder is given (not for --data-dir, tests, scripts)

    dirs = platformdirs.PlatformDirs(APP_NAME, appauthor=False)
    return Paths(
        data_dir=Path(dirs.user_data_dir),
        config_dir=Path(dirs.user_config_dir),
        log_dir=Path(dirs.user_log_dir),
    )
