"""Point reads, and independent writes, many at a time: one transaction and one trip to the
writer thread per batch (a read batch's reads share one snapshot of the file).

At scale the monitor and the reconciler each read a few rows per task (the record, its server,
its inputs), a thousand tasks at once. Run one by one, every read costs a transaction, a session
and two thread hand-offs on the single writer thread, and the event loop spends its time waking
up for them. Here the reads asked for while a batch is on the writer thread go together in the
next one, so a burst of a thousand reads costs a handful of transactions.

Writes that stand alone (each task's own news, as a listen stream's replay brings a thousand)
batch the same way (:class:`WriteBatches`), each in its own savepoint: one that fails (a record
changed elsewhere) rolls back alone and raises to its own caller, and every caller returns only
once the batch is committed (write, then tell).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from mooring.storage.db import Database, begin_read, begin_write

log = logging.getLogger("mooring.storage")

T = TypeVar("T")

_SAVEPOINT = "mooring_write"

_Read = tuple[Callable[[Session], Any], "asyncio.Future[Any]"]


class _Batches:
    """Runs ``fn(session)`` calls in shared transactions, each caller getting its own result or
    its own exception; ``_isolated``: each call in its own savepoint."""

    _isolated: bool

    def __init__(self, db: Database, *, most: int = 256) -> None:
        self._db = db
        self._most = most
        self._pending: dict[asyncio.AbstractEventLoop, list[_Read]] = {}
        self._runners: dict[asyncio.AbstractEventLoop, asyncio.Task[None]] = {}

    async def run(self, fn: Callable[[Session], T]) -> T:
        """``fn``'s result, from a transaction shared with the calls asked for meanwhile."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[T] = loop.create_future()
        self._pending.setdefault(loop, []).append((fn, done))
        runner = self._runners.get(loop)
        if runner is None or runner.done():
            self._runners[loop] = loop.create_task(self._run_all(loop))
        return await done

    async def _run_all(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            while pending := self._pending.get(loop):
                batch, self._pending[loop] = pending[: self._most], pending[self._most :]
                live = [(fn, done) for fn, done in batch if not done.cancelled()]
                if not live:
                    continue
                try:
                    outcomes = await self._db.run(
                        functools.partial(_each, reads=live, isolated=self._isolated)
                    )
                except asyncio.CancelledError:
                    for _fn, done in live:
                        done.cancel()
                    raise
                except Exception as exc:  # noqa: BLE001  # every waiter of the batch hears it
                    for _fn, done in live:
                        if not done.done():
                            done.set_exception(exc)
                    continue
                for (_fn, done), (ok, value) in zip(live, outcomes, strict=True):
                    if done.done():
                        continue
                    if ok:
                        done.set_result(value)
                    else:
                        done.set_exception(value)
        finally:
            self._runners.pop(loop, None)
            for _fn, done in self._pending.pop(loop, []):  # only when cancelled (loop closing)
                done.cancel()


class ReadBatches(_Batches):
    """Read-only calls: nothing in a batch may write."""

    _isolated = False


class WriteBatches(_Batches):
    """Runs independent writing ``fn(session)`` calls in shared transactions, each in its own
    savepoint: a call that raises leaves nothing behind and tells only its own caller; every
    caller returns once the whole batch is committed."""

    _isolated = True


def _each(session: Session, reads: list[_Read], *, isolated: bool) -> list[tuple[bool, Any]]:
    """Every call's outcome: ``(True, result)`` or ``(False, exception)``; ``isolated``: each
    in its own savepoint."""
    if isolated:
        begin_write(session)  # one transaction for the batch, not one per savepoint
        return [_in_savepoint(session, fn) for fn, _done in reads]
    begin_read(session)  # one snapshot for the batch, not one per SELECT
    outcomes: list[tuple[bool, Any]] = []
    for fn, _done in reads:
        try:
            outcomes.append((True, fn(session)))
        except SQLAlchemyError:
            raise  # the database's own trouble: the batch fails, classified, for every caller
        except Exception as exc:  # noqa: BLE001  # handed to that read's caller
            outcomes.append((False, exc))
    return outcomes


def _in_savepoint(session: Session, fn: Callable[[Session], Any]) -> tuple[bool, Any]:
    """``fn``'s outcome, its writes undone when it raised.

    SQL savepoints, not ``Session.begin_nested``: the batch's calls write with Core statements
    only (no ORM objects for the session to track), and ``begin_nested`` compiled a new
    ``SAVEPOINT`` statement for every call: it tripled the cost of a record's save (255 against
    110 us, measured)."""
    connection = session.connection()
    connection.exec_driver_sql(f"SAVEPOINT {_SAVEPOINT}")
    try:
        value = fn(session)
    except SQLAlchemyError:
        raise  # the database's own trouble: the batch fails, classified, for every caller
    except Exception as exc:  # noqa: BLE001  # handed to that write's caller
        connection.exec_driver_sql(f"ROLLBACK TO {_SAVEPOINT}")
        connection.exec_driver_sql(f"RELEASE {_SAVEPOINT}")
        return False, exc
    connection.exec_driver_sql(f"RELEASE {_SAVEPOINT}")
    return True, value
