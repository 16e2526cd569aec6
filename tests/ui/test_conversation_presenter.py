"""The Conversations view's use cases without a widget: the presenter over a real host and a
real SQLite file, the model scripted. A deleted conversation leaves the list at once, comes
back whole with Undo, and is deleted for real when its undo time runs out, when another is
deleted or when the view closes; a conversation whose reply is being written is not deleted."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from mooring.bootstrap import build_host
from mooring.core.conversation import Conversation
from mooring.core.errors import KnownError
from mooring.core.host_api import ChatApi
from mooring.settings.paths import Paths
from mooring.settings.store import Settings
from mooring.storage.db import Database
from mooring.ui.presenters.conversations import ConversationPresenter, file_name
from tests.helpers.scripted_model import ScriptedModel

pytestmark = pytest.mark.anyio


class Screen:
    """The presenter's view, recording what it is told."""

    def __init__(self) -> None:
        self.said: list[str] = []
        self.undo: list[str | None] = []
        self.gone: list[str] = []
        self.reloads = 0
        self.ended: list[str] = []
        self.changed = asyncio.Event()
        self.jobs: set[asyncio.Future[None]] = set()

    def say(self, text: str) -> None:
        self.said.append(text)

    def show_undo(self, conversation: Conversation | None) -> None:
        self.undo.append(conversation.id if conversation else None)

    def deleted_for_good(self, conversation_id: str) -> None:
        self.gone.append(conversation_id)
        self.changed.set()

    def schedule_reload(self) -> None:
        self.reloads += 1

    def busy_changed(self, ended: str | None = None) -> None:
        if ended is not None:
            self.ended.append(ended)
        self.changed.set()

    def start(self, coro: object) -> None:
        assert asyncio.iscoroutine(coro)
        task = asyncio.ensure_future(coro)
        self.jobs.add(task)
        task.add_done_callback(self.jobs.discard)

    async def until(self, check: Callable[[], bool]) -> None:
        """Wait (bounded) until ``check()`` holds, checking whenever the screen is told."""
        async with asyncio.timeout(30):
            while not check():
                self.changed.clear()
                await self.changed.wait()


@contextlib.asynccontextmanager
async def presenter_over_host(
    tmp_path: Path, model: ScriptedModel
) -> AsyncIterator[tuple[ConversationPresenter, Screen, ChatApi]]:
    data = tmp_path / "data"
    data.mkdir()
    paths = Paths(data_dir=data, config_dir=data / "config", log_dir=data / "logs", overridden=True)
    db = Database.open(paths.database)
    host = build_host(paths, Settings({}), db, models=(model.resolve, model.factory))
    assert host.chat is not None
    screen = Screen()
    presenter = ConversationPresenter(host.chat, host.events, screen, screen.start)
    try:
        yield presenter, screen, host.chat
    finally:
        presenter.close()
        for job in list(screen.jobs):
            job.cancel()
        await host.stop()
        db.close()


async def listed(presenter: ConversationPresenter) -> list[str]:
    rows = await presenter.listing()
    assert rows is not None
    return [r.conversation.title for r in rows]


async def stored(chat: ChatApi) -> list[str]:
    return [c.title for c in await chat.list_conversations()]


async def test_a_deleted_conversation_leaves_the_list_at_once_and_undo_brings_it_back(
    tmp_path: Path, chat_model: ScriptedModel
) -> None:
    async with presenter_over_host(tmp_path, chat_model) as (presenter, screen, chat):
        kept = await chat.create(title="Kept")
        gone = await chat.create(title="Gone")
        opened = await presenter.open(gone.id)
        assert opened is not None
        assert opened.conversation.id == gone.id

        await presenter.delete(gone.id)
        assert presenter.current_id is None  # it is no longer shown
        assert presenter.shown is None
        assert await listed(presenter) == ["Kept"]
        assert sorted(await stored(chat)) == ["Gone", "Kept"]  # nothing is lost yet
        assert screen.undo == [gone.id]
        assert screen.said[-1] == "Deleted Gone. Undo brings it back."

        back = presenter.undo()
        assert back is not None
        assert back.id == gone.id
        assert screen.undo == [gone.id, None]
        assert sorted(await listed(presenter)) == ["Gone", "Kept"]
        assert presenter.undo() is None  # nothing more to bring back

        await presenter.commit_deletes()  # the view closes: nothing waits, nothing goes
        assert sorted(await stored(chat)) == ["Gone", "Kept"]
        assert screen.gone == []
        assert kept.id != gone.id


async def test_a_deletion_is_done_for_real_when_its_undo_time_runs_out(
    tmp_path: Path, chat_model: ScriptedModel
) -> None:
    async with presenter_over_host(tmp_path, chat_model) as (presenter, screen, chat):
        gone = await chat.create(title="Gone")
        presenter.undo_s = 0
        await presenter.delete(gone.id)
        await screen.until(lambda: screen.gone == [gone.id])
        assert await stored(chat) == []
        assert screen.undo == [gone.id, None]
        assert presenter.undo() is None


async def test_deleting_another_deletes_the_earlier_one_for_real(
    tmp_path: Path, chat_model: ScriptedModel
) -> None:
    async with presenter_over_host(tmp_path, chat_model) as (presenter, screen, chat):
        first = await chat.create(title="First")
        second = await chat.create(title="Second")
        await presenter.delete(first.id)
        await presenter.delete(second.id)
        assert screen.gone == [first.id]
        assert await stored(chat) == ["Second"]  # the second still waits for its undo
        assert presenter.pending() == [second.id]
        back = presenter.undo()
        assert back is not None
        assert back.id == second.id
        assert presenter.undo() is None  # the first is gone for good


async def test_closing_the_view_deletes_what_waits_for_its_undo(
    tmp_path: Path, chat_model: ScriptedModel
) -> None:
    async with presenter_over_host(tmp_path, chat_model) as (presenter, screen, chat):
        gone = await chat.create(title="Gone")
        await presenter.delete(gone.id)
        await presenter.commit_deletes()
        assert await stored(chat) == []
        assert screen.gone == [gone.id]
        assert screen.undo == [gone.id, None]
        assert presenter.pending() == []


async def test_a_conversation_whose_reply_is_being_written_is_not_deleted(
    tmp_path: Path, chat_model: ScriptedModel
) -> None:
    chat_model.hang("Hal")
    async with presenter_over_host(tmp_path, chat_model) as (presenter, screen, chat):
        busy = await chat.create(title="Busy")
        # Another face's turn: the presenter knows of it from the host's events only.
        turn = asyncio.ensure_future(chat.send(busy.id, "Hello"))
        await screen.until(lambda: presenter.busy(busy.id))
        with pytest.raises(KnownError) as refused:
            await presenter.delete(busy.id)
        assert refused.value.code == "busy"
        assert presenter.pending() == []
        assert await chat.stop(busy.id)
        await turn
        await screen.until(lambda: busy.id in screen.ended)
        assert not presenter.busy(busy.id)
        await presenter.delete(busy.id)
        assert presenter.pending() == [busy.id]


async def test_a_listing_overtaken_by_a_newer_one_is_dropped(
    tmp_path: Path, chat_model: ScriptedModel
) -> None:
    async with presenter_over_host(tmp_path, chat_model) as (presenter, _screen, chat):
        await chat.create(title="Suppliers")
        older, newer = await asyncio.gather(presenter.listing(), presenter.listing("Suppliers"))
        assert older is None
        assert newer is not None
        assert [r.conversation.title for r in newer] == ["Suppliers"]


def test_an_export_s_suggested_name_keeps_only_plain_characters() -> None:
    assert file_name("Orders/../\u202eevil: <x>") == "Orders..evil x"
    assert file_name("...") == "conversation"
