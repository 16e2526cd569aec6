"""Durable background execution of tasks: leases, resumption, cancellation, input waits.

Each task row names the instance that runs it (``lease_owner``) and until when
(``lease_expires_ms``). A running task renews its lease on every heartbeat; any instance that
starts (and every instance, periodically) claims active tasks whose lease ran out or whose owner
process is gone, and resumes them from their last checkpoint. Jobs never see the MCP request that
created them: they get a :class:`JobContext` and the task's stored arguments.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
import anyio.abc
from anyio.abc import TaskStatus
from pydantic import BaseModel

from mooring.demo_server.config import ServerConfig
from mooring.demo_server.store import LeaseLostError, Store, TaskRow
from mooring.demo_server.wire import INTERNAL_ERROR, now_ms

logger = logging.getLogger("mooring.demo_server.runner")

StopReason = Literal["cancel", "lost"]


class JobError(Exception):
    """A JSON-RPC error inside a task: the task ends ``failed`` with this error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_error(self) -> dict[str, Any]:
        """The JSON-RPC error object."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class NeedsTaskError(Exception):
    """A job asked for input while running inline (without a task): it cannot wait."""


class JobContext:
    """What a running job may do: report status, checkpoint, ask for input, pause.

    The base class is the inline (no task) flavour used when a client without the Tasks
    extension calls a tool that can also run synchronously: status is dropped, checkpoints
    just commit, and asking for input is impossible.
    """

    def __init__(
        self, store: Store, config: ServerConfig, state: Mapping[str, Any] | None = None
    ) -> None:
        self.store = store
        self.config = config
        self.state: dict[str, Any] = dict(state or {})

    @property
    def task_id(self) -> str | None:
        """The task this job runs as, if any."""
        return None

    @property
    def cancel_requested(self) -> bool:
        """Whether the job is being stopped because a client cancelled the task."""
        return False

    @property
    def samples_dir(self) -> Path | None:
        """Where relative input paths are looked up first."""
        return self.config.samples_dir

    async def status(self, message: str) -> None:
        """Report progress (``statusMessage``)."""

    async def checkpoint(
        self, build: Callable[[Any], tuple[Mapping[str, Any], str | None]]
    ) -> Mapping[str, Any]:
        """Commit ``build``'s writes with the state it returns, atomically."""
        store = self.store

        def run() -> Mapping[str, Any]:
            with store.transaction() as conn:
                state, _message = build(conn)
            return state

        state = await anyio.to_thread.run_sync(run)
        self.state = dict(state)
        return state

    async def ask(self, requests: Mapping[str, Any], message: str | None = None) -> dict[str, Any]:
        """Wait for answers to every request (``inputRequests`` keys); impossible inline."""
        raise NeedsTaskError("this tool needs input and can only run as a task")

    async def pause(self, seconds: float) -> None:
        """Wait (pacing between checkpoints); cancellable."""
        if seconds > 0:
            await anyio.sleep(seconds)


JobRun = Callable[[JobContext, dict[str, Any]], Awaitable[dict[str, Any]]]
"""A job: from its context and stored arguments to a ``CallToolResult`` (JSON); or JobError."""


@dataclass(frozen=True)
class JobSpec:
    """A tool that can run as a task."""

    name: str
    run: JobRun
    args_model: type[BaseModel]
    task_support: Literal["required", "optional"]
    cancel_message: Callable[[Mapping[str, Any]], str] = lambda _state: "Cancelled by request."
    initial_message: str = "Queued."


@dataclass
class _Running:
    scope: anyio.CancelScope
    stop_reason: StopReason | None = None
    wake: anyio.Event = field(default_factory=anyio.Event)
    seen_responses: dict[str, Any] = field(default_factory=dict)

    def stop(self, reason: StopReason) -> None:
        if self.stop_reason is None:
            self.stop_reason = reason
        self.scope.cancel()

    def poke(self) -> None:
        self.wake.set()
        self.wake = anyio.Event()


class ChangeFeed:
    """In-process "some task changed" signal for listen streams (they re-read the store)."""

    def __init__(self) -> None:
        self._event = anyio.Event()

    def publish(self) -> None:
        """Wake every current waiter."""
        event, self._event = self._event, anyio.Event()
        event.set()

    async def wait(self, timeout_s: float) -> None:
        """Return at the next change, or after ``timeout_s`` (to catch other instances' changes)."""
        event = self._event
        with anyio.move_on_after(timeout_s):
            await event.wait()


class _DurableJobContext(JobContext):
    def __init__(self, runner: TaskRunner, task: TaskRow, running: _Running) -> None:
        super().__init__(runner.store, runner.config, task.state)
        self._runner = runner
        self._task_id = task.task_id
        self._running = running

    @property
    def task_id(self) -> str | None:
        return self._task_id

    @property
    def cancel_requested(self) -> bool:
        return self._running.stop_reason == "cancel"

    async def status(self, message: str) -> None:
        await self.store.run(
            self.store.set_status_message, self._task_id, self._runner.owner, message
        )
        self._runner.changes.publish()

    async def checkpoint(
        self, build: Callable[[Any], tuple[Mapping[str, Any], str | None]]
    ) -> Mapping[str, Any]:
        state = await self.store.run(
            self.store.checkpoint, self._task_id, self._runner.owner, build
        )
        self.state = dict(state)
        self._runner.changes.publish()
        return state

    async def ask(self, requests: Mapping[str, Any], message: str | None = None) -> dict[str, Any]:
        while True:
            task = await self.store.run(
                self.store.add_input_requests, self._task_id, self._runner.owner, requests, message
            )
            self._runner.changes.publish()
            answers = {
                key: task.input_responses[key] for key in requests if key in task.input_responses
            }
            if len(answers) == len(requests):
                return answers
            self._running.seen_responses = dict(task.input_responses)
            wake = self._running.wake
            with anyio.move_on_after(self.config.heartbeat_s):
                await wake.wait()


def _new_owner() -> str:
    return f"{socket.gethostname()}/{os.getpid()}/{secrets.token_hex(4)}"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        # A killed child its parent has not reaped yet is a zombie: dead for our purposes.
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[0] != "Z"


class TaskRunner:
    """Runs, resumes and settles the tasks of one server instance."""

    def __init__(self, store: Store, config: ServerConfig, jobs: Mapping[str, JobSpec]) -> None:
        self.store = store
        self.config = config
        self.jobs = dict(jobs)
        self.owner = _new_owner()
        self.changes = ChangeFeed()
        self._running: dict[str, _Running] = {}
        self._tg: anyio.abc.TaskGroup | None = None

    async def serve(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run jobs and the periodic scan until cancelled; leases are released on the way out."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            task_status.started()
            while True:
                try:
                    await self.scan()
                except Exception:  # a failed scan (e.g. a locked store) must not end the server
                    logger.exception("task scan failed")
                await anyio.sleep(self.config.scan_s)

    def start(self, task: TaskRow) -> None:
        """Start running a task this instance owns."""
        if self._tg is None:
            raise RuntimeError("the task runner is not serving")
        self._tg.start_soon(self._run, task.task_id)

    def is_running(self, task_id: str) -> bool:
        """Whether this instance is running the task right now."""
        return task_id in self._running

    def cancel_local(self, task_id: str) -> bool:
        """Stop a task this instance runs because a client cancelled it."""
        running = self._running.get(task_id)
        if running is None:
            return False
        running.stop("cancel")
        return True

    def poke(self, task_id: str) -> None:
        """Wake a job waiting for input (answers arrived)."""
        running = self._running.get(task_id)
        if running is not None:
            running.poke()

    def owner_gone(self, task: TaskRow, at_ms: int) -> bool:
        """Whether nobody runs the task: no owner, an expired lease, or a dead owner process."""
        if task.lease_owner is None or task.lease_expires_ms <= at_ms:
            return True
        if task.lease_owner == self.owner:
            return False
        host, _, rest = task.lease_owner.partition("/")
        pid_text = rest.partition("/")[0]
        if host != socket.gethostname() or not pid_text.isdigit():
            return False
        pid = int(pid_text)
        return pid == os.getpid() or not _pid_alive(pid)

    async def scan(self) -> None:
        """Purge expired tasks, settle orphaned cancel requests, claim and resume abandoned ones."""
        at = now_ms()
        for task_id in await self.store.run(
            self.store.expired_task_ids, at, self.config.faults.forget_after_ms
        ):
            self.expunge_local(task_id)
            await self.store.run(self.store.delete_task, task_id)
        for task in await self.store.run(self.store.active_tasks):
            if self.is_running(task.task_id) or not self.owner_gone(task, at):
                continue
            if task.cancel_requested:
                await self.cancel_orphan(task)
                continue
            claimed = await self.store.run(
                self.store.claim, task.task_id, self.owner, task.lease_owner, self.config.lease_ms
            )
            if claimed is not None:
                logger.info(
                    "resuming task %s (%s) from its last checkpoint", claimed.task_id, claimed.tool
                )
                self.start(claimed)

    def expunge_local(self, task_id: str) -> None:
        """Stop running a task that is being deleted."""
        running = self._running.get(task_id)
        if running is not None:
            running.stop("lost")

    async def cancel_orphan(self, task: TaskRow) -> None:
        """Cancel a task nobody runs (its owner is gone)."""
        spec = self.jobs.get(task.tool)
        message = spec.cancel_message(task.state) if spec is not None else "Cancelled by request."
        if await self.store.run(
            self.store.finish, task.task_id, task.lease_owner, "cancelled", message
        ):
            self.changes.publish()

    async def _run(self, task_id: str) -> None:
        task = await self.store.run(self.store.get_task, task_id)
        if (
            task is None
            or task.terminal
            or task.lease_owner != self.owner
            or self.is_running(task_id)
        ):
            return
        # Registered before any await, so a tasks/cancel arriving from now on finds the job.
        running = _Running(scope=anyio.CancelScope())
        self._running[task_id] = running
        spec = self.jobs.get(task.tool)
        if spec is None or task.cancel_requested:
            self._running.pop(task_id, None)
            if spec is None:
                error = _internal(f"unknown tool {task.tool!r}")
                await self._finish(task_id, "failed", "Unknown tool", error=error)
            else:
                await self._finish(task_id, "cancelled", spec.cancel_message(task.state))
            return
        context = _DurableJobContext(self, task, running)
        outcome: list[tuple[str, dict[str, Any]] | None] = []
        try:
            with running.scope:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._heartbeat, task.task_id, running)
                    outcome.append(await self._execute(spec, context, task))
                    tg.cancel_scope.cancel()
        finally:
            self._running.pop(task.task_id, None)
            with anyio.CancelScope(shield=True):
                await self._settle(task, spec, context, running, outcome[0] if outcome else None)

    async def _execute(
        self, spec: JobSpec, context: JobContext, task: TaskRow
    ) -> tuple[str, dict[str, Any]] | None:
        try:
            result = await spec.run(context, dict(task.arguments))
        except LeaseLostError:
            return None
        except JobError as exc:
            return "failed", exc.to_error()
        except NeedsTaskError as exc:
            return "failed", _internal(str(exc))
        except Exception as exc:  # a job crash ends its task failed, not the server
            logger.exception("task %s (%s) crashed", task.task_id, task.tool)
            return "failed", _internal(f"{type(exc).__name__}: {exc}")
        return "completed", result

    async def _settle(
        self,
        task: TaskRow,
        spec: JobSpec,
        context: JobContext,
        running: _Running,
        outcome: tuple[str, dict[str, Any]] | None,
    ) -> None:
        try:
            if outcome is not None:
                status, payload = outcome
                if status == "completed":
                    await self._finish(task.task_id, "completed", _summary(payload), result=payload)
                else:
                    await self._finish(
                        task.task_id, "failed", str(payload.get("message")), error=payload
                    )
            elif running.stop_reason == "cancel":
                await self._finish(task.task_id, "cancelled", spec.cancel_message(context.state))
            elif running.stop_reason is None:
                # Shutting down: hand the task to whichever instance starts next.
                await self.store.run(self.store.release, task.task_id, self.owner)
        except Exception:  # settling must never take the server down
            logger.exception("could not settle task %s", task.task_id)

    async def _finish(
        self,
        task_id: str,
        status: str,
        message: str,
        *,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> None:
        await self.store.run(
            self.store.finish, task_id, self.owner, status, message, result=result, error=error
        )
        self.changes.publish()

    async def _heartbeat(self, task_id: str, running: _Running) -> None:
        while True:
            await anyio.sleep(self.config.heartbeat_s)
            try:
                task = await self.store.run(
                    self.store.heartbeat, task_id, self.owner, self.config.lease_ms
                )
            except LeaseLostError:
                running.stop("lost")
                return
            if task.cancel_requested:
                running.stop("cancel")
                return
            if task.input_responses != running.seen_responses:
                running.seen_responses = dict(task.input_responses)
                running.poke()


def _internal(message: str) -> dict[str, Any]:
    return {"code": INTERNAL_ERROR, "message": message}


def _summary(result: Mapping[str, Any]) -> str:
    for block in result.get("content") or []:
        if isinstance(block, dict) and block.get("type") == "text":
            text = str(block.get("text", "")).partition("\n")[0]
            return text if len(text) <= 200 else text[:199] + "…"
    return "Completed."
