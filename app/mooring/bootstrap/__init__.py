"""The composition root: builds everything in a fixed, logged order and passes it along.

paths → logging → settings → database (migrate) → services → (GUI: QApplication + qasync loop)
→ window. No global singletons: collaborators are constructor arguments. The GUI and the CLI
share this package; nothing else wires concrete classes together. One module per job:

- ``entry``: :func:`main`, a command line routed to what runs it;
- ``starting``: what each process does first (paths, logging, settings), its tracer provider
  and garbage collector, the command that starts the engine;
- ``wiring``: one host over one database (:func:`wire`, :func:`build_host`);
- ``window``: the window face (:func:`run_gui`);
- ``agent``: the engine, ``mooring agent`` (:func:`run_agent`);
- ``headless``: a CLI command, through the engine or with a host of its own
  (:func:`run_headless`);
- ``doctor``: ``mooring doctor`` (:func:`run_doctor`).

The rest loads where it is used: the window's shell paints before SQLAlchemy, the services and
the notification stack are imported (see "How a command runs" in docs/cli.md).
"""

from mooring.bootstrap.agent import notification_prefs, run_agent
from mooring.bootstrap.doctor import run_doctor
from mooring.bootstrap.entry import main
from mooring.bootstrap.headless import run_headless
from mooring.bootstrap.starting import YOUNG_OBJECTS_PER_COLLECTION, agent_command, settle_collector
from mooring.bootstrap.window import WindowConnection, remember_settings, run_gui
from mooring.bootstrap.wiring import Wiring, build_host, demo_server_command, wire

__all__ = [
    "YOUNG_OBJECTS_PER_COLLECTION",
    "WindowConnection",
    "Wiring",
    "agent_command",
    "build_host",
    "demo_server_command",
    "main",
    "notification_prefs",
    "remember_settings",
    "run_agent",
    "run_doctor",
    "run_gui",
    "run_headless",
    "settle_collector",
    "wire",
]
