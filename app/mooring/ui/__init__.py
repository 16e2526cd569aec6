"""The desktop app: the only package that imports Qt."""

import threading

QT_IMPORTS = threading.Lock()
"""Held by a worker thread while it imports modules that use Qt. PySide6 builds its types and
enums lazily, and not safely from two threads at once: the composition root's two loading
threads (the host's build, which imports the approval dialog, and the panels' modules) crashed
the app at start with a segmentation fault, about one launch in fifteen on a busy machine."""
