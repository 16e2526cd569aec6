"""Running ``mooring`` as a real process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_mooring(
    *args: str, data_dir: Path, env: dict[str, str | None] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m mooring ARGS`` with its own data folder (``env`` None values unset)."""
    full_env = dict(os.environ)
    full_env["MOORING_DATA_DIR"] = str(data_dir)
    full_env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    for key, value in (env or {}).items():
        if value is None:
            full_env.pop(key, None)
        else:
            full_env[key] = value
    return subprocess.run(
        [sys.executable, "-m", "mooring", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        check=False,
    )
