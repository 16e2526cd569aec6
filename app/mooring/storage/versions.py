"""Versions of a conversation's tail (migration 0014).

Editing a message or regenerating a reply *forks* the conversation after a message: the
messages that followed it are kept whole as a hidden version (``messages.version_id`` set,
a ``message_versions`` row saying after which message), and the new tail grows from there.
Showing another version of that place hides the shown tail as a version in turn and shows
the chosen one again. Nothing is ever deleted; what is shown is every message whose
``version_id`` is NULL, in ``seq`` order — a hidden version's messages keep their ``seq``,
which is above the message they follow, so showing them again needs no renumbering.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, insert, select, update
from sqlalchemy.orm import Session

from mooring.core.conversation import VersionPoint
from mooring.core.ids import new_id
from mooring.storage import tables as t

_m = t.messages.c
_v = t.message_versions.c


def _seq_of(session: Session, conversation_id: str, message_id: str | None) -> int | None:
    """The ``seq`` of a shown message (0 for the start: ``None``); ``None`` if not shown."""
    if message_id is None:
        return 0
    return session.execute(
        select(_m.seq).where(
            _m.id == message_id, _m.conversation_id == conversation_id, _m.version_id.is_(None)
        )
    ).scalar_one_or_none()


def fork(session: Session, conversation_id: str, after_id: str | None, now: datetime) -> bool:
    """Hide the shown messages after ``after_id`` (``None``: all of them) as a version of
    that place; whether there were any. A message that is not shown is an error."""
    seq = _seq_of(session, conversation_id, after_id)
    if seq is None:
        raise LookupError(after_id)
    version_id = new_id()
    hidden = session.execute(
        update(t.messages)
        .where(_m.conversation_id == conversation_id, _m.version_id.is_(None), _m.seq > seq)
        .values(version_id=version_id)
    )
    if not hidden.rowcount:  # type: ignore[attr-defined]  # CursorResult has rowcount
        return False
    session.execute(
        insert(t.message_versions).values(
            id=version_id,
            conversation_id=conversation_id,
            after_message_id=after_id,
            created_at=now,
        )
    )
    return True


def _versions_after(
    session: Session, conversation_id: str, after_id: str | None, seq: int
) -> list[tuple[str | None, int, str]]:
    """The versions of the place after ``after_id`` (at ``seq``), in the order they were
    first written: ``(version id or None for the shown one, first seq, first message id)``."""
    hidden = session.execute(
        select(_m.version_id, func.min(_m.seq), _m.id)
        .join(t.message_versions, t.message_versions.c.id == _m.version_id)
        .where(
            _v.conversation_id == conversation_id,
            _v.after_message_id.is_(None) if after_id is None else _v.after_message_id == after_id,
        )
        .group_by(_m.version_id)
    ).all()
    found: list[tuple[str | None, int, str]] = [(r[0], r[1], r[2]) for r in hidden]
    shown = session.execute(
        select(_m.seq, _m.id)
        .where(_m.conversation_id == conversation_id, _m.version_id.is_(None), _m.seq > seq)
        .order_by(_m.seq)
        .limit(1)
    ).first()
    if shown is not None:
        found.append((None, shown[0], shown[1]))
    return sorted(found, key=lambda v: v[1])


def version_points(session: Session, conversation_id: str) -> list[VersionPoint]:
    """The places of the shown conversation that have more than one version, in order."""
    afters = session.execute(
        select(_v.after_message_id).where(_v.conversation_id == conversation_id).distinct()
    ).scalars()
    points: list[VersionPoint] = []
    for after_id in list(afters):
        seq = _seq_of(session, conversation_id, after_id)
        if seq is None:
            continue  # it follows a message that is itself in a hidden version
        versions = _versions_after(session, conversation_id, after_id, seq)
        shown = next((n for n, v in enumerate(versions) if v[0] is None), None)
        if len(versions) < 2 or shown is None:
            continue
        points.append(
            VersionPoint(
                after_message_id=after_id,
                first_message_id=versions[shown][2],
                count=len(versions),
                shown=shown + 1,
                seq=versions[shown][1],
            )
        )
    return sorted(points, key=lambda p: p.seq)


def show_version(
    session: Session, conversation_id: str, after_id: str | None, number: int, now: datetime
) -> bool:
    """Show version ``number`` (1-based, in the order written) of the place after
    ``after_id``, hiding the shown one; whether anything changed."""
    seq = _seq_of(session, conversation_id, after_id)
    if seq is None:
        raise LookupError(after_id)
    versions = _versions_after(session, conversation_id, after_id, seq)
    if not 1 <= number <= len(versions):
        raise IndexError(number)
    chosen = versions[number - 1][0]
    if chosen is None:
        return False  # shown already
    fork(session, conversation_id, after_id, now)
    session.execute(
        update(t.messages)
        .where(_m.conversation_id == conversation_id, _m.version_id == chosen)
        .values(version_id=None)
    )
    session.execute(t.message_versions.delete().where(_v.id == chosen))
    return True
