"""An assistive-technology client for the chat controls: lists what a screen reader finds in
Mooring's conversation view, then activates "Previous version" as its user would.

Run with the system Python (Debian's ``python3-pyatspi``) on the app's display and session bus:
``/usr/bin/python3 atspi_chat_driver.py``. Writes a JSON report to stdout: for every named node
of the window, its role, whether it can take the keyboard focus, whether it is enabled, and its
description (a tooltip, which names the control's shortcut).
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import pyatspi  # type: ignore[import-not-found, unused-ignore]  # system Python only
from atspi_driver import (  # type: ignore[import-not-found, unused-ignore]  # run as a script
    app_named,
    find,
    look_for,
    walk,
)

DEADLINE_S = 90


def enabled_button(app: Any, name: str) -> Any:
    node = find(app, "push button", name)
    if node is None:
        return None
    return node if node.getState().contains(pyatspi.STATE_SENSITIVE) else None


def describe(app: Any) -> dict[str, dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for node in walk(app):
        try:
            name, role, states = node.name, node.getRoleName(), node.getState()
            if not name or name in seen:
                continue
            seen[name] = {
                "role": role,
                "focusable": states.contains(pyatspi.STATE_FOCUSABLE),
                "enabled": states.contains(pyatspi.STATE_SENSITIVE),
                "description": node.description or "",
            }
        except Exception:  # noqa: BLE001, S112  # vanished while walked
            continue
    return seen


def main() -> int:
    end = time.monotonic() + DEADLINE_S
    report: dict[str, Any] = {"controls": {}, "pressed": False}
    app = look_for(lambda: app_named("Mooring"), end)
    if app is None:
        report["error"] = "the app is not on the accessibility bus"
    else:
        button = look_for(lambda: enabled_button(app, "Previous version"), end)
        report["controls"] = describe(app)
        if button is None:
            report["error"] = "no enabled 'Previous version' button"
        else:
            action = button.queryAction()
            names = [action.getName(i) for i in range(action.nActions)]
            action.doAction(names.index("Press") if "Press" in names else 0)
            report["pressed"] = True
    sys.stdout.write(json.dumps(report) + "\n")
    return 0 if report["pressed"] else 1


if __name__ == "__main__":
    sys.exit(main())
