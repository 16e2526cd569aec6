"""From persisted changes to private notifications.

The notifier listens on the event bus (events are emitted only after the change was
persisted), asks the pure policy what is worth telling, merges bursts, and hands each notice to
the delivery chain. It never reads arguments, results or status messages: the occurrences it
builds cannot carry them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta

from mooring.core.clock import Clock
from mooring.core.events import ApprovalRequested, Event, EventBus, TaskDidChange
from mooring.core.notifications import (
    MERGE_WINDOW,
    Merger,
    Notice,
    NotifyKind,
    NotifyPrefs,
    Occurrence,
    WhenToNotify,
    needs_sign_in,
    should_notify,
    task_change_kinds,
)
from mooring.core.ports import NoticeSink, ServerCatalog

log = logging.getLogger("mooring.notify")

HELD_MAX = 8
"""How many notices are kept while nobody could be asked whether to notify (the newest)."""


@dataclass(slots=True)
class _Deliver:
    """Asked of :meth:`Notifier.run` in turn with the events: deliver what is held now."""

    done: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class Notifier:
    """Tells the user about background work that needs them or ended.

    Call :meth:`start` to listen and :meth:`run` (a long-lived task) to deliver; :meth:`aclose`
    ends ``run`` and delivers what is still held before the process ends. :meth:`handle` and
    :meth:`tick` are the steps ``run`` takes, usable directly with a manual clock.
    """

    def __init__(
        self,
        *,
        events: EventBus,
        catalog: ServerCatalog,
        sink: NoticeSink,
        clock: Clock,
        prefs: Callable[[], NotifyPrefs],
        window_active: Callable[[], bool] = lambda: False,
        merge_window: timedelta = MERGE_WINDOW,
    ) -> None:
        self._events = events
        self._catalog = catalog
        self._sink = sink
        self._clock = clock
        self._prefs = prefs
        self.window_active = window_active
        """Whether Mooring's window is the active one (the UI replaces this)."""
        self._merger = Merger(merge_window)
        self._queue: asyncio.Queue[Event | _Deliver | None] = asyncio.Queue()  # None: close
        self._held: deque[Notice] = deque(maxlen=HELD_MAX)
        self._asking = False
        self._unsubscribe: Callable[[], None] | None = None
        self._signed_out: set[tuple[str, str | None]] = set()
        self.shown: list[tuple[Notice, str]] = []
        """Every notice delivered, with the link that delivered it (newest last)."""
        self.consent: Callable[[], Awaitable[bool | None]] | None = None
        """Asked before the first notice is delivered (the window's first-time question):
        ``True`` delivers it and every later one, ``False`` drops it (the answer is remembered
        by the asker); ``None`` (nobody could be asked) holds it back (the newest
        :data:`HELD_MAX`, see :meth:`deliver_held`) and asks again next time."""

    @property
    def listening(self) -> bool:
        """Whether :meth:`start` was called (and not :meth:`stop`)."""
        return self._unsubscribe is not None

    def start(self) -> None:
        """Listen to the event bus (idempotent)."""
        if self._unsubscribe is None:
            self._unsubscribe = self._events.subscribe(self._queue.put_nowait)

    def stop(self) -> None:
        """Stop listening; events already received are still delivered by :meth:`aclose`."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    async def run(self) -> None:
        """Deliver notices as events arrive and merged ones when their window ends, until
        :meth:`aclose`."""
        while True:
            due = self._merger.due_at()
            timeout = None if due is None else max((due - self._clock.now()).total_seconds(), 0)
            try:
                event = await asyncio.wait_for(self._queue.get(), timeout)
            except TimeoutError:
                await self.tick()
                continue
            if event is None:
                return
            if isinstance(event, _Deliver):
                try:
                    await self._deliver_held()
                finally:
                    if not event.done.done():
                        event.done.set_result(None)
                continue
            await self.handle(event)

    async def deliver_held(self) -> None:
        """Deliver now, in turn with the events :meth:`run` is delivering, every notice held
        back because nobody could be asked (a face that takes notices has come: ``tasks
        watch --notify``) and the merged notice a burst still holds (that face is about to
        go). Returns once they are delivered (or held back again)."""
        ask = _Deliver()
        self._queue.put_nowait(ask)
        await ask.done

    async def _deliver_held(self) -> None:
        held = list(self._held)  # what is held back again (nobody to ask yet) waits anew
        self._held.clear()
        for notice in held:
            await self._show(notice)
        await self.tick(force=True)

    async def aclose(self, running: asyncio.Future[None] | None = None) -> None:
        """Stop listening, deliver every event received and every held notice now. Pass the
        task that runs :meth:`run` to let it finish what it is delivering first."""
        self.stop()
        if running is not None and not running.done():
            if self._asking:  # the app closes while the first-time question is open: no answer
                running.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await running
                return
            self._queue.put_nowait(None)
            await running
        while not self._queue.empty():
            event = self._queue.get_nowait()
            if isinstance(event, _Deliver):
                event.done.set_result(None)
            elif event is not None:
                await self.handle(event)
        await self.tick(force=True)

    async def handle(self, event: Event) -> None:
        """Turn one event into notices (or none)."""
        prefs = self._prefs()
        occurrences = await self._occurrences(event, prefs)
        if not occurrences:
            return
        active = self.window_active()
        for occurrence in occurrences:
            if not should_notify(occurrence, prefs, window_active=active):
                continue
            notice = self._merger.offer(occurrence, self._clock.now(), show_names=prefs.show_names)
            if notice is not None:
                await self._show(notice)

    async def tick(self, *, force: bool = False) -> None:
        """Deliver the merged notice whose window has passed (all held ones with ``force``)."""
        notice = self._merger.flush(
            self._clock.now(), show_names=self._prefs().show_names, force=force
        )
        if notice is not None:
            await self._show(notice)

    async def _show(self, notice: Notice) -> None:
        if self.consent is not None:
            ask, self.consent = self.consent, None
            self._asking = True
            try:
                allowed = await ask()
            finally:
                self._asking = False
            if allowed is None:
                self.consent = ask
                self._held.append(notice)
                log.info("a notice is held back: nobody could be asked whether to notify yet")
                return
            if not allowed:
                log.info("notifications declined by the user")
                return
        if not should_deliver(self._prefs()):
            return
        link = await self._sink.show(notice)
        self.shown.append((notice, link))

    async def _occurrences(self, event: Event, prefs: NotifyPrefs) -> list[Occurrence]:
        if isinstance(event, ApprovalRequested):
            return [
                Occurrence(
                    NotifyKind.APPROVAL_NEEDED,
                    conversation_id=event.request.conversation_id,
                    server=event.request.server_alias,
                    tool=event.request.tool,
                )
            ]
        if not isinstance(event, TaskDidChange):
            return []
        record = event.record
        kinds = task_change_kinds(record, event.previous_state, event.new_inputs)
        account = (record.server_id, record.credential_profile_id)
        if needs_sign_in(record):
            if account not in self._signed_out:
                self._signed_out.add(account)
                kinds.append(NotifyKind.SIGN_IN_NEEDED)
        elif not record.is_terminal:
            self._signed_out.discard(account)  # a poll went through: signed in again
        if not kinds:
            return []
        server = None
        if prefs.show_names:
            found = await self._catalog.get_server(record.server_id)
            server = found.alias if found is not None else None
        return [
            Occurrence(
                kind,
                record_id=record.id,
                conversation_id=record.conversation_id,
                server=server,
                tool=None if kind is NotifyKind.SIGN_IN_NEEDED else record.tool,
            )
            for kind in kinds
        ]


def should_deliver(prefs: NotifyPrefs) -> bool:
    """Whether anything may be shown at all (the user may have just said never)."""
    return prefs.when is not WhenToNotify.NEVER
