"""One window per data folder: a second launch focuses the running one instead of starting
another poller on the same database.

The running window listens on a local socket named after the data folder; a new launch first
tries to reach it and, when it answers, asks it to come to the front and exits.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtNetwork import QLocalServer, QLocalSocket

log = logging.getLogger("mooring.ui.instance")

FOCUS = b"focus\n"
CONNECT_TIMEOUT_MS = 500


def socket_name(data_dir: Path) -> str:
    """The local socket name for a data folder (the same folder always gives the same name)."""
    digest = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:20]
    return f"mooring-{digest}"


def ask_running_to_focus(name: str) -> bool:
    """Whether a running window answered on ``name`` (it was asked to come to the front)."""
    socket = QLocalSocket()
    socket.connectToServer(name)
    if not socket.waitForConnected(CONNECT_TIMEOUT_MS):
        return False
    socket.write(FOCUS)
    socket.waitForBytesWritten(CONNECT_TIMEOUT_MS)
    socket.disconnectFromServer()
    return True


class InstanceServer(QObject):
    """Listens for later launches on the same data folder and calls :attr:`on_focus`."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.on_focus: Callable[[], None] = lambda: None
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        if not self._server.listen(name):
            # A socket file left by a crashed run: nobody answered on it, so take it over.
            QLocalServer.removeServer(name)
            if not self._server.listen(name):
                log.warning("cannot listen for other launches: %s", self._server.errorString())
        self._server.newConnection.connect(self._on_connection)

    def _on_connection(self) -> None:
        while (socket := self._server.nextPendingConnection()) is not None:
            socket.readyRead.connect(lambda s=socket: self._read(s))
            socket.disconnected.connect(socket.deleteLater)

    def _read(self, socket: QLocalSocket) -> None:
        if bytes(socket.readAll().data()).startswith(FOCUS.strip()):
            log.info("another launch on this data folder: bringing the window to the front")
            self.on_focus()

    def close(self) -> None:
        """Stop listening."""
        self._server.close()


def claim(data_dir: Path) -> InstanceServer | None:
    """Become the one window of ``data_dir``, or ``None`` when one runs already (it was told
    to come to the front). A QApplication must exist."""
    name = socket_name(data_dir)
    if ask_running_to_focus(name):
        return None
    return InstanceServer(name)
