"""With a local model, an empty conversation offers the sample import ("Try: Import the sample
suppliers"): the chip fills the message box, and sending it runs the model's call through the
window's approval before the bundled demo server sees ``tools/call``. The model's output is
scripted as a small local model writes it (``<tool_call>`` text, the scripted OpenAI endpoint
standing in for the model's process); the local adapter and its parser, the chat engine, the
approval dialog and the demo server over stdio are real."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import anyio
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from mooring.adapters.providers.local import LocalChatProvider
from mooring.bootstrap import build_host
from mooring.core.chat import ChatProvider, ProviderConfig
from mooring.core.sample import SAMPLE_FILE, SAMPLE_PROMPT, SAMPLE_SUGGESTION, SAMPLE_TOOL
from mooring.core.servers import ServerDefinition
from mooring.services.host import Host
from mooring.settings.paths import Paths
from mooring.settings.store import Settings
from mooring.storage.db import Database
from mooring.ui.dialogs.approval import DialogAsker
from mooring.ui.main_window import MainWindow, WindowInfo
from mooring.ui.views.conversations_view import ConversationsView
from tests.helpers.model_endpoints import ModelEndpoint, Text
from tests.helpers.scripted_model import CONFIG
from tests.services.conftest import demo_definition
from tests.services.test_local_tool_calls import LOCAL, EndpointRuntime, tool_calls_sent
from tests.ui.conftest import next_dialog, until

pytestmark = pytest.mark.anyio

SAMPLE_CALL = (
    "I will import them.\n<tool_call>\n"
    + json.dumps({"name": f"demo__{SAMPLE_TOOL}", "arguments": {"path": SAMPLE_FILE}})
    + "\n</tool_call>"
)


@contextlib.asynccontextmanager
async def window_with(
    tmp_path: Path, qtbot: QtBot, endpoint: ModelEndpoint, config: ProviderConfig
) -> AsyncIterator[tuple[ConversationsView, DialogAsker, ServerDefinition, Host]]:
    """The main window over a host whose default provider is ``config`` (its model the scripted
    endpoint), with the demo server configured as the bundled one."""
    data = tmp_path / "data"
    data.mkdir()
    paths = Paths(data_dir=data, config_dir=data / "config", log_dir=data / "logs", overridden=True)
    db = Database.open(paths.database)
    asker = DialogAsker()

    async def resolve(key: str | None) -> ProviderConfig:
        return config

    def factory(config: ProviderConfig) -> ChatProvider:
        return LocalChatProvider(config, EndpointRuntime(endpoint.openai_url))

    settings = Settings({"demo_server.enabled": False, "mcp.call_timeout_ms": 30_000})
    host = build_host(paths, settings, db, ask=asker, models=(resolve, factory))
    demo = replace(
        demo_definition(tmp_path / "demo-store.sqlite3", tmp_path / "requests.log"), builtin=True
    )
    await host.catalog.add_server(demo)
    host.start_monitoring()
    window = MainWindow(host, WindowInfo(data_dir=str(data), database="db", schema="head"))
    qtbot.addWidget(window)
    window.show()
    try:
        await window.start()
        window.show_view(window.conversations)
        yield window.conversations, asker, demo, host
    finally:
        for dialog in list(asker.open_dialogs):
            dialog.reject()
        window.close()
        await window.stop_jobs()
        with anyio.fail_after(30):
            await host.stop()
        db.close()


async def test_the_sample_import_is_offered_and_asked_about_before_the_server_sees_it(
    tmp_path: Path, qtbot: QtBot, model_endpoint: ModelEndpoint
) -> None:
    model_endpoint.script(Text(SAMPLE_CALL), Text("The import has started."))
    async with window_with(tmp_path, qtbot, model_endpoint, LOCAL) as (view, asker, demo, _h):
        offered: list[bool] = []
        view.sample_chip.considered.connect(offered.append)
        await view.new_conversation()
        await until(lambda: bool(offered), view.sample_chip.considered)
        chip = view.sample_chip.button
        assert offered == [True]
        assert chip.isVisible()
        assert chip.text() == SAMPLE_SUGGESTION
        assert chip.accessibleName() == SAMPLE_SUGGESTION
        assert chip.toolTip()
        assert chip.focusPolicy() != Qt.FocusPolicy.NoFocus  # reachable with Tab

        chip.setFocus()
        QTest.keyClick(chip, Qt.Key.Key_Space)  # pressed from the keyboard
        assert view.composer.toPlainText() == SAMPLE_PROMPT
        assert model_endpoint.requests == []  # filled, not sent
        QTest.keyClick(view.composer, Qt.Key.Key_Return)

        dialog = await next_dialog(asker)
        assert tool_calls_sent(demo) == 0  # asked before the server saw anything
        assert SAMPLE_TOOL in dialog.tool_label.text()
        assert dialog.request.arguments == {"path": SAMPLE_FILE}
        dialog.buttons["Allow once"].click()
        await until(lambda: view.messages.rowCount() >= 4, view.turn_ended, limit=60)
        assert tool_calls_sent(demo) == 1
        assert not view.sample_chip.isVisible()  # the conversation is not empty any more
        sent = model_endpoint.requests[0].body["messages"][-1]
        assert sent == {"role": "user", "content": SAMPLE_PROMPT}


async def test_no_sample_is_offered_with_a_provider_that_is_not_local(
    tmp_path: Path, qtbot: QtBot, model_endpoint: ModelEndpoint
) -> None:
    async with window_with(tmp_path, qtbot, model_endpoint, CONFIG) as (view, _a, _d, _h):
        offered: list[bool] = []
        view.sample_chip.considered.connect(offered.append)
        await view.new_conversation()
        await until(lambda: bool(offered), view.sample_chip.considered)
        assert offered == [False]
        assert not view.sample_chip.isVisible()
