"""An assistive-technology client: finds Mooring's window over AT-SPI and approves a call.

Run with the system Python (Debian's ``python3-pyatspi``), on the session bus and display the
app uses: ``/usr/bin/python3 atspi_driver.py Mooring``. Writes a JSON report to stdout. It
looks at the tree again until a deadline, as a screen reader's user would look again.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from typing import Any

import pyatspi  # type: ignore[import-not-found, unused-ignore]  # system Python only

DEADLINE_S = 90
LOOK_AGAIN_S = 0.2


def walk(node: Any, depth: int = 0) -> Iterator[Any]:
    """Every node under ``node`` (nodes that vanish while walked are skipped)."""
    if node is None or depth > 40:
        return
    yield node
    for i in range(node.childCount):
        try:
            child = node.getChildAtIndex(i)
        except Exception:  # noqa: BLE001, S112  # the tree changes under us
            continue
        yield from walk(child, depth + 1)


def find(root: Any, role: str, name: str) -> Any:
    """The first node with ``role`` called ``name``, or ``None``."""
    for node in walk(root):
        try:
            if node.getRoleName() == role and node.name == name:
                return node
        except Exception:  # noqa: BLE001, S112  # vanished
            continue
    return None


def app_named(name: str) -> Any:
    """The application called ``name`` on the accessibility bus, or ``None``."""
    desktop = pyatspi.Registry.getDesktop(0)
    for i in range(desktop.childCount):
        app = desktop.getChildAtIndex(i)
        if app is not None and app.name == name:
            return app
    return None


def look_for(what: Any, end: float) -> Any:
    """Call ``what()`` until it finds something or the deadline passes."""
    while time.monotonic() < end:
        found = what()
        if found is not None:
            return found
        time.sleep(LOOK_AGAIN_S)
    return None


def main() -> int:
    end = time.monotonic() + DEADLINE_S
    report: dict[str, Any] = {"panels": [], "dialog": None, "buttons": [], "pressed": False}
    app = look_for(lambda: app_named(sys.argv[1] if len(sys.argv) > 1 else "Mooring"), end)
    if app is None:
        report["error"] = "the app is not on the accessibility bus"
        sys.stdout.write(json.dumps(report) + "\n")
        return 1
    dialog = look_for(lambda: find(app, "dialog", "Approve tool call"), end)
    if dialog is None:
        report["error"] = "no approval dialog appeared"
        sys.stdout.write(json.dumps(report) + "\n")
        return 1
    report["dialog"] = dialog.name
    names = {node.name for node in walk(app) if node is not None}
    report["panels"] = [name for name in ("Tasks", "Servers", "Issues") if name in names]
    report["buttons"] = [n.name for n in walk(dialog) if n.getRoleName() == "push button"]
    allow = find(dialog, "push button", "Allow once")
    action = allow.queryAction()
    actions = [action.getName(i) for i in range(action.nActions)]
    action.doAction(actions.index("Press") if "Press" in actions else 0)
    report["pressed"] = True
    sys.stdout.write(json.dumps(report) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
