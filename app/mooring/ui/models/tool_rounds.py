"""A tool round as the transcript's card shows it: which server and tool, the arguments, how
the approval went and why, and the outcome — in words, from what the chat stored.

Qt-free values and functions (the transcript model and its delegate use them). Every string
that came from a model or a server is neutralised here, so what the card paints and what a
screen reader reads are the same inert text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mooring.core.approval.request import ApprovalOutcome
from mooring.core.approval.rules import Scope
from mooring.core.conversation import ConversationRound, Message, RoundOutcome
from mooring.core.tasks.states import LocalState
from mooring.core.tasks.words import state_words
from mooring.ui.text import inert

MAX_ARGUMENT_CHARS = 20_000
"""Arguments longer than this (as pretty JSON) are cut on the card (the ledger keeps them)."""
MAX_RESULT_CHARS = 600


@dataclass(frozen=True, slots=True)
class RoundCard:
    """What the card of one tool round shows (all of it neutralised)."""

    round_id: str
    server: str
    tool: str
    arguments: str
    """Pretty JSON of the arguments."""
    argument_count: int
    approval: str
    """Who decided what, and what was remembered."""
    why: str
    """Why the policy decided, or asked (empty: not recorded)."""
    outcome: str
    record_id: str | None = None
    """The operation record, for "Open task" (``None``: nothing was sent)."""
    is_task: bool = False
    """The call became a background task (its state follows the task's record)."""
    finished: bool = False
    """The task reached its end (its result can go back to the model)."""


_REMEMBERED = {
    Scope.CONVERSATION.value: "remembered for this conversation",
    Scope.ALWAYS.value: "remembered: always for this tool",
}


def approval_words(item: ConversationRound) -> tuple[str, str]:
    """(who decided what, why) for a round, from its audit entry (or the round's outcome)."""
    entry = item.approval
    outcome = entry.outcome if entry is not None else item.round.approval
    actor = entry.actor if entry is not None else ""
    by_rule = entry is not None and entry.rule_id is not None
    match outcome:
        case ApprovalOutcome.APPROVED.value:
            words = "Allowed by you"
            if entry is not None and entry.remembered in _REMEMBERED:
                words += f" — {_REMEMBERED[entry.remembered]}"
            else:
                words = "Allowed once by you"
        case ApprovalOutcome.DENIED.value:
            words = "Denied by you"
            if entry is not None and entry.remembered in _REMEMBERED:
                words += f" — {_REMEMBERED[entry.remembered]}"
        case ApprovalOutcome.AUTO_ALLOWED.value:
            words = "Allowed by your rule" if by_rule else "Allowed by the policy"
        case ApprovalOutcome.AUTO_DENIED.value:
            words = "Refused by your rule" if by_rule else "Refused by the policy"
        case ApprovalOutcome.CANCELLED.value:
            words = "You dismissed the question — not sent"
        case ApprovalOutcome.ABORTED.value:
            words = "The question was withdrawn — not sent"
            if actor == "program":
                words += " (by Mooring)"
        case None:
            words = "Not decided yet"
        case other:
            words = inert(other, limit=40)
    why = inert(entry.reason, limit=300) if entry is not None and entry.reason else ""
    return words, why


def pretty_arguments(arguments: dict[str, Any]) -> str:
    """The arguments as indented JSON, neutralised and cut at :data:`MAX_ARGUMENT_CHARS`."""
    text = json.dumps(arguments, indent=2, ensure_ascii=False, sort_keys=True, default=str)
    return inert(text, multiline=True, limit=MAX_ARGUMENT_CHARS)


def outcome_words(item: ConversationRound, message: Message) -> tuple[str, bool, bool]:
    """(the outcome in words, whether it is a background task, whether that task ended)."""
    record = item.record
    if message.awaits_task and record is not None:
        words = state_words(record, item.round.result)
        ended = record.is_terminal
        return f"Background task: {inert(str(words), limit=300)}", True, ended
    round_ = item.round
    match round_.outcome:
        case RoundOutcome.DENIED:
            return "Not run — the call was refused", False, False
        case RoundOutcome.CANCELLED:
            return "Cancelled", False, False
        case RoundOutcome.LOST:
            return "No result can be had any more", False, False
        case RoundOutcome.ERROR:
            error = round_.error or {}
            detail = inert(error.get("message") or "the call failed", limit=300)
            return f"Error: {detail}", False, False
        case RoundOutcome.PENDING if record is not None and not record.is_terminal:
            return f"In progress: {state_words(record)}", False, False
        case RoundOutcome.PENDING if record is not None and record.state is (
            LocalState.UNKNOWN_OUTCOME
        ):
            return "Outcome unknown", False, False
    # One line of its start: a huge result is never split whole on the GUI thread.
    head = message.content[: MAX_RESULT_CHARS * 8]
    line = " ".join(head.split()) + (" …" if len(head) < len(message.content) else "")
    text = inert(line, limit=MAX_RESULT_CHARS)
    label = "Error" if message.is_error else "Result"
    return f"{label}: {text}" if text else f"{label}: (empty)", False, False


def round_card(item: ConversationRound, message: Message) -> RoundCard:
    """The card of a tool round whose result message is ``message``."""
    approval, why = approval_words(item)
    outcome, is_task, finished = outcome_words(item, message)
    return RoundCard(
        round_id=item.round.id,
        server=inert(item.server_alias or item.round.server_id, limit=80),
        tool=inert(item.round.tool, limit=120),
        arguments=pretty_arguments(item.round.arguments),
        argument_count=len(item.round.arguments),
        approval=approval,
        why=why,
        outcome=outcome,
        record_id=item.record.id if item.record is not None else None,
        is_task=is_task,
        finished=finished,
    )


def card_text(card: RoundCard, *, expanded: bool) -> str:
    """The card's text, as painted (plain text, one fact per line)."""
    lines = [f"{card.server} · {card.tool}", f"Approval: {card.approval}"]
    if card.why:
        lines.append(f"Why: {card.why}")
    lines.append(card.outcome)
    count = card.argument_count
    fields = f"{count} field{'' if count == 1 else 's'}"
    if expanded:
        lines.append(f"Arguments ({fields}; Space hides them):")
        lines.append(card.arguments)
    else:
        lines.append(f"Arguments: {fields}, hidden (Space shows them)")
    return "\n".join(lines)
