"""How Mooring starts a program of its own again: the bundled demo server, a local model's
process, the headless monitor.

Run from Python (a checkout, a wheel), that is this interpreter with ``-m``. In a PyInstaller
bundle ``sys.executable`` is the bundle's own ``mooring`` executable, which cannot run ``-m``:
there the same programs are entries of the bundle (``mooring demo-server``, ``mooring
local-model``, ``mooring tasks``).
"""

from __future__ import annotations

import sys
from collections.abc import MutableMapping
from pathlib import Path

DEMO_SERVER_ENTRY = "demo-server"
"""``mooring demo-server ARGS``: the bundled demo server (its own flags; see ``--help``)."""
LOCAL_MODEL_ENTRY = "local-model"
"""``mooring local-model ARGS``: a local model's process (``python -m mooring.local_model``)."""
PROGRAM_ENTRIES = (DEMO_SERVER_ENTRY, LOCAL_MODEL_ENTRY)
"""Entries that are separate programs behind the ``mooring`` executable, not its commands."""


def is_frozen() -> bool:
    """Whether this process runs from a frozen bundle (PyInstaller sets ``sys.frozen``)."""
    return bool(getattr(sys, "frozen", False))


def mooring_command(
    *args: str, frozen: bool | None = None, executable: str | None = None
) -> list[str]:
    """The command line that runs ``mooring ARGS`` with this installation.

    ``frozen`` and ``executable`` default to this process's own (tests pass them).
    """
    exe = executable or sys.executable
    if is_frozen() if frozen is None else frozen:
        return [exe, *args]
    return [exe, "-m", "mooring", *args]


def demo_server_command(
    store: Path, *, frozen: bool | None = None, executable: str | None = None
) -> tuple[str, tuple[str, ...]]:
    """The program and arguments that start the bundled demo server over stdio on ``store``:
    ``python -m mooring.demo_server``, or the bundle's own ``mooring demo-server``."""
    exe = executable or sys.executable
    tail = ("--store", str(store))
    if is_frozen() if frozen is None else frozen:
        return exe, (DEMO_SERVER_ENTRY, *tail)
    return exe, ("-m", "mooring.demo_server", *tail)


def local_model_command(
    *args: str, frozen: bool | None = None, executable: str | None = None
) -> list[str]:
    """The command line that starts a local model's process with ``args``: ``python -m
    mooring.local_model``, or the bundle's own ``mooring local-model``."""
    exe = executable or sys.executable
    if is_frozen() if frozen is None else frozen:
        return [exe, LOCAL_MODEL_ENTRY, *args]
    return [exe, "-m", "mooring.local_model", *args]


def restore_host_environment(environ: MutableMapping[str, str]) -> None:
    """Give programs this bundle starts (a browser for sign-in, MCP servers, ``xdg-open``) the
    library path the user had, not the bundle's.

    PyInstaller's bootloader points ``LD_LIBRARY_PATH`` at the bundle and keeps the user's value
    in ``LD_LIBRARY_PATH_ORIG``. This process resolved its own libraries already (the loader
    reads the variable once, at start), so only children see the change.
    """
    original = environ.pop("LD_LIBRARY_PATH_ORIG", None)
    if original is None:
        environ.pop("LD_LIBRARY_PATH", None)
    else:
        environ["LD_LIBRARY_PATH"] = original
