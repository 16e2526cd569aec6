"""Python MCP servers that cannot share Mooring's interpreter (``tests/peers_py``).

The official Python SDK 1.x (``mcp`` 1.30) and FastMCP 3.4 (which needs ``mcp<2``) cannot be
installed beside Mooring's ``mcp`` 2.3, so they get a virtual environment of their own,
``tests/peers_py/.venv``, made from the pinned ``tests/peers_py/requirements.txt`` by the first
test that needs it (under a file lock: several pytest workers may ask at once), as
:mod:`tests.helpers.node_peers` does with ``npm ci``. The peer scripts themselves live in
``tests/mcp/peers``.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
from pathlib import Path

PEERS = Path(__file__).resolve().parents[1] / "peers_py"
REQUIREMENTS = PEERS / "requirements.txt"
VENV = PEERS / ".venv"
SCRIPTS = Path(__file__).resolve().parents[1] / "mcp" / "peers"
SDK1_TASKS = SCRIPTS / "sdk1_tasks_server.py"
FASTMCP3_TASKS = SCRIPTS / "fastmcp3_tasks_server.py"
# Written last: a venv without it is half made (an install cut short), and is made again.
_DONE = VENV / "installed-requirements.txt"


def python() -> str:
    """The peers' interpreter (the environment made on first use)."""
    interpreter = VENV / "bin" / "python"
    if _installed():
        return str(interpreter)
    with (PEERS / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _installed():
            shutil.rmtree(VENV, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, timeout=120)
            subprocess.run(
                [str(interpreter), "-m", "pip", "install", "--quiet", "-r", str(REQUIREMENTS)],
                check=True,
                timeout=900,
                stdout=subprocess.DEVNULL,
            )
            shutil.copyfile(REQUIREMENTS, _DONE)
    return str(interpreter)


def _installed() -> bool:
    """The environment holds exactly the pinned requirements (made again when they change)."""
    return _DONE.exists() and _DONE.read_bytes() == REQUIREMENTS.read_bytes()
