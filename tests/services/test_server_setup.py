"""Setting servers up through the host: other hosts' configurations found on this machine,
editing, tool access, accounts and OAuth sign-in — with real servers and a real SQLite file."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest

from mooring.core.errors import KnownError
from mooring.core.events import ServersDidChange
from mooring.core.server_import import EntryStatus
from mooring.core.tasks.states import LocalState
from mooring.services.host import ServerSpec
from tests.helpers.authserver import AuthServer, running_auth_server
from tests.mcp.servers import DemoServer
from tests.services.conftest import SAMPLES, HostFactory, demo_definition

pytestmark = pytest.mark.anyio


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder of this test's own (XDG config under it)."""
    folder = tmp_path / "home"
    (folder / ".config").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder / ".config"))
    return folder


def write(path: Path, document: object | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


@pytest.mark.skipif(sys.platform != "linux", reason="the Linux locations")
async def test_configs_found_at_home_are_previewed_then_the_chosen_ones_imported_with_secrets_in_the_keyring(  # noqa: E501
    hosts: HostFactory, home: Path, tmp_path: Path
) -> None:
    host = await hosts()
    requests = tmp_path / "imported-requests.log"
    demo_args = ["-m", "mooring.demo_server", "--store", str(tmp_path / "imported.sqlite3")]
    write(
        home / ".config" / "Claude" / "claude_desktop_config.json",
        {
            "mcpServers": {
                "suppliers": {
                    "command": sys.executable,
                    "args": demo_args,
                    # A value that only reaches the server through the keyring.
                    "env": {"MOORING_DEMO_REQUEST_LOG": str(requests)},
                },
                "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
            }
        },
    )
    # VS Code's settings may carry comments and trailing commas.
    write(
        home / ".config" / "Code" / "User" / "settings.json",
        '{\n  // mine\n  "mcp": {"servers": {"web": {"type": "http", "url": "http://127.0.0.1:9/mcp",'
        ' "headers": {"Authorization": "Bearer s3cret"}},},},\n}',
    )
    write(home / ".cursor" / "mcp.json", "{ not json")
    existing = demo_definition(tmp_path / "store.sqlite3", tmp_path / "requests.log")
    await host.store.add_server(existing)
    write(
        home / ".config" / "Code" / "User" / "mcp.json",
        {"servers": {"again": {"command": existing.command, "args": list(existing.args)}}},
    )

    found = await host.host.server_desk.find_configs()

    by_app = {(p.source.app, Path(p.source.path).name): p for p in found}
    assert set(by_app) == {
        ("Claude Desktop", "claude_desktop_config.json"),
        ("VS Code", "settings.json"),
        ("VS Code", "mcp.json"),
        ("Cursor", "mcp.json"),
    }
    claude = by_app["Claude Desktop", "claude_desktop_config.json"]
    assert [(e.name, e.status) for e in claude.entries] == [
        ("suppliers", EntryStatus.NEW),
        ("old", EntryStatus.INVALID),
    ]
    assert "SSE" in claude.entries[1].reason
    [again] = by_app["VS Code", "mcp.json"].entries
    assert again.status is EntryStatus.PRESENT
    assert "'demo'" in again.reason
    assert by_app["Cursor", "mcp.json"].problem is not None
    assert "JSON" in by_app["Cursor", "mcp.json"].problem
    [web] = by_app["VS Code", "settings.json"].entries
    assert web.status is EntryStatus.NEW
    assert await host.store.find_server("suppliers") is None  # a preview changes nothing

    changes: list[ServersDidChange] = []
    host.events.on(ServersDidChange, changes.append)
    outcome = await host.host.server_desk.import_entries([claude.entries[0], web, again])

    assert sorted(s.alias for s in outcome.added) == ["suppliers", "web"]
    assert outcome.skipped == [("again", again.reason)]
    assert changes
    assert {s.id for s in outcome.added} <= set(changes[-1].server_ids)
    suppliers = await host.host.server("suppliers")
    assert suppliers.env == {"MOORING_DEMO_REQUEST_LOG": ""}  # the name only, in the table
    assert (await host.host.server("web")).headers == {"Authorization": ""}
    database = b"".join(f.read_bytes() for f in sorted(tmp_path.glob("mooring.sqlite3*")))  # noqa: ASYNC240  # a test's own files
    assert b"s3cret" not in database
    assert str(requests).encode() not in database
    # The imported server runs with its environment from the keyring.
    tools = await host.host.tools.tools(suppliers)
    assert tools is not None
    assert "import_suppliers" in {t.name for t in tools}
    assert requests.exists()  # the server got the value that was only in the keyring

    # Importing the same entries again adds nothing and says why.
    again_outcome = await host.host.server_desk.import_entries([claude.entries[0]])
    assert again_outcome.added == []
    assert again_outcome.skipped == [("suppliers", "a server of that name exists already")]


async def test_a_file_that_cannot_be_read_is_a_clear_error(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    with pytest.raises(KnownError) as refused:
        await host.host.server_desk.preview_file(str(tmp_path / "missing.json"))
    assert refused.value.code == "not_found"


async def test_an_edited_server_keeps_its_id_and_a_re_pointed_one_loses_trust(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    added = await host.host.server_desk.add(
        ServerSpec(
            alias="web",
            url="http://127.0.0.1:9/mcp",
            headers={"Authorization": "Bearer one", "X-Team": "blue"},
            trusted=True,
        )
    )
    secrets = host.host.secrets

    # Renamed, a header value kept (left empty), one dropped, a tool hidden: same server.
    edited = await host.host.server_desk.update(
        "web",
        ServerSpec(
            alias="intranet",
            url="http://127.0.0.1:9/mcp",
            headers={"Authorization": ""},
            trusted=True,
            hidden_tools=("delete_*",),
        ),
    )
    assert edited.id == added.id
    assert edited.trusted
    assert (await host.host.server("intranet")).hidden_tools == ("delete_*",)
    assert await host.store.find_server("web") is None
    assert secrets.get("server-headers", f"{added.id}:Authorization") == "Bearer one"
    assert secrets.get("server-headers", f"{added.id}:X-Team") is None

    # Pointed elsewhere: trust belongs to what the server is, so it is dropped.
    moved = await host.host.server_desk.update(
        "intranet",
        ServerSpec(alias="intranet", url="http://127.0.0.1:10/mcp", trusted=True),
    )
    assert not moved.trusted
    assert secrets.get("server-headers", f"{added.id}:Authorization") is None

    await host.host.server_desk.add(ServerSpec(alias="other", url="http://127.0.0.1:11/mcp"))
    with pytest.raises(KnownError) as clash:
        await host.host.server_desk.update(
            "other", ServerSpec(alias="Intranet", url="http://127.0.0.1:11/mcp")
        )
    assert clash.value.code == "exists"
    assert (await host.host.server("other")).url == "http://127.0.0.1:11/mcp"


async def test_a_disabled_tool_is_refused_and_enabling_it_again_drops_the_allowed_list(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    server = demo_definition(tmp_path / "store.sqlite3", tmp_path / "requests.log")
    await host.store.add_server(server)
    tools = await host.host.tools.tools(server)
    assert tools is not None
    names = {t.name for t in tools}
    assert "import_suppliers" in names

    limited = await host.host.server_desk.set_tool_access("demo", "import_suppliers", enabled=False)
    assert limited.allowed_tools is not None
    assert set(limited.allowed_tools) == names - {"import_suppliers"}
    refused = await host.host.call(
        limited, "import_suppliers", {"path": str(SAMPLES / "suppliers_clean.csv")}
    )
    assert refused.state is LocalState.DENIED
    assert host.asked == []  # refused by the guards, never asked

    hidden = await host.host.server_desk.set_tool_access("demo", "import_suppliers", hidden=True)
    assert hidden.hidden_tools == ("import_suppliers",)
    shown = await host.host.server_desk.set_tool_access("demo", "import_suppliers", hidden=False)
    assert shown.hidden_tools == ()
    whole = await host.host.server_desk.set_tool_access("demo", "import_suppliers", enabled=True)
    assert whole.allowed_tools is None  # every tool allowed again: no list, new tools too
    assert (await host.host.server("demo")).allowed_tools is None


@pytest.fixture
def auth() -> Iterator[AuthServer]:
    with running_auth_server() as server:
        yield server


async def test_an_account_is_added_signed_in_through_the_browser_and_signed_out(
    hosts: HostFactory, tmp_path: Path, auth: AuthServer
) -> None:
    demo = DemoServer(tmp_path / "web")
    demo.root.mkdir()
    try:
        url = demo.start_http("--oauth-issuer", auth.issuer)
        host = await hosts()
        await host.host.server_desk.add(ServerSpec(alias="web", url=url))
        await host.host.account_desk.add("web", "work")
        with pytest.raises(KnownError):
            await host.host.account_desk.add("web", "work")
        accounts = await host.host.account_desk.accounts("web")
        assert [(a.label, a.signed_in) for a in accounts] == [
            ("default", False),
            ("work", False),
        ]
        opened: list[str] = []

        async def browser(address: str) -> None:
            # What the system browser does: follow the redirects to the loopback listener.
            opened.append(address)
            async with httpx2.AsyncClient(timeout=10) as client:
                page = await client.get(address, follow_redirects=True)
            assert page.status_code == 200, page.text

        with anyio.fail_after(60):
            await host.host.account_desk.sign_in("web", "work", browser)
        assert len(opened) == 1
        accounts = await host.host.account_desk.accounts("web")
        assert [(a.label, a.signed_in) for a in accounts] == [
            ("default", False),
            ("work", True),
        ]
        await host.host.account_desk.sign_out("web", "work")
        assert [a.signed_in for a in await host.host.account_desk.accounts("web")] == [False, False]
        await host.host.account_desk.remove("web", "work")
        assert [a.label for a in await host.host.account_desk.accounts("web")] == ["default"]
        # A stdio server has nothing to sign in to.
        await host.host.server_desk.add(ServerSpec(alias="local", command=sys.executable))
        with pytest.raises(KnownError) as stdio:
            await host.host.account_desk.sign_in("local", None, browser)
        assert stdio.value.code == "usage"
    finally:
        demo.stop_all()


async def test_a_program_that_cannot_be_found_is_refused_on_add_and_edit_as_the_cli_refuses_it(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    with pytest.raises(KnownError) as missing:
        await host.host.server_desk.add(ServerSpec(alias="ghost", command="./no-such-server"))
    assert missing.value.code == "usage"
    assert missing.value.message == (
        "The command './no-such-server' was not found (or is not executable)."
    )
    assert missing.value.hint == "Give the full path of the program, or install it first."
    with pytest.raises(KnownError) as off_path:
        await host.host.server_desk.add(
            ServerSpec(alias="ghost", command="no-such-mcp-server-7f3a")
        )
    assert off_path.value.message == "The command 'no-such-mcp-server-7f3a' was not found on PATH."
    with pytest.raises(KnownError) as no_folder:
        await host.host.server_desk.add(
            ServerSpec(alias="ghost", command=sys.executable, cwd=str(tmp_path / "nowhere"))
        )
    assert "is not an existing folder" in no_folder.value.message
    with pytest.raises(KnownError) as no_host:
        await host.host.server_desk.add(ServerSpec(alias="ghost", url="http:///mcp"))
    assert "names no host" in no_host.value.message
    assert await host.store.find_server("ghost") is None

    # Found relative to the working folder, as the server would be started.
    program = tmp_path / "bin" / "server"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    added = await host.host.server_desk.add(
        ServerSpec(alias="local", command="./server", cwd=str(program.parent))
    )
    assert added.command == "./server"

    # Edited to a missing program: refused, the server as it was.
    with pytest.raises(KnownError) as edit:
        await host.host.server_desk.update(
            "local", ServerSpec(alias="local", command="./no-such-server")
        )
    assert "'./no-such-server' was not found" in edit.value.message
    assert (await host.host.server("local")).command == "./server"
    # A server whose program is gone meanwhile can still be renamed (its command unchanged).
    program.unlink()
    renamed = await host.host.server_desk.update(
        "local", ServerSpec(alias="renamed", command="./server", cwd=str(program.parent))
    )
    assert renamed.alias == "renamed"
