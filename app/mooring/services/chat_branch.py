"""Branching a conversation: a new conversation from any shown message (the host's
``branches`` part, next to ``ChatService``).

A branch is a new conversation holding copies of the shown messages up to and including the
chosen one (hidden versions stay behind), with the same provider, model, settings and system
prompt, titled "<title> (branch)". Its first message is a note of where it came from: a
``system`` message, shown and exported but never sent to the model.

Tool rounds in the copied part are history. The copies of their messages keep their text
and results as the model saw them and point at the same tool rounds, so the branch shows the
same round cards (their task records as they are now); nothing runs again and no round or task
record is copied. A task that was still running when the branch was made reports its result
to the conversation that started it: in the branch, its "task started" message no longer
waits for a result (``awaits_task`` is cleared), so no follow-up and no automatic turn come
from it there.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from mooring.core.conversation import Conversation, Message, Role
from mooring.core.errors import KnownError, NotFound
from mooring.core.ids import new_id

if TYPE_CHECKING:
    from mooring.core.clock import Clock
    from mooring.core.ports import ConversationBook

__all__ = ["BRANCH_SUFFIX", "Branches", "branch_note"]

BRANCH_SUFFIX = " (branch)"
"""Added to the title of the conversation a branch was made from."""
TITLE_LIMIT = 200
"""A branch's title is cut to this many characters (before its suffix)."""


def branch_note(source: Conversation, message: Message) -> str:
    """The note a branch starts with: where it came from."""
    title = " ".join(source.title.split())[:TITLE_LIMIT]
    return (
        f"Branched from “{title}” (conversation {source.id}) at message {message.id}. "
        "The messages below are copies; tool rounds in them ran there and do not run again."
    )


class Branches:
    """Makes branches of conversations (``HostApi.branches``)."""

    def __init__(self, *, conversations: ConversationBook, clock: Clock) -> None:
        self._book = conversations
        self._clock = clock

    async def branch(self, key: str, message_id: str) -> Conversation:
        """A new conversation holding copies of the shown messages of ``key`` (id or unique
        prefix) up to and including ``message_id``, with the same settings; stored whole in
        one transaction before it is returned. The original is not changed."""
        source = await self._book.find_conversation(key.strip())
        if source is None:
            raise NotFound("conversation", key)
        shown = await self._book.messages(source.id)
        at = next((n for n, m in enumerate(shown) if m.id == message_id), None)
        if at is None:
            raise KnownError(
                "That message is not shown in this conversation (it may be in a hidden "
                "version); a branch starts from a shown message.",
                code="usage",
            )
        now = self._clock.now()
        branch = Conversation(
            id=new_id(),
            title=" ".join(source.title.split())[:TITLE_LIMIT] + BRANCH_SUFFIX,
            created_at=now,
            updated_at=now,
            provider_id=source.provider_id,
            model=source.model,
            auto_continue=source.auto_continue,
            muted=source.muted,
            system_prompt=source.system_prompt,
        )
        note = Message(
            id=new_id(),
            conversation_id=branch.id,
            role=Role.SYSTEM,
            content=branch_note(source, shown[at]),
            created_at=now,
        )
        copies = [
            dataclasses.replace(m, id=new_id(), conversation_id=branch.id, awaits_task=False)
            for m in shown[: at + 1]
        ]
        await self._book.create_conversation(branch, [note, *copies])
        return branch
