"""The connections' listen streams, as the monitor uses them: which tasks it puts on them,
which connections it opens for them, and whether a task is covered (its server reports its
changes, so a poll is a safety net only)."""

from __future__ import annotations

from mooring.core.ports import Gateway
from mooring.core.tasks.reconcile import ServerTask
from mooring.core.tasks.record import TaskRecord
from mooring.services.polling.background import Background
from mooring.services.polling.recall import ServerDirectory


class ListenStreams:
    """Per (server, account) with tasks put on its stream: whether it was connected."""

    def __init__(
        self, *, gateway: Gateway, servers: ServerDirectory, background: Background
    ) -> None:
        self._gateway = gateway
        self._servers = servers
        self._background = background
        self._streams: dict[tuple[str, str | None], bool] = {}
        self._running = False

    def open(self) -> None:
        """The monitor's loop runs: the gateway holds task notification streams (a one-shot
        command that never runs the loop opens none), and connects those with tasks on them."""
        self._running = True
        self._gateway.want_task_notifications(True)
        for key in self._streams:
            self._connect_soon(key)

    def close(self) -> None:
        """The monitor's loop ended: no more streams wanted."""
        self._running = False
        self._gateway.want_task_notifications(False)

    def expect(self, record: TaskRecord) -> bool:
        """Put a running task on its server's listen stream before its first poll: the
        stream's replay re-reads it as the stream opens, and once the server accepts it the
        first poll moves out to the safety net (a thousand tasks: one stream each server, not
        a thousand requests). A task asking for input, or one whose last read failed, is
        polled as usual. Whether it was put on a stream."""
        if (
            record.task_id is None
            or record.server_status != "working"
            or record.flags
            or record.cancel_requested
        ):
            return False
        key = (record.server_id, record.credential_profile_id)
        self._streams.setdefault(key, False)
        self._connect_soon(key)
        self._gateway.expect_task(
            record.server_id,
            record.credential_profile_id,
            ServerTask(
                task_id=record.task_id,
                status=record.server_status,
                status_message=record.status_message,
                created_at=record.server_created_at,
                last_updated_at=record.server_updated_at,
                ttl_ms=record.ttl_ms,
                poll_interval_ms=record.poll_interval_ms,
            ),
        )
        return True

    def covered(self, record: TaskRecord) -> bool:
        """Whether the record's server reports its changes on an open stream."""
        return record.task_id is not None and self._gateway.task_covered(
            record.server_id, record.credential_profile_id, record.task_id
        )

    def _connect_soon(self, key: tuple[str, str | None]) -> None:
        """Connect to a server with tasks put on its stream, in the background: its stream
        opens (and re-reads them) before their first polls are due."""
        if self._streams.get(key, True) or not self._running:
            return
        self._streams[key] = True

        async def connect() -> None:
            await self._servers.connect(*key)

        self._background.spawn(connect())
