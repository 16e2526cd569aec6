"""The Local models dialog: the catalogue with sizes and licences, a download from a server on
127.0.0.1 followed by its progress bar to a verified file, and an interrupted one said in words
and resumed by pressing Download again; every control named for assistive technology."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from mooring.core.local_models import CatalogueModel
from mooring.ui.dialogs.local_models import LocalModelsDialog
from tests.adapters.test_model_files import PAYLOAD, SHA, FileServer
from tests.adapters.test_model_files import file_server as file_server  # the fixture
from tests.ui.conftest import until

pytestmark = pytest.mark.anyio


def served(server: FileServer) -> CatalogueModel:
    return CatalogueModel(
        key="tiny",
        title="Tiny test model",
        file_name="tiny.gguf",
        url=server.url,
        approx_bytes=len(PAYLOAD),
        licence="Apache-2.0",
        licence_url="https://www.apache.org/licenses/LICENSE-2.0",
        sha256=SHA,
    )


async def test_a_model_downloads_with_its_progress_shown_and_resumes_after_a_break(
    tmp_path: Path, qtbot: QtBot, file_server: FileServer
) -> None:
    folder = tmp_path / "models"
    dialog = LocalModelsDialog(folder, catalogue=[served(file_server)])
    qtbot.addWidget(dialog)
    dialog.show()
    for control in dialog.findChildren(QWidget):
        if control.focusPolicy() != Qt.FocusPolicy.NoFocus and control.isVisible():
            assert control.accessibleName(), control
    assert dialog.models_list.count() == 1
    assert "Apache-2.0" in dialog.licence_label.text()
    assert dialog.download_button.isEnabled()

    file_server.cut_after = 100_000  # the connection drops mid-body
    failures: list[str] = []
    dialog.failed.connect(failures.append)
    dialog.download_button.click()
    await until(lambda: bool(failures), dialog.failed, limit=30)
    assert "Run it again" in failures[0]
    assert dialog.status_label.text() == failures[0]
    assert dialog.download_button.isEnabled()

    done: list[str] = []
    dialog.downloaded.connect(done.append)
    dialog.download_button.click()
    await until(lambda: bool(done), dialog.downloaded, limit=30)
    assert await anyio.Path(done[0]).read_bytes() == PAYLOAD
    assert file_server.ranges == [None, "bytes=100000-"]
    assert dialog.progress.value() == 100
    assert "[downloaded]" in dialog.models_list.item(0).text()
    assert not dialog.download_button.isEnabled()  # it is here now


async def test_a_download_is_cancelled_with_esc_while_the_server_stalls_and_resumes_later(
    tmp_path: Path, qtbot: QtBot, file_server: FileServer
) -> None:
    folder = tmp_path / "models"
    dialog = LocalModelsDialog(folder, catalogue=[served(file_server)])
    qtbot.addWidget(dialog)
    dialog.show()
    assert not dialog.cancel_button.isEnabled()  # nothing to cancel yet
    file_server.stall_after = 100_000  # sends a third, then nothing until the test ends
    dialog.download_button.click()
    await until(lambda: dialog.progress.value() >= 33, dialog.progress.valueChanged, limit=30)
    assert dialog.cancel_button.isEnabled()
    assert dialog.cancel_button.toolTip()
    assert dialog.cancel_button.focusPolicy() != Qt.FocusPolicy.NoFocus

    stopped: list[str] = []
    dialog.cancelled.connect(stopped.append)
    QTest.keyClick(dialog, Qt.Key.Key_Escape)
    await until(lambda: bool(stopped), dialog.cancelled, limit=30)
    assert dialog.isVisible()  # Esc stopped the download, not the dialog
    assert "press Download to resume" in dialog.status_label.text()
    assert not file_server.release.is_set()  # it ended while the server still stalled
    kept = await anyio.Path(folder / "tiny.gguf.part").read_bytes()
    assert kept  # what came is kept
    assert PAYLOAD.startswith(kept)
    assert dialog.download_button.isEnabled()
    assert not dialog.cancel_button.isEnabled()

    done: list[str] = []
    dialog.downloaded.connect(done.append)
    dialog.download_button.click()
    await until(lambda: bool(done), dialog.downloaded, limit=30)
    assert file_server.ranges == [None, f"bytes={len(kept)}-"]  # only the rest was fetched
    assert "(SHA-256 from the catalogue)" in dialog.status_label.text()
    assert await anyio.Path(done[0]).read_bytes() == PAYLOAD
    QTest.keyClick(dialog, Qt.Key.Key_Escape)
    assert not dialog.isVisible()  # with nothing under way, Esc closes
