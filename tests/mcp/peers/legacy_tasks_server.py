"""A 2025-11-25 Tasks server (SEP-1686) whose tasks outlive its process: a test peer.

The reference "everything" server keeps its tasks in memory per session, so they die with the
host's stdio child or HTTP session. Durable servers exist (a database behind ``mcp`` 1.2x's
``TaskStore``); this peer is one, small enough to read: raw newline-delimited JSON-RPC over
stdio, every task in a JSON file, so a host killed mid-task and relaunched (which starts this
server anew) finds its task again. Written to the 2025-11-25 schema, not to Mooring's code:

* ``initialize`` → ``capabilities.tasks.requests.tools.call``; ``server/discover`` → -32601;
* ``tools/list`` → ``slow_job`` (``taskSupport: optional``), ``ask_job`` and ``muse_job``
  (``required``; a form and a sampling question), plain ``progress_job``, ``silent_job``,
  ``sample_job`` and ``form_job``;
* ``tools/call`` with ``params.task`` → ``{"task": Task}``; without → a plain result
  (``slow_job`` only), ``-32601`` for ``ask_job``;
* ``tasks/get`` → ``Task`` (``ttl``, ``pollInterval``); ``tasks/cancel`` → ``Task``, or
  ``-32602`` for an ended task; ``tasks/result`` → blocks until the task ends, asking the
  task's question (``elicitation/create`` with ``related-task``) on the way; asked again on every
  new ``tasks/result`` until answered.

``--protocol 2025-06-18`` makes it a server from before Tasks: no ``tasks`` capability, no
``execution`` on tools, every call plain.

``--grow`` also lists ``grow_tools``: a plain call that adds a tool and a prompt called
``name`` and sends ``notifications/tools/list_changed`` and ``notifications/prompts/
list_changed`` (it offers prompts only then).

``--requests FILE`` appends every request (method, tool) as a JSON line: the count of
``tools/call`` a test asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import json
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RELATED = "io.modelcontextprotocol/related-task"
ASKING = ("ask_job", "muse_job")
"""Task tools that ask one question: a form (``ask_job``) or a model reply (``muse_job``)."""
TERMINAL = {"completed", "failed", "cancelled"}


def iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


class Store:
    """Tasks in a JSON file, read and written whole under a file lock."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @contextlib.contextmanager
    def tasks(self) -> Iterator[dict[str, dict[str, Any]]]:
        with self.path.with_suffix(".lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            data = json.loads(self.path.read_text()) if self.path.exists() else {}
            yield data
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(data))
            tmp.replace(self.path)

    def snapshot(self, task_id: str) -> dict[str, Any] | None:
        with self.tasks() as tasks:
            task = tasks.get(task_id)
            if task is not None:
                advance(task)
            return dict(task) if task is not None else None


def advance(task: dict[str, Any]) -> None:
    """Move a task on by the clock (work happens "in the background", across processes)."""
    now = time.time()
    if task["status"] in TERMINAL:
        return
    if task["tool"] in ASKING and task.get("answer") is None:
        task["status"], task["message"] = "input_required", "Which colour?"
        return
    if now >= task["finish_at"]:
        task["status"], task["message"] = "completed", "done"
        text = f"{task['tool']} finished"
        if task.get("answer") is not None:
            text += f" with {json.dumps(task['answer'].get('content'))}"
        task["result"] = {"content": [{"type": "text", "text": text}], "isError": False}
    else:
        task["status"], task["message"] = "working", "busy"
    task["updated"] = now


def wire(task: dict[str, Any]) -> dict[str, Any]:
    return {
        "taskId": task["id"],
        "status": task["status"],
        "statusMessage": task["message"],
        "createdAt": iso(task["created"]),
        "lastUpdatedAt": iso(task["updated"]),
        "ttl": 600000,
        "pollInterval": 100,
    }


TOOLS = [
    {
        "name": "slow_job",
        "description": "Works for `seconds`.",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
        "execution": {"taskSupport": "optional"},
    },
    {
        "name": "progress_job",
        "description": "A plain call: works for `seconds`, reporting progress every `every` s.",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
    },
    {
        "name": "silent_job",
        "description": "A plain call: works for `seconds` without a word.",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
    },
    {
        "name": "sample_job",
        "description": "A plain call that asks the client's model for a haiku about `topic`.",
        "inputSchema": {"type": "object", "properties": {"topic": {"type": "string"}}},
    },
    {
        "name": "form_job",
        "description": "A plain call that asks the user for a colour (form elicitation).",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "ask_job",
        "description": "Asks a question, then finishes.",
        "inputSchema": {"type": "object", "properties": {}},
        "execution": {"taskSupport": "required"},
    },
    {
        "name": "muse_job",
        "description": "A task that asks the client's model for a line, then finishes.",
        "inputSchema": {"type": "object", "properties": {}},
        "execution": {"taskSupport": "required"},
    },
]


GROW_TOOL = {
    "name": "grow_tools",
    "description": "Adds a tool called `name` and says the tool list changed.",
    "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
}


class Server:
    def __init__(
        self, store: Store, log: Path | None, protocol: str = "2025-11-25", *, grow: bool = False
    ) -> None:
        self.grown: list[dict[str, Any]] = [GROW_TOOL] if grow else []
        self.prompts: list[dict[str, Any]] = []
        self.protocol = protocol
        self.store = store
        self.log = log
        self.out_lock = asyncio.Lock()
        self.pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.ids = 0
        self.handlers: dict[str, asyncio.Task[None]] = {}
        self.cancelled = asyncio.Event()
        """Set when this process cancels a task (a held ``tasks/result`` answers at once)."""

    def forget(self, key: str) -> Callable[[asyncio.Task[None]], None]:
        def done(_job: asyncio.Task[None]) -> None:
            self.handlers.pop(key, None)

        return done

    async def send(self, message: dict[str, Any]) -> None:
        async with self.out_lock:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
            sys.stdout.flush()

    def record(self, method: str, params: dict[str, Any]) -> None:
        if self.log is not None:
            line = {"method": method, "tool": params.get("name"), "pid": os.getpid()}
            with self.log.open("a") as f:
                f.write(json.dumps(line) + "\n")

    async def handle(self, message: dict[str, Any]) -> None:
        if "method" not in message:  # a reply to one of our questions
            future = self.pending.pop(str(message.get("id")), None)
            if future is not None and not future.done():
                future.set_result(message)
            return
        method, params = message["method"], message.get("params") or {}
        if "id" not in message:
            if method == "notifications/cancelled":
                self.record(method, params)
                handler = self.handlers.get(str(params.get("requestId")))
                if handler is not None:
                    handler.cancel()  # never answered: the client stopped waiting
            return
        self.record(method, params)
        try:
            result = await self.dispatch(method, params)
        except Fault as fault:
            await self.send(
                {"id": message["id"], "error": {"code": fault.code, "message": fault.text}}
            )
        else:
            await self.send({"id": message["id"], "result": result})

    async def dispatch(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "initialize":
            capabilities: dict[str, Any] = {"tools": {}}
            if self.grown:
                capabilities["prompts"] = {"listChanged": True}
            if self.protocol == "2025-11-25":
                capabilities["tasks"] = {
                    "list": {},
                    "cancel": {},
                    "requests": {"tools": {"call": {}}},
                }
            return {
                "protocolVersion": self.protocol,
                "capabilities": capabilities,
                "serverInfo": {"name": "legacy-tasks-peer", "version": "1.0"},
            }
        if method == "ping":
            return {}
        if method == "tools/list":
            if self.protocol != "2025-11-25":  # no tasks before 2025-11-25: no execution field
                return {"tools": [{k: v for k, v in t.items() if k != "execution"} for t in TOOLS]}
            return {"tools": TOOLS + self.grown}
        if method == "prompts/list":
            return {"prompts": self.prompts}
        if method == "tools/call":
            return await self.call(params)
        if method == "tasks/get":
            return wire(self.known(params))
        if method == "tasks/cancel":
            with self.store.tasks() as tasks:
                task = tasks.get(params.get("taskId", ""))
                if task is None:
                    raise Fault(-32602, "Task not found")
                advance(task)
                if task["status"] in TERMINAL:
                    raise Fault(-32602, f"Cannot cancel a task in status {task['status']}")
                task["status"], task["message"], task["updated"] = (
                    "cancelled",
                    "cancelled",
                    time.time(),
                )
                self.cancelled.set()
                return wire(task)
        if method == "tasks/result":
            return await self.result(params.get("taskId", ""))
        raise Fault(-32601, f"Method not found: {method}")

    def known(self, params: dict[str, Any]) -> dict[str, Any]:
        task = self.store.snapshot(params.get("taskId", ""))
        if task is None:
            raise Fault(-32602, "Failed to retrieve task: Task not found")
        return task

    async def call(self, params: dict[str, Any]) -> dict[str, Any]:
        name, arguments = params.get("name"), params.get("arguments") or {}
        seconds = float(arguments.get("seconds", 1.0))
        if name == "grow_tools" and self.grown:
            added = str(arguments.get("name", "grown"))
            self.grown.append({"name": added, "inputSchema": {"type": "object"}})
            await self.send({"method": "notifications/tools/list_changed"})
            self.prompts.append({"name": added, "description": "Grown"})
            await self.send({"method": "notifications/prompts/list_changed"})
            return {"content": [{"type": "text", "text": f"added {added}"}], "isError": False}
        if name in ("progress_job", "silent_job"):
            token = (params.get("_meta") or {}).get("progressToken")
            every = float(arguments.get("every", 0.2))
            end = time.monotonic() + seconds
            step = 0
            while time.monotonic() < end:
                await asyncio.sleep(min(every, max(end - time.monotonic(), 0)))
                step += 1
                if name == "progress_job" and token is not None:
                    note = {"progressToken": token, "progress": step, "total": seconds / every}
                    note["message"] = f"step {step}"
                    await self.send({"method": "notifications/progress", "params": note})
            return {"content": [{"type": "text", "text": f"{name} finished"}], "isError": False}
        if name == "sample_job":
            reply = await self.request(
                "sampling/createMessage",
                {
                    "messages": [
                        {
                            "role": "user",
                            "content": {
                                "type": "text",
                                "text": f"A haiku about {arguments.get('topic')}",
                            },
                        }
                    ],
                    "systemPrompt": "You are a poet.",
                    "modelPreferences": {"hints": [{"name": "claude"}], "speedPriority": 0.5},
                    "maxTokens": 64,
                },
            )
            if "error" in reply:
                text = f"declined: {reply['error'].get('code')} {reply['error'].get('message')}"
            else:
                result = reply["result"]
                text = f"model {result.get('model')} wrote: {result['content']['text']}"
            return {"content": [{"type": "text", "text": text}], "isError": False}
        if name == "form_job":
            reply = await self.request(
                "elicitation/create",
                {
                    "message": "Which colour?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"colour": {"type": "string"}},
                        "required": ["colour"],
                    },
                },
            )
            text = json.dumps(reply.get("result") or reply.get("error"))
            return {"content": [{"type": "text", "text": text}], "isError": False}
        if name not in ("slow_job", *ASKING):
            raise Fault(-32602, f"Unknown tool {name}")
        if "task" not in params:
            if name in ASKING:
                raise Fault(-32601, f"{name} must be called as a task")
            await asyncio.sleep(seconds)
            return {"content": [{"type": "text", "text": "slow_job finished"}], "isError": False}
        now = time.time()
        task = {
            "id": uuid.uuid4().hex,
            "tool": name,
            "status": "working",
            "message": "queued",
            "created": now,
            "updated": now,
            "finish_at": now + seconds if name == "slow_job" else now + 0.3,
            "answer": None,
        }
        with self.store.tasks() as tasks:
            tasks[task["id"]] = task
        return {"task": wire(task)}

    async def result(self, task_id: str) -> dict[str, Any]:
        while True:
            self.cancelled.clear()  # before reading: a cancel after this read is not missed
            task = self.known({"taskId": task_id})
            if task["status"] in TERMINAL:
                if task["status"] == "cancelled":
                    raise Fault(-32603, "The task was cancelled")
                return {**task["result"], "_meta": {RELATED: {"taskId": task_id}}}
            if task["status"] == "input_required":
                answer = await self.ask(task_id, task["tool"])
                with self.store.tasks() as tasks:
                    stored = tasks[task_id]
                    if stored.get("answer") is None and stored["status"] not in TERMINAL:
                        stored["answer"] = answer
                        stored["finish_at"] = time.time() + 0.3
                        stored["status"], stored["message"] = "working", "thanks"
                continue
            # The job runs until ``finish_at`` (its simulated length); a cancel from this
            # process ends the wait at once, one from another process at ``finish_at``.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self.cancelled.wait(), max(task["finish_at"] - time.time(), 0)
                )

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send the client a request and wait for its reply (result or error)."""
        self.ids += 1
        request_id = f"r{os.getpid()}-{self.ids}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[request_id] = future
        await self.send({"id": request_id, "method": method, "params": params})
        return await future

    async def ask(self, task_id: str, tool: str) -> dict[str, Any]:
        related = {RELATED: {"taskId": task_id}}
        if tool == "muse_job":
            reply = await self.request(
                "sampling/createMessage",
                {
                    "messages": [
                        {"role": "user", "content": {"type": "text", "text": "A line on rain"}}
                    ],
                    "maxTokens": 32,
                    "_meta": related,
                },
            )
            if "error" in reply:
                return {"content": f"no line ({reply['error'].get('code')})"}
            return {"content": reply["result"]["content"]["text"]}
        reply = await self.request(
            "elicitation/create",
            {
                "message": "Which colour should the job use?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"colour": {"type": "string"}},
                    "required": ["colour"],
                },
                "_meta": related,
            },
        )
        if "error" in reply:
            return {"action": "cancel"}
        return dict(reply.get("result") or {})


class Fault(Exception):
    def __init__(self, code: int, text: str) -> None:
        super().__init__(text)
        self.code = code
        self.text = text


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--requests", type=Path)
    parser.add_argument("--protocol", default="2025-11-25", help="e.g. 2025-06-18: no tasks")
    parser.add_argument("--grow", action="store_true", help="also list grow_tools")
    args = parser.parse_args()
    server = Server(Store(args.store), args.requests, args.protocol, grow=args.grow)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    running: set[asyncio.Task[None]] = set()
    while line := await reader.readline():
        if not line.strip():
            continue
        message = json.loads(line)
        job = asyncio.create_task(server.handle(message))
        running.add(job)
        job.add_done_callback(running.discard)
        if "method" in message and "id" in message:
            key = str(message["id"])
            server.handlers[key] = job
            job.add_done_callback(server.forget(key))


if __name__ == "__main__":
    asyncio.run(main())
