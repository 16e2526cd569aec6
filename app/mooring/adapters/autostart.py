"""The XDG autostart entry that starts the headless monitor at login (Linux desktops).

``$XDG_CONFIG_HOME/autostart/<app id>.desktop`` (``~/.config`` when unset), per the XDG
Autostart specification; removing the file switches it off.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path


def autostart_file(app_id: str) -> Path:
    """Where the entry lives for this user."""
    base = os.environ.get("XDG_CONFIG_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".config"
    return root / "autostart" / f"{app_id}.desktop"


def _quote(arg: str) -> str:
    """One ``Exec`` argument, quoted as the Desktop Entry specification asks."""
    if arg and not any(ch in arg for ch in " \t\n\"'\\><~|&;$*?#()`%="):
        return arg
    escaped = "".join("\\" + ch if ch in '"`$\\' else ch for ch in arg)
    return f'"{escaped.replace("%", "%%")}"'


def desktop_entry(command: Sequence[str], *, name: str) -> str:
    """The entry's text: runs ``command`` at login, hidden from menus."""
    return (
        "[Desktop Entry]\n"
        "Type=Application\n"
        f"Name={name} background monitor\n"
        f"Comment=Follows unfinished {name} tasks and notifies you when they need you or end\n"
        f"Exec={' '.join(_quote(a) for a in command)}\n"
        "Terminal=false\n"
        "NoDisplay=true\n"
        "X-GNOME-Autostart-enabled=true\n"
    )


def enable_autostart(path: Path, command: Sequence[str], *, name: str) -> None:
    """Write (or rewrite) the entry atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(desktop_entry(command, name=name), encoding="utf-8")
    tmp.replace(path)


def disable_autostart(path: Path) -> bool:
    """Remove the entry; ``False`` if there was none."""
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True
