"""The tool palette (Ctrl+K) over a real host and real servers: what it chooses first (a ready
server, a read-only or at least non-destructive tool) and its keyboard order (the tool chooser,
the tool's argument fields, then Run and Close)."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from mooring.core.ports import ConnectionState
from mooring.core.servers import ServerDefinition
from mooring.core.views import ServerSpec
from mooring.ui.dialogs.palette import ToolPalette
from mooring.ui.widgets.schema_form import SchemaForm
from tests.ui.conftest import UiHost, open_ui_host, until
from tests.ui.test_main_window import unnamed

pytestmark = pytest.mark.anyio

WRITER = '''
from mcp.server import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("writer")


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
def a_drop_everything() -> str:
    """Erase every note."""
    return "gone"


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False))
def b_write_note(title: str, text: str, pinned: bool = False) -> str:
    """Add a note."""
    return title


if __name__ == "__main__":
    server.run()
'''


async def add_writer(ui: UiHost, tmp_path: Path) -> ServerDefinition:
    """A real stdio server with no read-only tool: a destructive one sorting first, then a
    non-destructive one with three arguments; connected (ready) before it returns."""
    script = tmp_path / "writer_server.py"
    script.write_text(WRITER)
    writer = await ui.host.server_desk.add(
        ServerSpec(alias="a-writer", command=sys.executable, args=(str(script),))
    )
    tools = await ui.host.server_desk.tools(writer)
    assert tools is not None
    assert sorted(t.name for t in tools) == ["a_drop_everything", "b_write_note"]
    return writer


def form_of(palette: ToolPalette) -> SchemaForm | None:
    """The palette's form now (a call, so that the type checker does not keep an earlier
    check of ``palette.form``)."""
    return palette.form


async def opened_palette(ui: UiHost, qtbot: QtBot) -> ToolPalette:
    palette = ToolPalette(ui.host)
    qtbot.addWidget(palette)
    palette.show()
    await palette.load()
    return palette


def tab_from(palette: ToolPalette, widget: QWidget) -> QWidget | None:
    """Press Tab in ``widget``; the widget that has the palette's focus then."""
    widget.setFocus()
    assert palette.focusWidget() is widget
    QTest.keyClick(widget, Qt.Key.Key_Tab)
    return palette.focusWidget()


async def test_tab_goes_from_the_tool_chooser_through_the_arguments_to_run(
    tmp_path: Path, qtbot: QtBot
) -> None:
    async with open_ui_host(tmp_path) as ui:
        await add_writer(ui, tmp_path)
        palette = await opened_palette(ui, qtbot)
        assert palette.choose_tool("b_write_note")
        assert palette.form is not None
        fields = list(palette.form.inputs.values())
        assert len(fields) == 3  # title, text, pinned
        assert tab_from(palette, palette.tool_list) is fields[0]
        for before, after in itertools.pairwise(fields):
            assert tab_from(palette, before) is after
        assert tab_from(palette, fields[-1]) is palette.run_button
        assert tab_from(palette, palette.run_button) is palette.close_button
        assert unnamed(palette) == []
        # A tool without arguments: straight from the chooser to Run.
        assert palette.choose_tool("a_drop_everything")
        assert tab_from(palette, palette.tool_list) is palette.run_button

        # The order is built again for each tool's form, on another server too.
        palette.choose_server("demo")
        await until(lambda: palette.choose_tool("import_suppliers"), palette.tools_shown)
        assert palette.form is not None
        [path] = palette.form.inputs.values()
        assert tab_from(palette, palette.tool_list) is path
        assert tab_from(palette, path) is palette.run_button
        # A schema without a form gets a JSON editor: in the same place of the order.
        assert palette.choose_tool("list_suppliers")
        assert form_of(palette) is None
        assert palette.json_edit is not None
        assert tab_from(palette, palette.tool_list) is palette.json_edit
        assert tab_from(palette, palette.json_edit) is palette.run_button
        assert unnamed(palette) == []
        palette.reject()


async def test_the_first_tool_chosen_is_a_read_only_one(tmp_path: Path, qtbot: QtBot) -> None:
    async with open_ui_host(tmp_path) as ui:
        palette = await opened_palette(ui, qtbot)
        names = [palette.tool_list.item(r).text() for r in range(palette.tool_list.count())]
        assert names[0] == "delete_supplier"  # it sorts first, and is destructive
        chosen = palette.tool()
        assert chosen is not None
        assert chosen.name == "list_sample_files"
        assert chosen.annotations.read_only is True
        # Finding tools keeps to that: of the matches, a read-only one.
        palette.filter_edit.setText("supplier")
        chosen = palette.tool()
        assert chosen is not None
        assert chosen.name == "list_suppliers"
        palette.reject()


async def test_without_a_read_only_tool_a_non_destructive_one_is_chosen(
    tmp_path: Path, qtbot: QtBot
) -> None:
    async with open_ui_host(tmp_path) as ui:
        await add_writer(ui, tmp_path)
        palette = await opened_palette(ui, qtbot)
        chosen_server = palette.server()
        assert chosen_server is not None
        assert chosen_server.alias == "a-writer"
        chosen = palette.tool()
        assert chosen is not None
        assert chosen.name == "b_write_note"
        palette.reject()


async def test_the_palette_opens_on_a_ready_server_not_a_failed_one_sorting_first(
    tmp_path: Path, qtbot: QtBot
) -> None:
    async with open_ui_host(tmp_path) as ui:
        broken = await ui.host.server_desk.add(
            ServerSpec(
                alias="aaa-broken",
                command=sys.executable,
                args=("-c", "import sys; sys.exit(2)"),
            )
        )
        assert await ui.host.server_desk.tools(broken) is None  # it connects, and fails
        assert await ui.host.server_desk.tools(ui.demo) is not None
        states = {v.server.alias: v.connection for v in await ui.host.server_desk.servers()}
        assert states["demo"] is not None
        assert states["demo"].state is ConnectionState.READY
        assert states["aaa-broken"] is not None
        assert states["aaa-broken"].state is not ConnectionState.READY

        palette = await opened_palette(ui, qtbot)
        assert palette.server_combo.itemText(0) == "aaa-broken"  # still listed, by name
        chosen_server = palette.server()
        assert chosen_server is not None
        assert chosen_server.alias == "demo"
        assert palette.server_combo.currentText() == "demo"
        assert palette.tool_list.count() > 0
        chosen = palette.tool()
        assert chosen is not None
        assert chosen.annotations.read_only is True
        palette.reject()


async def test_a_tool_the_server_hides_is_never_offered_even_when_the_filter_matches(
    tmp_path: Path, qtbot: QtBot
) -> None:
    async with open_ui_host(tmp_path) as ui:
        demo = await ui.host.server("demo")
        spec = ServerSpec(
            alias=demo.alias,
            command=demo.command,
            args=demo.args,
            cwd=demo.cwd,
            plain_env={k: v for k, v in demo.env.items() if v},
            hidden_tools=("delete_*",),  # a pattern, as `--hide-tool` takes
        )
        await ui.host.server_desk.update("demo", spec)
        palette = await opened_palette(ui, qtbot)

        def shown() -> list[str]:
            items = (palette.tool_list.item(r) for r in range(palette.tool_list.count()))
            return [item.text() for item in items if not item.isHidden()]

        assert "list_sample_files" in shown()
        assert "delete_supplier" not in shown()
        palette.filter_edit.setText("delete")
        assert shown() == []
        assert not palette.choose_tool("delete_supplier")
        palette.filter_edit.setText("supplier")
        assert "delete_supplier" not in shown()
        palette.reject()
