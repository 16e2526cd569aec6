"""Local models: a GGUF file run by llama.cpp in a child process, spoken to on the OpenAI wire.

:class:`LocalModelRuntime` starts ``python -m mooring.local_model`` (in a frozen bundle, the
bundle's ``mooring local-model``) for a model file on first use (one process per file), waits
for its ``/health``, and stops it once no reply has needed it for ``idle_stop_s`` (and when
Mooring's host stops). The child listens on 127.0.0.1 only, with a
random key made for each start (given by environment, never stored) and no CORS, and ends by
itself when its standard input closes, so a Mooring that dies never leaves it behind.
Inference runs in that process: it never blocks Mooring's loop, and a crash of llama.cpp cannot
take Mooring down.

:class:`LocalChatProvider` is the ``ChatProvider`` of a ``local`` provider: the OpenAI adapter
against the child, with the tool calls a small model writes as ``<tool_call>`` text read into
real tool calls (``core/tool_call_text.py``), so they go through the same approval as any other.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import time
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, cast

from mooring.adapters.launcher import local_model_command
from mooring.adapters.providers.common import ProviderOptions
from mooring.core.chat import (
    ChatRequest,
    ProviderConfig,
    ProviderError,
    ProviderFailure,
    ProviderKind,
    ReplyDone,
    ReplyEvent,
    StopReason,
    TextDelta,
    ToolCallRequest,
)
from mooring.core.providers import local_model_path
from mooring.core.tool_call_text import ToolCallTextFilter, parse_tool_call_text

if TYPE_CHECKING:
    from mooring.adapters.providers.openai_chat import OpenAIChatProvider

log = logging.getLogger("mooring.providers.local")

KEY_VARIABLE = "MOORING_LOCAL_MODEL_KEY"
"""The child's key variable (``mooring/local_model/__main__.py`` reads the same name)."""


UNNAMED_CALL = "unnamed_tool_call"
"""The name of a ``<tool_call>`` block that named no tool (answered with an error, never run)."""


@dataclass(frozen=True, slots=True)
class LocalEndpoint:
    """Where a running local model answers, and the key it asks for."""

    base_url: str
    """``http://127.0.0.1:PORT/v1``."""
    api_key: str
    pid: int


class _Child:
    """One model process and who is using it."""

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.process: asyncio.subprocess.Process | None = None
        self.endpoint: LocalEndpoint | None = None
        self.users = 0
        self.idle: asyncio.TimerHandle | None = None
        self.stopping: asyncio.Task[None] | None = None
        self.down = asyncio.Event()
        """Set while no process runs."""
        self.down.set()

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.returncode is None


class LocalModelRuntime:
    """The local model processes of one host: started on first use, stopped when idle."""

    def __init__(
        self,
        *,
        idle_stop_s: float = 300.0,
        context_tokens: int = 4096,
        threads: int = 0,
        log_file: Path | None = None,
        start_timeout_s: float = 180.0,
        command: Callable[..., list[str]] = local_model_command,
    ) -> None:
        self.idle_stop_s = idle_stop_s
        self.context_tokens = context_tokens
        self.threads = threads
        self.log_file = log_file
        self.start_timeout_s = start_timeout_s
        self.command = command
        """Makes the child's command line from its arguments: ``python -m
        mooring.local_model``, or in a frozen bundle the bundle's own ``mooring local-model``."""
        self._children: dict[Path, _Child] = {}
        self.starts = 0
        """How many processes were started (tests and the bench read it)."""

    def endpoint(self, model: Path) -> LocalEndpoint | None:
        """The running process of ``model`` (``None``: none runs)."""
        child = self._children.get(model)
        return child.endpoint if child is not None and child.running else None

    async def wait_stopped(self, model: Path) -> None:
        """Until no process of ``model`` runs (e.g. it stopped after the idle time)."""
        child = self._children.get(model)
        if child is not None:
            await child.down.wait()

    async def acquire(self, model: Path) -> LocalEndpoint:
        """The running process of ``model``, started if need be; the caller must
        :meth:`release` it when its reply is done (idle time counts from then)."""
        child = self._children.setdefault(model, _Child())
        if child.idle is not None:
            child.idle.cancel()
            child.idle = None
        child.users += 1
        try:
            async with child.lock:
                if child.stopping is not None:
                    await child.stopping
                if not child.running or child.endpoint is None:
                    await self._start(model, child)
                assert child.endpoint is not None
                return child.endpoint
        except BaseException:
            self.release(model)
            raise

    def release(self, model: Path) -> None:
        """A reply is done with ``model``'s process: it stops after the idle time unless
        another reply comes."""
        child = self._children.get(model)
        if child is None:
            return
        child.users = max(child.users - 1, 0)
        if child.users == 0 and child.running:
            loop = asyncio.get_running_loop()
            child.idle = loop.call_later(self.idle_stop_s, self._stop_idle, model)

    def _stop_idle(self, model: Path) -> None:
        child = self._children.get(model)
        if child is None or child.users or child.stopping is not None:
            return
        log.info("local model %s: idle for %.0f s, stopping it", model.name, self.idle_stop_s)
        child.stopping = asyncio.ensure_future(self._stop(child))

    async def aclose(self) -> None:
        """Stop every model process (the host is stopping)."""
        children = list(self._children.values())
        self._children.clear()
        for child in children:
            if child.idle is not None:
                child.idle.cancel()
            await (child.stopping or self._stop(child))

    async def _start(self, model: Path, child: _Child) -> None:
        if not await asyncio.to_thread(model.is_file):
            raise ProviderError(
                ProviderFailure.MODEL_NOT_FOUND,
                f"The model file {str(model)!r} is not there any more.",
            )
        key = secrets.token_urlsafe(24)
        env = {**os.environ, KEY_VARIABLE: key}
        command = self.command(
            "--model",
            str(model),
            "--ctx",
            str(self.context_tokens),
            "--threads",
            str(self.threads),
        )
        log.info("local model %s: starting", model.name)
        began = time.monotonic()
        stderr = await asyncio.to_thread(self._open_log)
        try:
            process = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL if stderr is None else stderr,
                env=env,
                start_new_session=True,  # a Ctrl+C in Mooring's terminal is Mooring's
            )
        finally:
            if stderr is not None:
                stderr.close()
        self.starts += 1
        child.process = process
        child.down.clear()
        child.stopping = None
        try:
            assert process.stdout is not None
            async with asyncio.timeout(self.start_timeout_s):
                line = await process.stdout.readline()
                said = _ready_line(line)
                url = said.get("url")
                if not isinstance(url, str):
                    raise _start_failed(model, str(said.get("error") or "it ended at once"))
                await _wait_healthy(url)
        except TimeoutError:
            await self._stop(child)
            raise _start_failed(
                model, f"it was not ready after {self.start_timeout_s:.0f} s"
            ) from None
        except BaseException:
            await self._stop(child)
            raise
        child.endpoint = LocalEndpoint(f"{url}/v1", key, process.pid)
        log.info(
            "local model %s: ready in %.1f s (pid %d)",
            model.name,
            time.monotonic() - began,
            process.pid,
        )

    def _open_log(self) -> BinaryIO | None:
        """llama.cpp's log: appended to ``log_file`` (``None``: dropped)."""
        if self.log_file is None:
            return None
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        return self.log_file.open("ab")

    async def _stop(self, child: _Child) -> None:
        """End the process: its standard input closed (it exits), then terminate, then kill."""
        process, child.process, child.endpoint = child.process, None, None
        try:
            if process is None or process.returncode is not None:
                return
            if process.stdin is not None:
                process.stdin.close()
            for ask in (None, process.terminate, process.kill):
                if ask is not None:
                    with contextlib.suppress(ProcessLookupError):
                        ask()
                try:
                    async with asyncio.timeout(5):
                        await process.wait()
                    break
                except TimeoutError:
                    continue
            log.info("local model process %d ended (%s)", process.pid, process.returncode)
        finally:
            child.stopping = None
            child.down.set()


def _ready_line(line: bytes) -> dict[str, object]:
    try:
        value = json.loads(line) if line.strip() else {}
    except ValueError:
        value = {}
    return value if isinstance(value, dict) else {}


def _start_failed(model: Path, why: str) -> ProviderError:
    return ProviderError(
        ProviderFailure.UNREACHABLE,
        f"The local model {model.name!r} could not start: {why}. "
        "Details are in the log folder (local-model.log).",
    )


async def _wait_healthy(url: str) -> None:
    """Until ``/health`` says ok (llama.cpp answers 503 while the model loads)."""
    import httpx2

    async with httpx2.AsyncClient(timeout=10) as client:
        delay = 0.02
        while True:
            try:
                reply = await client.get(f"{url}/health")
                if reply.status_code == 200:
                    return
            except httpx2.TransportError:
                pass
            await asyncio.sleep(delay)  # polling a readiness the server reports, bounded above
            delay = min(delay * 2, 0.5)


class LocalChatProvider:
    """A ``ChatProvider`` for a ``local`` provider: the OpenAI adapter against the model's
    process (started on first use), with ``<tool_call>`` text read into tool calls."""

    def __init__(
        self,
        config: ProviderConfig,
        runtime: LocalModelRuntime,
        *,
        options: ProviderOptions | None = None,
        call_id: Callable[[], str] | None = None,
    ) -> None:
        self.config = config
        self.runtime = runtime
        self.options = options or ProviderOptions()
        self.model = local_model_path(config)
        self._call_id = call_id or (lambda: f"call_{secrets.token_hex(8)}")
        self._inner: tuple[LocalEndpoint, OpenAIChatProvider] | None = None

    def _client(self, endpoint: LocalEndpoint) -> OpenAIChatProvider:
        from mooring.adapters.providers.openai_chat import OpenAIChatProvider

        if self._inner is not None and self._inner[0] == endpoint:
            return self._inner[1]
        wire = replace(self.config, kind=ProviderKind.OPENAI, base_url=endpoint.base_url)
        provider = OpenAIChatProvider(
            wire, api_key=endpoint.api_key, headers={}, options=self.options
        )
        self._inner = (endpoint, provider)
        return provider

    async def stream(self, request: ChatRequest) -> AsyncGenerator[ReplyEvent, None]:
        """Stream one reply; the model's process runs (or is started) until it ends."""
        endpoint = await self.runtime.acquire(self.model)
        try:
            async with aclosing(self._stream(endpoint, request)) as events:
                async for event in events:
                    yield event
        finally:
            self.runtime.release(self.model)

    async def _stream(
        self, endpoint: LocalEndpoint, request: ChatRequest
    ) -> AsyncGenerator[ReplyEvent, None]:
        if self._inner is not None and self._inner[0] != endpoint:
            # The process was started again (idle stop, crash): the old client is done.
            stale, self._inner = self._inner[1], None
            await stale.aclose()
        provider = self._client(endpoint)
        hidden = ToolCallTextFilter()
        async with aclosing(
            cast(AsyncGenerator[ReplyEvent, None], provider.stream(request))
        ) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    shown = hidden.feed(event.text)
                    if shown:
                        yield TextDelta(shown)
                    continue
                tail = hidden.finish()
                if tail:
                    yield TextDelta(tail)
                yield self.read_tool_calls(event)

    def read_tool_calls(self, done: ReplyDone) -> ReplyDone:
        """``done`` with the ``<tool_call>`` blocks of its text read as tool calls (the calls
        the server parsed itself are kept as they are)."""
        if done.tool_calls:
            return done
        found = parse_tool_call_text(done.text)
        if not found.calls:
            return done
        calls = tuple(
            ToolCallRequest(
                id=self._call_id(),
                name=call.name or UNNAMED_CALL,
                arguments=call.arguments,
                # What the model meant, for the context sent back to it and for the record.
                raw_arguments=call.raw.strip() if call.error else json.dumps(call.arguments),
                arguments_error=call.error,
            )
            for call in found.calls
        )
        log.info(
            "provider %s: %d tool calls read from the reply's text", self.config.id, len(calls)
        )
        return replace(
            done, text=found.text.strip(), tool_calls=calls, stop_reason=StopReason.TOOL_CALLS
        )

    async def list_models(self) -> list[str]:
        """The one model this provider runs (its process is not started to say so)."""
        return [self.config.model]

    async def aclose(self) -> None:
        inner, self._inner = self._inner, None
        if inner is not None:
            await inner[1].aclose()
