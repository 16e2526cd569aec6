"""What the Conversations view does about versions and the system prompt: regenerate a reply,
edit a message of the user's (each keeps what it replaces as a version), step through the
versions of a place, branch a new conversation from a message, and choose the conversation's
system prompt."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QDialog, QInputDialog

from mooring.core.errors import KnownError
from mooring.ui.dialogs.system_prompt import SystemPromptDialog
from mooring.ui.qt_async import error_text, wait_dialog
from mooring.ui.text import inert

if TYPE_CHECKING:
    from mooring.core.chat import TurnResult
    from mooring.core.events import VersionsDidChange
    from mooring.core.host_api import BranchApi
    from mooring.ui.views.conversations_view import ConversationsView


class Rewrites:
    """Regenerate, edit, versions and the system prompt, for one Conversations view."""

    def __init__(
        self,
        view: ConversationsView,
        default_system_prompt: Callable[[], str],
        branches: BranchApi | None = None,
    ) -> None:
        self._view = view
        self._default_system_prompt = default_system_prompt
        self._branches = branches
        pane = view.pane
        jobs = view.jobs
        pane.edit_wanted.connect(
            lambda message_id, text: jobs.start(self.edit_interactively(message_id, text))
        )
        pane.regenerate_wanted.connect(lambda message_id: jobs.start(self.regenerate(message_id)))
        pane.version_wanted.connect(
            lambda after, number: jobs.start(self.show_version(after or None, number))
        )
        pane.branch_wanted.connect(lambda message_id: jobs.start(self.branch(message_id)))
        pane.branch_action.setVisible(branches is not None)

    async def branch(self, message_id: str) -> str | None:
        """Start a new conversation with copies of the shown messages up to ``message_id``
        and open it; its id (``None``: nothing was made, the notice says why)."""
        view = self._view
        conversation_id = view.current_id
        if conversation_id is None or self._branches is None:
            return None
        try:
            made = await self._branches.branch(conversation_id, message_id)
        except KnownError as exc:
            view.notice_bar.show_text(error_text(exc), (exc.remedy, exc.subject))
            return None
        view.notice_bar.show_text(None)
        view.search_field.clear()
        await view.load()
        await view.show_conversation(made.id)
        view.report.emit(f"Branched into “{inert(made.title, limit=80)}”.")
        return made.id

    def on_versions(self, event: VersionsDidChange) -> None:
        """A conversation was forked (drop the hidden rows; the new turn's arrive as usual) or
        shows another version (read it again)."""
        view = self._view
        if event.conversation_id != view.messages.conversation_id:
            return
        if event.forked and view.messages.drop_after(event.after_message_id):
            return
        view.jobs.start(view.open_conversation(event.conversation_id))

    async def refresh_versions(self, conversation_id: str) -> None:
        """Read again which places have versions (a turn ended: a new version may be whole)."""
        view = self._view
        points = await view.presenter.versions(conversation_id)
        if conversation_id == view.messages.conversation_id:
            view.messages.set_versions(points)

    async def regenerate(self, message_id: str) -> None:
        """Answer the chosen message again; the reply it replaces is kept as a version."""
        conversation_id = self._view.current_id
        if conversation_id is not None:
            await self._again(self._view.presenter.regenerate(conversation_id, message_id))

    async def edit_interactively(self, message_id: str, text: str) -> None:
        """Ask for the new words of a message of the user's, then send them in its place."""
        view = self._view
        conversation_id = view.current_id
        if conversation_id is None:
            return
        dialog = QInputDialog(view)
        dialog.setWindowTitle("Edit message")
        dialog.setLabelText("Send these words in place of your message (it is kept):")
        dialog.setOption(QInputDialog.InputDialogOption.UsePlainTextEditForTextInput)
        dialog.setTextValue(text)
        if await wait_dialog(dialog, view.dialog_opened.emit) != QDialog.DialogCode.Accepted:
            return
        if dialog.textValue().strip():
            await self._again(view.presenter.edit(conversation_id, message_id, dialog.textValue()))

    async def _again(self, turn: Awaitable[TurnResult | None]) -> None:
        """Run a regenerated or edited turn; a refusal or a failure shows above the transcript."""
        view = self._view
        view.pane.stick.at_bottom = True
        try:
            result = await turn
        except KnownError as exc:
            view.notice_bar.show_text(error_text(exc), (exc.remedy, exc.subject))
            return
        view.notice_bar.show_text(None)
        if result is not None and result.error:
            view.notice_bar.show_failure(result, view.report.emit)

    async def show_version(self, after_id: str | None, number: int) -> None:
        """Show another version of a place of the shown conversation."""
        view = self._view
        if view.current_id is not None:
            await view.presenter.show_version(view.current_id, after_id, number)

    async def system_prompt_interactively(self) -> None:
        """Choose the shown conversation's system prompt: its own words, or the default."""
        view = self._view
        conversation = view.presenter.shown
        if view.presenter.chat is None or conversation is None:
            return
        dialog = SystemPromptDialog(conversation.system_prompt, self._default_system_prompt(), view)
        if await wait_dialog(dialog, view.dialog_opened.emit) != QDialog.DialogCode.Accepted:
            return
        chosen = dialog.choice().text
        view.presenter.shown = await view.presenter.chat.configure(
            conversation.id,
            system_prompt=chosen,
            default_system_prompt=chosen is None,
        )
        view.report.emit("System prompt saved.")
