"""The Servers panel over a real host, a real SQLite file and real servers: tools with their
access checkboxes, editing, importing other apps' configurations, accounts and OAuth sign-in."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx2
import keyring
import keyring.backends.fail
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QInputDialog, QPushButton, QWidget
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from mooring.core.issues import IssueAction, IssueKind
from mooring.core.servers import ServerDefinition, Transport
from mooring.core.tools import ToolInfo
from mooring.services.host import ServerSpec
from mooring.ui.dialogs.add_server import AddServerDialog
from mooring.ui.dialogs.import_servers import ImportDialog
from mooring.ui.models.server_tools import ENABLED, HIDDEN, ToolAccessModel
from tests.helpers.authserver import AuthServer, running_auth_server
from tests.mcp.servers import DemoServer, free_port
from tests.ui.conftest import until
from tests.ui.test_window_flows import open_window

pytestmark = pytest.mark.anyio

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def server(**changes: object) -> ServerDefinition:
    fields: dict[str, object] = {
        "id": "s1",
        "alias": "files",
        "transport": Transport.STDIO,
        "command": "files-server",
        "created_at": NOW,
    }
    fields.update(changes)
    return ServerDefinition(**fields)  # type: ignore[arg-type]


TOOLS = [
    ToolInfo(server_id="s1", name="read", description="Read a file\nmore"),
    ToolInfo(server_id="s1", name="delete", title="Delete \u202eevil", description="<b>x</b>"),
]


def test_the_tool_access_model_passes_the_tester_and_asks_instead_of_changing(
    qtmodeltester: ModelTester,
) -> None:
    model = ToolAccessModel()
    model.set_tools(server(allowed_tools=("read",), hidden_tools=("del*",)), TOOLS)
    qtmodeltester.check(model, force_py=True)  # type: ignore[no-untyped-call]

    def state(row: int, column: int) -> object:
        return model.index(row, column).data(Qt.ItemDataRole.CheckStateRole)

    assert state(0, ENABLED) == Qt.CheckState.Checked
    assert state(1, ENABLED) == Qt.CheckState.Unchecked
    assert state(1, HIDDEN) == Qt.CheckState.Checked
    # Hostile names are neutralised in what is painted and what is read aloud.
    assert model.index(1, 0).data() == "Delete <U+202E>evil"
    assert model.index(1, ENABLED).data(Qt.ItemDataRole.AccessibleTextRole) == (
        "Delete <U+202E>evil: disabled"
    )
    assert model.index(0, 3).data() == "Read a file"
    asked: list[tuple[str, object, object]] = []
    model.change_requested.connect(lambda *a: asked.append(a))
    assert not model.setData(
        model.index(1, ENABLED), Qt.CheckState.Checked.value, Qt.ItemDataRole.CheckStateRole
    )
    assert asked == [("delete", True, None)]
    assert state(1, ENABLED) == Qt.CheckState.Unchecked  # unchanged until the host stored it
    model.set_server(server(allowed_tools=None, hidden_tools=()))
    assert state(1, ENABLED) == Qt.CheckState.Checked
    assert state(1, HIDDEN) == Qt.CheckState.Unchecked


def every_control_is_named_and_reachable(panel: QWidget) -> None:
    for widget in [*panel.findChildren(QPushButton), *panel.findChildren(QCheckBox)]:
        assert widget.accessibleName(), widget.text()
        assert widget.focusPolicy() & Qt.FocusPolicy.TabFocus, widget.text()
    for name in ("Server list", "Tools", "Accounts", "Trusted"):
        [found] = [w for w in panel.findChildren(QWidget) if w.accessibleName() == name]
        assert found.focusPolicy() & Qt.FocusPolicy.TabFocus, name


async def test_tools_are_disabled_and_hidden_with_their_checkboxes_and_the_server_edited(
    tmp_path: Path, qtbot: QtBot
) -> None:
    async with open_window(tmp_path, qtbot) as (window, ui_host):
        panel = window.servers
        window.show_view(panel)
        every_control_is_named_and_reachable(panel)
        await until(lambda: bool(panel.tool_model.tools()), panel.tools_shown)
        assert "import_suppliers" in {t.name for t in panel.tool_model.tools()}

        # Untick "Enabled": the host stores an allowed list, then the box shows it.
        cell = panel.index_of_tool("import_suppliers", ENABLED)
        panel.tool_model.setData(
            cell, Qt.CheckState.Unchecked.value, Qt.ItemDataRole.CheckStateRole
        )
        await until(
            lambda: cell.data(Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Unchecked,
            panel.loaded,
        )
        stored = await ui_host.host.server("demo")
        assert stored.allowed_tools is not None
        assert "import_suppliers" not in stored.allowed_tools
        assert "Allowed list" in panel.tools_note.text()
        hide = panel.index_of_tool("import_suppliers", HIDDEN)
        panel.tool_model.setData(hide, Qt.CheckState.Checked.value, Qt.ItemDataRole.CheckStateRole)
        await until(
            lambda: hide.data(Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked,
            panel.loaded,
        )
        assert (await ui_host.host.server("demo")).hidden_tools == ("import_suppliers",)

        # Edit: the dialog shows the server as it is, and a rename keeps it the same server.
        opened: list[object] = []
        panel.dialog_opened.connect(opened.append)
        editing = window.jobs.start(panel.edit_selected())
        await until(lambda: bool(opened), panel.dialog_opened)
        dialog = opened.pop()
        assert isinstance(dialog, AddServerDialog)
        assert dialog.windowTitle() == "Edit server"
        assert dialog.alias_edit.text() == "demo"
        assert "mooring.demo_server" in dialog.command_edit.text()
        assert dialog.hidden_edit.text() == "import_suppliers"
        dialog.alias_edit.setText("")
        dialog.add_button.click()
        assert dialog.isVisible()
        assert "name" in dialog.error_label.text()
        dialog.alias_edit.setText("suppliers")
        dialog.hidden_edit.setText("")
        dialog.add_button.click()
        await editing
        assert [v.server.alias for v in panel.model.views()] == ["suppliers"]
        edited = await ui_host.host.server("suppliers")
        assert edited.id == ui_host.demo.id
        assert edited.hidden_tools == ()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    (folder / ".config").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder / ".config"))
    return folder


@pytest.mark.skipif(sys.platform != "linux", reason="the Linux locations")
async def test_import_lists_the_configs_found_and_adds_only_the_ticked_servers(
    tmp_path: Path, qtbot: QtBot, home: Path
) -> None:
    config = home / ".cursor" / "mcp.json"
    config.parent.mkdir()
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "notes": {"command": "notes-server"},
                    "wiki": {"url": "http://127.0.0.1:9/mcp", "headers": {"X-Key": "k3y"}},
                    "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
                    "\u202eevil": {"command": "evil"},
                }
            }
        )
    )
    async with open_window(tmp_path, qtbot) as (window, ui_host):
        panel = window.servers
        opened: list[object] = []
        panel.dialog_opened.connect(opened.append)
        importing = window.jobs.start(panel.import_interactively())
        await until(lambda: bool(opened), panel.dialog_opened)
        dialog = opened.pop()
        assert isinstance(dialog, ImportDialog)
        assert dialog.windowTitle() == "Import servers"
        rows = {item.text(): item for item in dialog.entry_items()}
        assert set(rows) == {"notes", "wiki", "old", "<U+202E>evil"}
        assert not rows["old"].isEnabled()
        assert rows["notes"].checkState() == Qt.CheckState.Checked
        rows["<U+202E>evil"].setCheckState(Qt.CheckState.Unchecked)
        assert [e.name for e in dialog.chosen()] == ["notes", "wiki"]
        assert dialog.import_button.text() == "Import 2"
        dialog.import_button.click()
        await importing
        assert sorted(v.server.alias for v in panel.model.views()) == ["demo", "notes", "wiki"]
        wiki = await ui_host.host.server("wiki")
        assert wiki.headers == {"X-Key": ""}
        assert ui_host.host.secrets.get("server-headers", f"{wiki.id}:X-Key") == "k3y"


@pytest.fixture
def auth() -> Iterator[AuthServer]:
    with running_auth_server() as server:
        yield server


async def test_sign_in_opens_the_browser_and_waits_without_blocking_the_window(
    tmp_path: Path, qtbot: QtBot, auth: AuthServer
) -> None:
    demo = DemoServer(tmp_path / "web")
    demo.root.mkdir()
    try:
        url = demo.start_http("--oauth-issuer", auth.issuer)
        async with open_window(tmp_path, qtbot) as (window, ui_host):
            panel = window.servers
            await ui_host.host.server_desk.add(ServerSpec(alias="web", url=url))
            await until(lambda: panel.select_server_alias("web"), panel.loaded)
            await until(lambda: panel.accounts_list.count() == 1, panel.accounts_shown)
            assert panel.accounts_list.item(0).text() == "default — not signed in"
            assert panel.sign_in_button.isEnabled()
            assert not panel.sign_out_button.isEnabled()
            opened: list[str] = []

            async def browser(address: str) -> None:
                opened.append(address)
                # The window keeps running while the browser is away: its loop turns.
                async with httpx2.AsyncClient(timeout=10) as client:
                    page = await client.get(address, follow_redirects=True)
                assert page.status_code == 200, page.text

            panel.open_url = browser
            panel.sign_in_button.click()
            await until(lambda: bool(opened), panel.signed_in, limit=60)
            await until(
                lambda: panel.accounts_list.item(0).text() == "default — signed in",
                panel.accounts_shown,
                limit=60,
            )
            assert panel.sign_out_button.isEnabled()

            # Another account: named in a dialog, signed out on its own.
            dialogs: list[object] = []
            panel.dialog_opened.connect(dialogs.append)
            adding = window.jobs.start(panel.add_account_interactively())
            await until(lambda: bool(dialogs), panel.dialog_opened)
            ask = dialogs.pop()
            assert isinstance(ask, QInputDialog)
            assert ask.windowTitle() == "Add account"
            ask.setTextValue("work")
            ask.accept()
            await adding
            assert [panel.accounts_list.item(i).text() for i in range(2)] == [
                "default — signed in",
                "work — not signed in",
            ]
            panel.accounts_list.setCurrentRow(0)
            panel.sign_out_button.click()
            await until(
                lambda: panel.accounts_list.item(0).text() == "default — not signed in",
                panel.accounts_shown,
            )
    finally:
        demo.stop_all()


async def test_an_issues_sign_in_button_signs_the_server_in_from_the_window(
    tmp_path: Path, qtbot: QtBot, auth: AuthServer
) -> None:
    demo = DemoServer(tmp_path / "web")
    demo.root.mkdir()
    try:
        url = demo.start_http("--oauth-issuer", auth.issuer)
        async with open_window(tmp_path, qtbot) as (window, ui_host):
            web = await ui_host.host.server_desk.add(ServerSpec(alias="web", url=url))
            await ui_host.host.issues.raise_issue(
                IssueKind.SIGN_IN_NEEDED, web.id, "web needs a sign-in", "tokens expired"
            )
            issues = window.issues
            await until(lambda: issues.model.rowCount() == 1, issues.count_changed)
            opened: list[str] = []

            async def browser(address: str) -> None:
                opened.append(address)
                async with httpx2.AsyncClient(timeout=10) as client:
                    page = await client.get(address, follow_redirects=True)
                assert page.status_code == 200, page.text

            window.servers.open_url = browser
            issues.buttons[IssueAction.SIGN_IN].click()
            await until(lambda: bool(opened), window.servers.signed_in, limit=60)
            assert window.tabs.currentWidget() is window.servers
            assert [a.signed_in for a in await ui_host.host.account_desk.accounts("web")] == [True]
    finally:
        demo.stop_all()


async def test_a_program_that_does_not_exist_is_refused_in_the_dialog_keeping_what_was_typed(
    tmp_path: Path, qtbot: QtBot
) -> None:
    async with open_window(tmp_path, qtbot) as (window, ui_host):
        panel = window.servers
        window.show_view(panel)
        opened: list[object] = []
        panel.dialog_opened.connect(opened.append)
        adding = window.jobs.start(panel.add_interactively())
        await until(lambda: bool(opened), panel.dialog_opened)
        dialog = opened.pop()
        assert isinstance(dialog, AddServerDialog)
        dialog.alias_edit.setText("ghost")
        dialog.command_edit.setText("./no-such-server --verbose")
        dialog.env_edit.setPlainText("API_KEY=k3y")
        dialog.add_button.click()
        # The host refuses it as `mooring servers add` does; the dialog opens again with why.
        await until(lambda: bool(opened), panel.dialog_opened)
        assert opened.pop() is dialog
        assert dialog.isVisible()
        assert dialog.error_label.text() == (
            "The command './no-such-server' was not found (or is not executable). "
            "Give the full path of the program, or install it first."
        )
        assert dialog.alias_edit.text() == "ghost"
        assert dialog.command_edit.text() == "./no-such-server --verbose"
        assert dialog.env_edit.toPlainText() == "API_KEY=k3y"
        assert await ui_host.host.find_server("ghost") is None
        dialog.reject()
        await adding
        assert [v.server.alias for v in panel.model.views()] == ["demo"]

        # Editing the demo server to a missing program is refused the same way.
        editing = window.jobs.start(panel.edit_selected())
        await until(lambda: bool(opened), panel.dialog_opened)
        edit = opened.pop()
        assert isinstance(edit, AddServerDialog)
        edit.command_edit.setText("/no/such/server")
        edit.add_button.click()
        await until(lambda: bool(opened), panel.dialog_opened)
        assert opened.pop() is edit
        assert "'/no/such/server' was not found" in edit.error_label.text()
        assert edit.command_edit.text() == "/no/such/server"
        edit.reject()
        await editing
        assert (await ui_host.host.server("demo")).command == ui_host.demo.command


async def test_the_tools_of_a_server_that_becomes_ready_are_shown_without_choosing_it_again(
    tmp_path: Path, qtbot: QtBot
) -> None:
    demo = DemoServer(tmp_path / "web")
    demo.root.mkdir()
    demo.port = free_port()  # nothing listens there yet
    try:
        async with open_window(tmp_path, qtbot) as (window, ui_host):
            panel = window.servers
            window.show_view(panel)
            web = await ui_host.host.server_desk.add(
                ServerSpec(alias="web", url=f"http://127.0.0.1:{demo.port}/mcp")
            )
            await until(lambda: panel.select_server_alias("web"), panel.loaded)
            unreachable = "Not reachable now; its tools are unknown."
            await until(lambda: panel.tools_note.text() == unreachable, panel.tools_shown)
            assert panel.tool_model.tools() == []

            # The server comes up and the connection's next attempt reaches it.
            demo.start_http()
            connection = await ui_host.host.gateway.connect(web)
            assert await connection.list_tools()
            await until(lambda: bool(panel.tool_model.tools()), panel.tools_shown, limit=20)
            assert "import_suppliers" in {t.name for t in panel.tool_model.tools()}
            assert panel.selected() is not None
            assert panel.selected().server.alias == "web"  # type: ignore[union-attr]
            assert panel.tools_note.text() == "Every tool may run (no allowed list)."
    finally:
        demo.stop_all()


@pytest.fixture
def no_keyring() -> Iterator[None]:
    """No usable keyring, as on a headless machine (keyring's own fail backend)."""
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        keyring.set_keyring(previous)


@pytest.mark.usefixtures("no_keyring")
async def test_without_a_keyring_a_value_is_stored_as_not_secret_or_read_from_a_variable(
    tmp_path: Path, qtbot: QtBot
) -> None:
    async with open_window(tmp_path, qtbot) as (window, ui_host):
        panel = window.servers
        window.show_view(panel)
        opened: list[object] = []
        panel.dialog_opened.connect(opened.append)
        adding = window.jobs.start(panel.add_interactively())
        await until(lambda: bool(opened), panel.dialog_opened)
        dialog = opened.pop()
        assert isinstance(dialog, AddServerDialog)
        for edit, name in (
            (dialog.env_edit, "Environment (secret)"),
            (dialog.plain_env_edit, "Environment (not secret)"),
            (dialog.env_refs_edit, "Environment from variables"),
        ):
            assert edit.accessibleName() == name
            assert edit.focusPolicy() & Qt.FocusPolicy.TabFocus
            assert edit.tabChangesFocus()
        dialog.alias_edit.setText("memory")
        dialog.command_edit.setText(f"{sys.executable} -c pass")
        dialog.env_edit.setPlainText("MEMORY_FILE_PATH=/srv/notes/memory.json")
        dialog.env_refs_edit.setPlainText("TOKEN=MY_TOKEN")
        dialog.add_button.click()
        await until(lambda: bool(opened), panel.dialog_opened)
        assert opened.pop() is dialog
        said = dialog.error_label.text()
        assert "No usable keyring: a secret environment value would be lost" in said
        assert "Environment (not secret)" in said
        assert "mooring " not in said  # what to do in the window, not a command line
        assert await ui_host.host.find_server("memory") is None
        assert dialog.move_button.isVisible()
        assert dialog.move_button.accessibleName()

        dialog.move_button.click()  # the user says the value is not a secret
        assert dialog.env_edit.toPlainText() == ""
        assert dialog.plain_env_edit.toPlainText() == "MEMORY_FILE_PATH=/srv/notes/memory.json"
        dialog.add_button.click()
        await adding
        stored = await ui_host.host.server("memory")
        assert stored.env == {"MEMORY_FILE_PATH": "/srv/notes/memory.json"}
        assert stored.env_refs == {"TOKEN": "MY_TOKEN"}

        # Editing shows each value where it belongs.
        panel.select_server_alias("memory")
        editing = window.jobs.start(panel.edit_selected())
        await until(lambda: bool(opened), panel.dialog_opened)
        editor = opened.pop()
        assert isinstance(editor, AddServerDialog)
        assert editor.plain_env_edit.toPlainText() == "MEMORY_FILE_PATH=/srv/notes/memory.json"
        assert editor.env_refs_edit.toPlainText() == "TOKEN=MY_TOKEN"
        assert editor.env_edit.toPlainText() == ""
        editor.reject()
        await editing


async def test_a_configuration_file_is_chosen_and_imported_in_the_window(
    tmp_path: Path, qtbot: QtBot, home: Path
) -> None:
    config = tmp_path / "elsewhere.json"
    config.write_text(json.dumps({"mcpServers": {"notes": {"command": "notes-server"}}}))
    async with open_window(tmp_path, qtbot) as (window, _ui_host):
        panel = window.servers
        opened: list[object] = []
        panel.dialog_opened.connect(opened.append)

        async def pick(_parent: QWidget) -> str:
            return str(config)

        panel.pick_file = pick
        importing = window.jobs.start(panel.import_interactively())
        await until(lambda: bool(opened), panel.dialog_opened)
        dialog = opened.pop()
        assert isinstance(dialog, ImportDialog)
        assert "mooring " not in dialog.intro.text()
        assert "Import a file…" in dialog.intro.text()
        assert dialog.file_button.accessibleName() == "Import a file"
        dialog.file_button.click()
        await until(lambda: bool(dialog.entry_items()), dialog.choice_changed)
        assert [item.text() for item in dialog.entry_items()] == ["notes"]
        dialog.import_button.click()
        await importing
        assert "notes" in [v.server.alias for v in panel.model.views()]
