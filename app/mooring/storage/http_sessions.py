"""The Streamable HTTP sessions left open, by server and account (``core.ports.HttpSessions``)."""

from __future__ import annotations

from sqlalchemy import and_, delete, select
from sqlalchemy.dialects.sqlite import insert
from sqlalchemy.orm import Session

from mooring.core.clock import Clock
from mooring.core.ports import RememberedSession
from mooring.storage import tables as t
from mooring.storage.db import Database

_s = t.http_sessions


def _key(profile_id: str | None) -> str:
    return profile_id or ""


class SqlHttpSessions:
    """``HttpSessions`` on one :class:`Database`: one row per server and account."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    async def remembered(self, server_id: str, profile_id: str | None) -> RememberedSession | None:
        query = select(_s.c.session_id, _s.c.initialized).where(
            and_(_s.c.server_id == server_id, _s.c.profile_key == _key(profile_id))
        )

        def read(session: Session) -> RememberedSession | None:
            row = session.execute(query).first()
            return None if row is None else RememberedSession(row.session_id, row.initialized)

        return await self._db.run(read)

    async def remember(
        self,
        server_id: str,
        profile_id: str | None,
        session_id: str,
        initialized: str | None = None,
    ) -> None:
        at = self._clock.now()
        values = {
            "server_id": server_id,
            "profile_key": _key(profile_id),
            "session_id": session_id,
            "recorded_at": at,
            "initialized": initialized,
        }
        statement = (
            insert(_s)
            .values(values)
            .on_conflict_do_update(
                index_elements=[_s.c.server_id, _s.c.profile_key],
                set_={"session_id": session_id, "recorded_at": at, "initialized": initialized},
            )
        )

        def write(session: Session) -> None:
            session.execute(statement)

        await self._db.run(write)

    async def forget(self, server_id: str, profile_id: str | None, session_id: str) -> None:
        statement = delete(_s).where(
            and_(
                _s.c.server_id == server_id,
                _s.c.profile_key == _key(profile_id),
                _s.c.session_id == session_id,
            )
        )

        def write(session: Session) -> None:
            session.execute(statement)

        await self._db.run(write)
