"""Opening a 10,000-message conversation: its newest page versus the whole transcript.

Prints the time to read and lay out the page the window shows first (``PAGE_SIZE`` messages
through ``messages_before``) and the time to read and lay out every message (what opening a
conversation cost before pages), on a real SQLite file and a real ``QListView`` with the
transcript's delegate (offscreen), and their ratio.

``transcript_code_page``: the same page when every reply carries a 12-line Python code block,
laid out with code colouring (``ui/highlight.py``) beside the same page with colouring off.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

from sqlalchemy.orm import Session

from bench.suite import Result, Size, measured
from mooring.core.clock import SystemClock
from mooring.core.conversation import Conversation, Message, Role
from mooring.core.ids import new_id
from mooring.storage import conversations as store
from mooring.storage.conversations import SqlConversations
from mooring.storage.db import Database

IDS = ("transcript_open_10k", "transcript_code_page")

CODE_REPLY = (
    "Here is the script:\n\n```python\nimport csv\n\n\n"
    "def load(path: str) -> list[dict[str, str]]:\n"
    '    """Read the suppliers file."""\n'
    "    with open(path, newline='') as handle:  # UTF-8\n"
    "        rows = list(csv.DictReader(handle))\n"
    "    for row in rows:\n"
    "        row['code'] = row['code'].strip().upper()\n"
    "    return rows\n\n\nprint(len(load('suppliers.csv')))\n```\n\nRun it with `python`."
)


def _seed(db: Database, count: int, *, code: bool = False) -> str:
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    conversation = Conversation(id=new_id(), title="Long", created_at=t0, updated_at=t0)

    def write(session: Session) -> None:
        store.add_conversation(session, conversation)
        for n in range(count):
            store.append_message(
                session,
                Message(
                    id=new_id(),
                    conversation_id=conversation.id,
                    role=Role.USER if n % 2 == 0 else Role.ASSISTANT,
                    content=(
                        CODE_REPLY
                        if code and n % 2 == 1
                        else f"Message **{n}**\n\nwith a second paragraph and `code`."
                    ),
                    created_at=t0 + timedelta(seconds=n),
                ),
            )

    db.call_sync(write)
    return conversation.id


def run(size: Size, folder: Path, wanted: Callable[[str], bool]) -> list[Result]:
    """Open the same long conversation both ways; the page's time beside the whole's. Then a
    page of code-carrying replies with colouring on beside off."""
    results = _open_10k(size, folder) if wanted("transcript_open_10k") else []
    if wanted("transcript_code_page"):
        results.append(_code_page(folder))
    return results


def _code_page(folder: Path) -> Result:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication, QListView

    from mooring.ui.models import conversations

    rendering = cast("Any", conversations)  # colouring is switched off by replacing it
    from mooring.ui.models.conversations import MessageListModel
    from mooring.ui.views.conversations_view import PAGE_SIZE, MessageDelegate

    app = QApplication.instance() or QApplication([])
    coloured = rendering.highlight
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        db = Database.open(Path(tmp) / "bench.sqlite3")
        conversation_id = _seed(db, PAGE_SIZE * 2, code=True)
        book = SqlConversations(db, SystemClock())
        messages = asyncio.run(book.messages_before(conversation_id, None, PAGE_SIZE))
        db.close()

    def lay_out() -> float:
        view = QListView()
        view.resize(800, 600)
        model = MessageListModel(view)
        view.setModel(model)
        view.setItemDelegate(MessageDelegate(view))  # a new delegate: nothing laid out yet
        view.setLayoutMode(QListView.LayoutMode.SinglePass)
        view.show()
        began = time.perf_counter()
        model.show(conversation_id, messages)
        view.doItemsLayout()
        view.scrollToBottom()
        app.processEvents()
        took = time.perf_counter() - began
        view.close()
        return took

    runs: dict[bool, list[float]] = {True: [], False: []}
    try:
        for _ in range(5):  # alternated, so both see the same machine
            for colouring in (True, False):
                rendering.highlight = coloured if colouring else _no_colour
                runs[colouring].append(lay_out())
    finally:
        rendering.highlight = coloured
    on, off = sorted(runs[True])[2], sorted(runs[False])[2]
    return measured(
        "transcript_code_page",
        f"lay out a page of {PAGE_SIZE} messages, half of them replies with a 12-line Python "
        "code block: code coloured (Pygments) vs not (median of 5 each)",
        value=on * 1e3,
        baseline=off * 1e3,
        unit="ms",
        target="report (baseline: colouring off)",
        met=None,
    )


def _no_colour(_document: Any, *, dark: bool) -> int:
    return 0


def _open_10k(size: Size, folder: Path) -> list[Result]:
    count = 10_000 if size.name == "full" else 1_000
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication, QListView

    from mooring.ui.models.conversations import MessageListModel
    from mooring.ui.presenters.conversations import PAGE_SIZE
    from mooring.ui.views.transcript import MessageDelegate

    app = QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        db = Database.open(Path(tmp) / "bench.sqlite3")
        conversation_id = _seed(db, count)
        book = SqlConversations(db, SystemClock())
        view = QListView()
        view.resize(800, 600)
        model = MessageListModel(view)
        view.setModel(model)
        view.setItemDelegate(MessageDelegate(view))
        view.setLayoutMode(QListView.LayoutMode.SinglePass)
        view.show()

        def open_with(read: Coroutine[Any, Any, list[Message]]) -> float:
            began = time.perf_counter()
            messages = asyncio.run(read)
            model.show(conversation_id, messages)
            view.doItemsLayout()
            view.scrollToBottom()
            app.processEvents()
            return time.perf_counter() - began

        page = open_with(book.messages_before(conversation_id, None, PAGE_SIZE))
        whole = open_with(book.messages(conversation_id))
        db.close()
    return [
        measured(
            "transcript_open_10k",
            f"open a {count:,}-message conversation: read and lay out its newest page "
            f"({PAGE_SIZE} messages) in the transcript view",
            value=page * 1e3,
            baseline=whole * 1e3,
            unit="ms",
            target="report (baseline: the whole transcript at once)",
            met=None,
        )
    ]
