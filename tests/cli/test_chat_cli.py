"""``mooring chat`` and ``mooring conversations``: the handlers in-process with the host's real
services and the demo server as a subprocess (the model scripted, no terminal), and the real
``mooring`` process for what needs no model."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from mooring.bootstrap import build_host
from mooring.cli.commands import handler_for
from mooring.cli.context import CliContext
from mooring.cli.context import Terminal as Streams
from mooring.cli.exit_codes import ExitCode
from mooring.cli.parser import build_parser
from mooring.core.approval.rules import ApprovalRule, Decision, Scope
from mooring.core.chat import ProviderFailure
from mooring.core.clock import SystemClock
from mooring.core.conversation import Conversation, Message, Role
from mooring.core.errors import KnownError
from mooring.core.ids import new_id
from mooring.services.chat import ChatService
from mooring.services.host import Host
from mooring.settings.paths import Paths
from mooring.settings.store import Settings
from mooring.storage.conversations import SqlConversations
from mooring.storage.db import Database
from tests.helpers.processes import run_mooring
from tests.helpers.scripted_model import ScriptedModel
from tests.services.conftest import SAMPLES, demo_definition

pytestmark = pytest.mark.anyio


@dataclass
class Terminal:
    """One data folder and its services; runs command lines through the real handlers."""

    ctx: CliContext
    model: ScriptedModel
    chat: ChatService
    host: Host
    db: Database
    paths: Paths

    async def run(self, *argv: str) -> tuple[ExitCode, str, str]:
        args = build_parser().parse_args(list(argv))
        self.ctx.as_json = args.json
        out, err = io.StringIO(), io.StringIO()
        self.ctx.terminal = Streams(out=out, err=err, stdin=io.StringIO())
        code = await handler_for(args, traces_dir=Path("unused"))(self.ctx, args)
        return code, out.getvalue(), err.getvalue()

    async def json(self, *argv: str, expect: ExitCode = ExitCode.OK) -> Any:
        code, out, err = await self.run(*argv, "--json")
        assert code is expect, (code, out, err)
        return json.loads(out)


@pytest.fixture
async def terminal(tmp_path: Path, chat_model: ScriptedModel) -> AsyncIterator[Terminal]:
    root = tmp_path / "data"
    paths = Paths(data_dir=root, config_dir=root / "config", log_dir=tmp_path / "logs")
    settings = Settings({"mcp.request_timeout_ms": 10_000, "mcp.call_timeout_ms": 30_000})
    db = Database.open(root / "mooring.sqlite3")
    model = chat_model
    # No approval prompt (no terminal): approvals follow the rules.
    host = build_host(paths, settings, db, models=(model.resolve, model.factory))
    assert host.chat is not None
    # The demo server's own samples folder: what it lists does not depend on what developer
    # targets (`make samples` writes resources/samples/generated/) left in the tree.
    samples = tmp_path / "samples"
    samples.mkdir()
    shutil.copy(SAMPLES / "suppliers_clean.csv", samples)
    demo = demo_definition(
        tmp_path / "demo-store.sqlite3", tmp_path / "demo-requests.log", samples_dir=samples
    )
    await host.catalog.add_server(demo)
    ctx = CliContext(host=host, terminal=Streams(stdin=io.StringIO()))
    try:
        yield Terminal(ctx, model, host.chat, host, db, paths)
    finally:
        with anyio.fail_after(30):
            await host.stop()
        db.close()


async def allow_all(terminal: Terminal) -> None:
    [server] = await terminal.host.catalog.list_servers()
    await terminal.host.rules.add_rule(
        ApprovalRule(
            id=new_id(),
            server_identity=server.identity,
            tool_pattern="*",
            decision=Decision.ALLOW,
            scope=Scope.ALWAYS,
            created_at=SystemClock().now(),
        )
    )


async def test_chat_json_prints_one_object_with_the_reply(terminal: Terminal) -> None:
    terminal.model.reply("Hello from the model.")
    shown = await terminal.json("chat", "hello", "there")
    assert shown == {
        "conversation_id": shown["conversation_id"],
        "reply": "Hello from the model.",
        "tool_rounds": [],
        "error": None,
        "interrupted": False,
    }
    assert terminal.model.requests[0].messages[-1].content == "hello there"

    terminal.model.reply("Still here.")
    again = await terminal.json("chat", "--conversation", shown["conversation_id"][:8], "more")
    assert again["conversation_id"] == shown["conversation_id"]
    assert [m.content for m in terminal.model.requests[-1].messages] == [
        "hello there",
        "Hello from the model.",
        "more",
    ]


async def test_chat_streams_the_reply_and_shows_tool_rounds_on_the_terminal(
    terminal: Terminal,
) -> None:
    await allow_all(terminal)
    terminal.model.call("demo__list_sample_files", {}).reply("Three files.")
    code, out, err = await terminal.run("chat", "which files?")
    assert code is ExitCode.OK
    assert "→ demo__list_sample_files {}" in out
    assert "  [tool] suppliers_clean.csv (" in out  # the first line of what the tool returned
    assert out.rstrip().endswith("Three files.")
    assert err.startswith("conversation ")


async def test_chat_wait_follows_the_task_and_continues_with_its_result(
    terminal: Terminal,
) -> None:
    await allow_all(terminal)
    path = str(SAMPLES / "suppliers_clean.csv")
    terminal.model.call("demo__import_suppliers", {"path": path}).reply("Started it.")
    terminal.model.reply("The import is done.")
    shown = await terminal.json("chat", "--wait", "import the clean file")

    assert shown["reply"] == "The import is done."
    assert shown["error"] is None
    [tool_round] = shown["tool_rounds"]
    assert tool_round["server"] == "demo"
    assert tool_round["tool"] == "import_suppliers"
    assert tool_round["approval"] == "auto_allowed"
    assert tool_round["task_id"]
    assert tool_round["state"] == "completed"
    followup = terminal.model.requests[-1].messages[-1].content
    assert tool_round["task_id"] in followup
    assert "completed" in followup


async def test_without_a_terminal_or_a_rule_the_model_hears_the_call_was_not_approved(
    terminal: Terminal,
) -> None:
    terminal.model.call("demo__list_sample_files", {}).reply("I could not get approval.")
    code, out, err = await terminal.run("chat", "--json", "list files")
    assert code is ExitCode.OK
    assert err == ""  # --json: one object on stdout, nothing else
    [tool_round] = json.loads(out)["tool_rounds"]
    assert tool_round["approval"] == "aborted"
    assert tool_round["state"] == "denied"
    assert terminal.model.requests[-1].messages[-1].is_error


async def test_a_provider_failure_is_an_error_in_the_json_and_the_exit_code(
    terminal: Terminal,
) -> None:
    terminal.model.fail(ProviderFailure.AUTH, "401 bad key")
    shown = await terminal.json("chat", "hi", expect=ExitCode.PROBLEM)
    assert "refused the API key" in shown["error"]
    assert shown["reply"] == ""


async def test_conversations_commands_list_show_search_rename_export_delete(
    terminal: Terminal, tmp_path: Path
) -> None:
    terminal.model.reply("Cormorants nest on the pier.")
    first = (await terminal.json("chat", "tell me about seabirds"))["conversation_id"]
    terminal.model.reply("Noted.")
    second = (await terminal.json("chat", "remember the harbour"))["conversation_id"]

    listed = await terminal.json("conversations", "list")
    assert [c["id"] for c in listed] == [second, first]
    assert listed[1]["title"] == "tell me about seabirds"

    shown = await terminal.json("conversations", "show", first[:10])
    assert [m["content"] for m in shown["messages"]] == [
        "tell me about seabirds",
        "Cormorants nest on the pier.",
    ]
    hits = await terminal.json("conversations", "search", "cormorant")
    assert [h["conversation_id"] for h in hits] == [first]

    renamed = await terminal.json("conversations", "rename", first, "Birds", "of", "the", "pier")
    assert renamed["title"] == "Birds of the pier"
    assert [h["conversation_id"] for h in await terminal.json("conversations", "search", "pier")]

    target = tmp_path / "export.json"
    written = await terminal.json(
        "conversations", "export", first, "--format", "json", "-o", str(target)
    )
    assert written["path"] == str(target)
    exported = json.loads(target.read_text())
    assert exported["conversation"]["title"] == "Birds of the pier"
    code, markdown, _ = await terminal.run("conversations", "export", first, "--format", "md")
    assert code is ExitCode.OK
    assert markdown.startswith("# Birds of the pier")

    options = await terminal.json("conversations", "set", first, "--auto-continue", "on")
    assert options["auto_continue"] is True

    assert await terminal.json("conversations", "delete", first) == {"deleted": first}
    assert [c["id"] for c in await terminal.json("conversations", "list")] == [second]
    assert await terminal.json("conversations", "search", "cormorant") == []
    with pytest.raises(KnownError, match="No conversation"):
        await terminal.run("conversations", "show", first)


async def test_unknown_conversations_and_empty_titles_are_clear_errors(terminal: Terminal) -> None:
    with pytest.raises(KnownError, match="No conversation called 'nope'"):
        await terminal.run("conversations", "show", "nope")
    terminal.model.reply("ok")
    cid = (await terminal.json("chat", "hi"))["conversation_id"]
    with pytest.raises(KnownError, match="title cannot be empty"):
        await terminal.run("conversations", "rename", cid, " ")
    with pytest.raises(KnownError, match="message is empty"):
        await terminal.run("chat", "--conversation", cid, "  ")
    assert len(await terminal.chat.messages(cid)) == 2  # nothing was stored


async def test_new_conversations_follow_the_continue_automatically_setting(
    terminal: Terminal,
) -> None:
    terminal.model.reply("ok")
    made = (await terminal.json("chat", "hi"))["conversation_id"]
    assert (await terminal.json("conversations", "show", made))["conversation"][
        "auto_continue"
    ] is False
    eager_host = build_host(
        terminal.paths,
        Settings({"chat.continue_automatically": True}),
        terminal.db,
        models=(terminal.model.resolve, terminal.model.factory),
    )
    eager = eager_host.chat
    assert eager is not None
    assert (await eager.create()).auto_continue is True
    assert (await eager.create(auto_continue=False)).auto_continue is False


# -- the real process --------------------------------------------------------------------------


def seed(data_dir: Path) -> str:
    """A conversation written by this Mooring's storage, as a window would have left it."""
    db = Database.open(data_dir / "mooring.sqlite3")
    try:
        book = SqlConversations(db, SystemClock())
        now = SystemClock().now()
        conv = Conversation(
            id=new_id(), title="Harbour \x1b[31mlog", created_at=now, updated_at=now
        )

        async def write() -> None:
            await book.create_conversation(conv)
            await book.append_messages(
                [
                    Message(
                        id=new_id(),
                        conversation_id=conv.id,
                        role=Role.USER,
                        content="when does the ferry leave",
                        created_at=now,
                    )
                ]
            )

        asyncio.run(write())
    finally:
        db.close()
    return conv.id


def test_the_mooring_process_lists_searches_and_exports_conversations(tmp_path: Path) -> None:
    data = tmp_path / "mooring"
    conv_id = seed(data)

    done = run_mooring("conversations", "list", data_dir=data)
    assert done.returncode == 0, done.stderr
    assert "Harbour log" in done.stdout  # the escape sequence never reaches the terminal
    assert "\x1b" not in done.stdout
    done = run_mooring("conversations", "search", "ferry", "--json", data_dir=data)
    assert done.returncode == 0, done.stderr
    assert [h["conversation_id"] for h in json.loads(done.stdout)] == [conv_id]
    target = tmp_path / "out.md"
    done = run_mooring("conversations", "export", conv_id, "-o", str(target), data_dir=data)
    assert done.returncode == 0, done.stderr
    assert "when does the ferry leave" in target.read_text()


def test_the_mooring_process_says_no_provider_is_configured_and_stores_nothing(
    tmp_path: Path,
) -> None:
    data = tmp_path / "mooring"
    done = run_mooring("chat", "--json", "hello", data_dir=data)
    assert done.returncode == 1
    assert "No model provider is configured" in done.stderr
    assert "mooring providers add" in done.stderr
    assert "Traceback" not in done.stderr
    listed = run_mooring("conversations", "list", "--json", data_dir=data)
    assert json.loads(listed.stdout) == []
