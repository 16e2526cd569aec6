"""The notification policy: which changes tell the user, in which words, and when (pure).

Private by default: a notification says *that* something happened, never *what* it was about.
The summary is always "Mooring"; bodies are fixed phrases ("A background task completed").
The only opt-in detail is the server and tool name, reduced to a safe alphabet; arguments,
results, status messages, file names and task ids never reach a notification whatever the
settings, because an :class:`Occurrence` carries none of them.

Bursts merge: the first occurrence is shown at once, later ones within
:data:`MERGE_WINDOW` are held and shown together when the window ends, as one notice that
*replaces* the first ("3 background tasks completed"). Time is always passed in, so merging is
tested without waiting.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from mooring.core.tasks.inputs import TaskInput
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import MONITORED_STATES, LocalState, TaskFlag

SUMMARY = "Mooring"
"""The summary (title) of every notification."""

MERGE_WINDOW = timedelta(seconds=4)
"""Occurrences this close to the last notification are merged into it."""


class NotifyKind(StrEnum):
    """What a notification is about, most urgent first (the order of a merged body)."""

    APPROVAL_NEEDED = "approval_needed"
    INPUT_NEEDED = "input_needed"
    SIGN_IN_NEEDED = "sign_in_needed"
    UNKNOWN_OUTCOME = "unknown_outcome"
    FAILED = "failed"
    EXPIRED = "expired"
    CANCELLED = "cancelled"
    COMPLETED = "completed"


FINISHED_KINDS: frozenset[NotifyKind] = frozenset(
    {NotifyKind.FAILED, NotifyKind.EXPIRED, NotifyKind.CANCELLED, NotifyKind.COMPLETED}
)
"""A task reached one of its ends."""

_PHRASES: dict[NotifyKind, tuple[str, str]] = {
    NotifyKind.APPROVAL_NEEDED: ("Approval needed", "{n} approvals needed"),
    NotifyKind.INPUT_NEEDED: ("A task needs your input", "{n} tasks need your input"),
    NotifyKind.SIGN_IN_NEEDED: ("Sign-in needed", "Sign-in needed for {n} servers"),
    NotifyKind.UNKNOWN_OUTCOME: (
        "A task may or may not have run",
        "{n} tasks may or may not have run",
    ),
    NotifyKind.FAILED: ("A background task failed", "{n} background tasks failed"),
    NotifyKind.EXPIRED: ("A background task expired", "{n} background tasks expired"),
    NotifyKind.CANCELLED: (
        "A background task was cancelled",
        "{n} background tasks were cancelled",
    ),
    NotifyKind.COMPLETED: ("A background task completed", "{n} background tasks completed"),
}
_FINISHED_WORDS: dict[NotifyKind, str] = {
    NotifyKind.FAILED: "failed",
    NotifyKind.EXPIRED: "expired",
    NotifyKind.CANCELLED: "cancelled",
    NotifyKind.COMPLETED: "completed",
}


def phrase(kind: NotifyKind, count: int = 1) -> str:
    """The generic words for ``count`` occurrences of ``kind``."""
    one, many = _PHRASES[kind]
    return one if count == 1 else many.format(n=count)


class WhenToNotify(StrEnum):
    """The user's choice of when notifications are shown."""

    ALWAYS = "always"
    WHEN_INACTIVE = "when_inactive"
    """Only while Mooring's window is not the active one (or there is no window)."""
    NEVER = "never"


@dataclass(frozen=True, slots=True)
class NotifyPrefs:
    """The notification settings in force."""

    when: WhenToNotify = WhenToNotify.WHEN_INACTIVE
    show_names: bool = False
    """Opt-in: name the server and tool. Nothing else about the work is ever shown."""
    muted: frozenset[str] = frozenset()
    """Conversations the user muted."""


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One thing worth telling the user. It holds only what a notification may show (with the
    opt-in) and what a click needs to open; never arguments, results or status messages."""

    kind: NotifyKind
    record_id: str | None = None
    conversation_id: str | None = None
    server: str | None = None
    """The server's alias (shown only with ``show_names``)."""
    tool: str | None = None
    """The tool's name (shown only with ``show_names``)."""


@dataclass(frozen=True, slots=True)
class OpenTarget:
    """What a click on a notification opens: a conversation, with a task selected if one."""

    conversation_id: str | None
    record_id: str | None


@dataclass(frozen=True, slots=True)
class Notice:
    """A notification as shown. A notice with the same ``key`` as one already shown replaces
    it (a burst grows in place instead of stacking up)."""

    key: int
    summary: str
    body: str
    count: int
    kinds: tuple[NotifyKind, ...]
    target: OpenTarget | None = None


def should_notify(occurrence: Occurrence, prefs: NotifyPrefs, *, window_active: bool) -> bool:
    """Whether the user wants to hear about ``occurrence`` now."""
    if prefs.when is WhenToNotify.NEVER:
        return False
    if prefs.when is WhenToNotify.WHEN_INACTIVE and window_active:
        return False
    return not (
        occurrence.conversation_id is not None and occurrence.conversation_id in prefs.muted
    )


def task_change_kinds(
    record: TaskRecord, previous_state: LocalState, new_inputs: Sequence[TaskInput] = ()
) -> list[NotifyKind]:
    """What a persisted task change is worth telling (sign-in is tracked by the caller, who
    remembers which servers already asked).

    A task that ends straight from its create request (an immediate result) is not background
    work: only an end reached while the task was being watched notifies.
    """
    kinds: list[NotifyKind] = []
    state = record.state
    if state is not previous_state:
        if previous_state in MONITORED_STATES and state in _END_KINDS:
            kinds.append(_END_KINDS[state])
        elif state is LocalState.UNKNOWN_OUTCOME:
            kinds.append(NotifyKind.UNKNOWN_OUTCOME)
    if state is LocalState.INPUT_REQUIRED and (
        new_inputs or (previous_state is not LocalState.INPUT_REQUIRED)
    ):
        kinds.append(NotifyKind.INPUT_NEEDED)
    return kinds


_END_KINDS: dict[LocalState, NotifyKind] = {
    LocalState.COMPLETED: NotifyKind.COMPLETED,
    LocalState.FAILED: NotifyKind.FAILED,
    LocalState.CANCELLED: NotifyKind.CANCELLED,
    LocalState.EXPIRED: NotifyKind.EXPIRED,
}


def needs_sign_in(record: TaskRecord) -> bool:
    """Whether the record's server refused its credentials while the task runs."""
    return TaskFlag.AUTH_REQUIRED in record.flags and not record.is_terminal


# -- words -----------------------------------------------------------------------------------

_SAFE_PUNCTUATION = frozenset(" _-.:/@()+")
NAME_LIMIT = 40


def safe_name(text: str, limit: int = NAME_LIMIT) -> str:
    """A server or tool name reduced to letters, digits and a little punctuation, at most
    ``limit`` characters: no markup, control or direction-changing characters reach a
    notification daemon, whatever a server calls its tools."""
    kept = "".join(
        ch if ch.isalnum() or ch in _SAFE_PUNCTUATION else " "
        for ch in unicodedata.normalize("NFKC", text)
        if unicodedata.category(ch)[0] != "C"
    )
    words = " ".join(kept.split())
    return words if len(words) <= limit else words[: limit - 1].rstrip() + "…"


def body_for(occurrences: Sequence[Occurrence], *, show_names: bool = False) -> str:
    """The body of one notification telling ``occurrences`` (merged when several).

    One kind: its phrase ("3 background tasks completed"). Several: one line per kind that
    needs the user, most urgent first, and one line for the tasks that finished ("3 background
    tasks finished: 1 failed, 2 completed"). With ``show_names``, a last line names up to three
    servers and tools.
    """
    counts = Counter(o.kind for o in occurrences)
    present = [kind for kind in NotifyKind if kind in counts]
    finished = [kind for kind in present if kind in FINISHED_KINDS]
    lines = [phrase(kind, counts[kind]) for kind in present if kind not in FINISHED_KINDS]
    if len(finished) == 1:
        lines.append(phrase(finished[0], counts[finished[0]]))
    elif finished:
        total = sum(counts[kind] for kind in finished)
        parts = ", ".join(f"{counts[kind]} {_FINISHED_WORDS[kind]}" for kind in finished)
        lines.append(f"{total} background tasks finished: {parts}")
    if show_names:
        names = _names(occurrences)
        if names:
            lines.append(names)
    return "\n".join(lines)


def _names(occurrences: Iterable[Occurrence]) -> str:
    seen: list[str] = []
    for o in occurrences:
        server = safe_name(o.server) if o.server else ""
        tool = safe_name(o.tool) if o.tool else ""
        label = f"{server}: {tool}" if server and tool else server or tool
        if label and label not in seen:
            seen.append(label)
    if not seen:
        return ""
    shown = ", ".join(seen[:3])
    return shown if len(seen) <= 3 else f"{shown} and {len(seen) - 3} more"


def target_for(occurrences: Sequence[Occurrence]) -> OpenTarget | None:
    """Where a click goes: the one task's conversation with the task selected; several tasks
    of one conversation open it; anything else just raises the window."""
    records = {o.record_id for o in occurrences}
    conversations = {o.conversation_id for o in occurrences}
    if len(conversations) != 1:
        return None
    [conversation] = conversations
    record = next(iter(records)) if len(records) == 1 else None
    if conversation is None and record is None:
        return None
    return OpenTarget(conversation, record)


def notice_for(key: int, occurrences: Sequence[Occurrence], *, show_names: bool = False) -> Notice:
    """The notice telling ``occurrences`` together; for a task told about twice, only the
    latest news counts (a question since answered and then completed is just "completed")."""
    occurrences = latest_per_task(occurrences)
    return Notice(
        key=key,
        summary=SUMMARY,
        body=body_for(occurrences, show_names=show_names),
        count=len(occurrences),
        kinds=tuple(kind for kind in NotifyKind if any(o.kind is kind for o in occurrences)),
        target=target_for(occurrences),
    )


def latest_per_task(occurrences: Sequence[Occurrence]) -> list[Occurrence]:
    """``occurrences`` with only the last one of each task (in order of the last ones)."""
    last = {o.record_id: i for i, o in enumerate(occurrences) if o.record_id is not None}
    return [o for i, o in enumerate(occurrences) if o.record_id is None or last[o.record_id] == i]


# -- merging bursts ----------------------------------------------------------------------------


@dataclass(slots=True)
class _Burst:
    key: int
    ends: datetime
    shown: list[Occurrence] = field(default_factory=list)
    held: list[Occurrence] = field(default_factory=list)


class Merger:
    """Turns a stream of occurrences into few notices (pure: every call is given the time).

    The first occurrence is shown at once. Those that follow within ``window`` of the last
    notice are held; :meth:`flush` at :meth:`due_at` shows them together with the earlier ones
    as one notice with the same key, replacing it.
    """

    def __init__(self, window: timedelta = MERGE_WINDOW) -> None:
        self._window = window
        self._burst: _Burst | None = None
        self._keys = 0

    def offer(
        self, occurrence: Occurrence, now: datetime, *, show_names: bool = False
    ) -> Notice | None:
        """A notice to show now, or ``None`` when ``occurrence`` is held for merging."""
        burst = self._burst
        if burst is not None and now < burst.ends:
            burst.held.append(occurrence)
            return None
        self._keys += 1
        self._burst = _Burst(self._keys, now + self._window, [occurrence])
        return notice_for(self._keys, [occurrence], show_names=show_names)

    def due_at(self) -> datetime | None:
        """When held occurrences are to be shown (``None``: nothing held)."""
        burst = self._burst
        return burst.ends if burst is not None and burst.held else None

    def flush(
        self, now: datetime, *, show_names: bool = False, force: bool = False
    ) -> Notice | None:
        """The merged notice, once the window of the held occurrences has passed (or at once
        with ``force``, when the process is about to end)."""
        burst = self._burst
        if burst is None or not burst.held or (now < burst.ends and not force):
            return None
        burst.shown.extend(burst.held)
        burst.held.clear()
        burst.ends = now + self._window
        return notice_for(burst.key, burst.shown, show_names=show_names)


def prefs_from(*, when: str, show_names: bool, muted: Collection[str] = ()) -> NotifyPrefs:
    """Preferences from settings values (an unknown ``when`` means the default)."""
    try:
        chosen = WhenToNotify(when)
    except ValueError:
        chosen = WhenToNotify.WHEN_INACTIVE
    return NotifyPrefs(when=chosen, show_names=show_names, muted=frozenset(muted))


def consent_changes(allowed: bool) -> dict[str, object]:
    """The settings that remember the answer to "may Mooring notify?" (``never`` for "not
    now")."""
    changes: dict[str, object] = {"notifications.asked": True}
    if not allowed:
        changes["notifications.when"] = "never"
    return changes
