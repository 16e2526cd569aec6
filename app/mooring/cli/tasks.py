"""``mooring call`` and ``mooring tasks …``: start, follow, answer and cancel durable tasks."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
from typing import Any, Protocol

from mooring.cli.context import CliContext
from mooring.cli.exit_codes import ExitCode
from mooring.cli.render import by_prefix, exit_code_for, record_json, result_text, summary
from mooring.cli.terminal import in_daemon_thread
from mooring.core.errors import KnownError, NotFound
from mooring.core.events import AnswerDidSettle, Event, TaskDidChange
from mooring.core.tasks.inputs import TaskInput
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from mooring.services.follower import ADOPT_EVERY, Adopter

DECLINE = {"action": "decline"}
CANCEL = {"action": "cancel"}


def _short(record: TaskRecord) -> str:
    return record.id[:8]


async def _find(ctx: CliContext, key: str) -> TaskRecord:
    record = await ctx.ledger.find(key)
    if record is None:
        raise NotFound("task", key)
    return record


async def _final_output(ctx: CliContext, record: TaskRecord) -> ExitCode:
    shown = await record_json(ctx, record)
    if ctx.as_json:
        ctx.say(json.dumps(shown, indent=2))
    else:
        text = result_text(shown["result"])
        if text:
            ctx.say(text)
        if shown["error"]:
            ctx.say(f"error {shown['error'].get('code')}: {shown['error'].get('message')}")
    if record.state is LocalState.DENIED and shown["approval"] == "aborted":
        if not ctx.as_json:
            ctx.warn(
                "mooring: this call needs your approval and there is no terminal to ask on.\n"
                "  Run it in a terminal, or add a rule: mooring rules add SERVER TOOL allow"
            )
        return ExitCode.NEEDS_APPROVAL
    return exit_code_for(record, shown["result"])


# -- call ----------------------------------------------------------------------------------


async def call(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Call a tool; follow the task to its end unless ``--detach``."""
    server = await ctx.catalog.find_server(args.server)
    if server is None:
        raise KnownError(f"No server called {args.server!r}.", code="not_found")
    try:
        arguments = json.loads(args.args) if args.args else {}
    except ValueError as exc:
        raise KnownError(f"--args is not valid JSON: {exc}", code="usage") from exc
    if not isinstance(arguments, dict):
        raise KnownError("--args must be a JSON object.", code="usage")

    def persisted(record: TaskRecord) -> None:
        if not ctx.as_json:
            ctx.say(f"operation {record.id}")

    from mooring.cli.accounts import profile_id_for

    profile_id = await profile_id_for(ctx, server, args.account)
    record = await ctx.runner.call(
        server, args.tool, arguments, profile_id=profile_id, on_persisted=persisted
    )
    if not ctx.as_json:
        if record.task_id:
            ctx.say(f"task {record.task_id}")
        ctx.say(f"{_short(record)}: {summary(record)}")
    if args.detach or record.is_terminal or record.state is LocalState.UNKNOWN_OUTCOME:
        if args.detach and not record.is_terminal:
            if ctx.as_json:
                ctx.say(json.dumps(await record_json(ctx, record), indent=2))
            return ExitCode.OK
        return await _final_output(ctx, record)
    finals = await follow(ctx, [record], give_up_after=args.timeout)
    return await _final_output(ctx, finals[record.id])


# -- following -----------------------------------------------------------------------------


class Driver(Protocol):
    """What makes followed records change: the monitor (polling) or a database follower."""

    def track(self, record: TaskRecord, *, now: bool = False) -> None: ...
    async def run(self) -> None: ...
    async def stop(self) -> None: ...


async def follow(
    ctx: CliContext,
    records: list[TaskRecord],
    *,
    give_up_after: float | None = None,
    driver: Driver | None = None,
    wait_for_answers: bool = False,
) -> dict[str, TaskRecord]:
    """Watch records until each is terminal, printing every change.

    Without a terminal, a task that waits for an answer is left waiting (the caller exits
    with ``WAITING`` and says how to answer) unless ``wait_for_answers`` (someone answers
    elsewhere); ``give_up_after`` seconds stop following early. ``driver`` defaults to the
    monitor (this process polls).
    """
    try:
        async with asyncio.timeout(give_up_after):
            return await _follow(ctx, records, driver or ctx.monitor, wait_for_answers)
    except TimeoutError:
        return {r.id: (await ctx.ledger.get(r.id)) or r for r in records}


async def _follow(
    ctx: CliContext, records: list[TaskRecord], driver: Driver, wait_for_answers: bool
) -> dict[str, TaskRecord]:
    latest = {r.id: r for r in records}
    waiting_on_user: set[str] = set()
    queue: asyncio.Queue[Event] = asyncio.Queue()
    unsubscribe = ctx.events.subscribe(queue.put_nowait)
    scheduler = asyncio.create_task(driver.run())
    try:
        for record in records:
            driver.track(record, now=True)
            for item in await ctx.ledger.inputs(record.id):
                if (
                    item.awaiting_answer
                    and record.state is LocalState.INPUT_REQUIRED
                    and not await _ask(ctx, record, item)
                ):
                    waiting_on_user.add(record.id)

        def done() -> bool:
            return all(
                r.is_terminal
                or not r.is_monitored
                or (r.id in waiting_on_user and not wait_for_answers)
                for r in latest.values()
            )

        while not done():
            event = await queue.get()
            if isinstance(event, AnswerDidSettle) and event.record_id in latest:
                if not ctx.as_json:
                    ctx.say(f"{event.record_id[:8]}: answer {event.key!r}: {event.detail}")
                continue
            if not isinstance(event, TaskDidChange) or event.record.id not in latest:
                continue
            before = latest[event.record.id]
            latest[event.record.id] = event.record
            if ctx.as_json:
                continue
            if (
                event.state_changed
                or before.status_message != event.record.status_message
                or before.flags != event.record.flags
            ):
                ctx.say(f"{_short(event.record)}: {summary(event.record)}")
            if event.record.state is not LocalState.INPUT_REQUIRED:
                waiting_on_user.discard(event.record.id)
            for item in event.new_inputs:
                if not await _ask(ctx, event.record, item):
                    waiting_on_user.add(event.record.id)
    finally:
        unsubscribe()
        await driver.stop()
        scheduler.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await scheduler
    return latest


async def _ask(ctx: CliContext, record: TaskRecord, item: TaskInput) -> bool:
    """Ask the person at the terminal (True), or say how to answer from elsewhere (False)."""
    message = item.params.get("message") or f"{item.method} request"
    server = await ctx.catalog.get_server(record.server_id)
    asker = f"{server.alias if server else 'the server'} ({record.tool})"
    if not ctx.interactive:
        if not ctx.as_json:
            ctx.say(
                f"{_short(record)}: input required: {asker} asks ({item.key}): {message}\n"
                f"  answer with: mooring tasks answer {record.id} {item.key} --value '{{...}}'"
            )
        return False
    answer = await in_daemon_thread(_prompt, ctx, item, asker)
    settled = await ctx.monitor.answer(record.id, item.key, answer)
    ctx.say(f"{_short(record)}: {settled.detail}")
    return True


def _prompt(ctx: CliContext, item: TaskInput, asker: str = "the server") -> dict[str, Any]:
    """Read an answer on the terminal (runs in a worker thread).

    The question says who asks, inside which task; a sampling request is never passed to a
    model from here: the person types the result or cancels.
    """
    ctx.say(f"\n{asker} asks: {item.params.get('message') or item.method}")
    if item.method == "sampling/createMessage":
        ctx.say(
            "The server wants a model to write a reply. Mooring does not call a model without "
            "your approval; type the result as a JSON object, or 'cancel':"
        )
        line = ctx.stdin.readline().strip()
        return CANCEL if line in ("", "cancel") else _json_object(line)
    if item.method != "elicitation/create":
        ctx.say("Enter the result as a JSON object (or 'cancel'):")
        line = ctx.stdin.readline().strip()
        return CANCEL if line in ("", "cancel") else _json_object(line)
    schema = item.params.get("requestedSchema") or {}
    properties: dict[str, Any] = schema.get("properties") or {}
    ctx.say("(type !decline or !cancel at any prompt)")
    content: dict[str, Any] = {}
    for name, spec in properties.items():
        options = spec.get("enum") or spec.get("oneOf")
        label = spec.get("title") or name
        hint = f" {options}" if isinstance(options, list) and options else ""
        ctx.out.write(f"{label}{hint}: ")
        ctx.out.flush()
        raw = ctx.stdin.readline().strip()
        if raw == "!decline":
            return DECLINE
        if raw in ("!cancel", ""):
            if raw == "" and name not in (schema.get("required") or []):
                continue
            return CANCEL
        content[name] = _typed(raw, spec)
    return {"action": "accept", "content": content}


def _typed(raw: str, spec: dict[str, Any]) -> Any:
    kind = spec.get("type")
    try:
        if kind == "integer":
            return int(raw)
        if kind == "number":
            return float(raw)
    except ValueError as exc:
        raise KnownError(f"{raw!r} is not a {kind}; nothing was sent.", code="usage") from exc
    if kind == "boolean":
        return raw.lower() in ("y", "yes", "true", "1")
    return raw


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise KnownError(f"not valid JSON: {exc}", code="usage") from exc
    if not isinstance(value, dict):
        raise KnownError("the answer must be a JSON object", code="usage")
    return value


# -- tasks list / show / watch / cancel / answer --------------------------------------------


async def list_tasks(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """List task records, newest first."""
    if args.active:
        records = await ctx.ledger.unfinished()
    else:
        records = await ctx.ledger.list_records(limit=args.limit)
    if ctx.as_json:
        ctx.say(json.dumps([await record_json(ctx, r) for r in records], indent=2))
        return ExitCode.OK
    if not records:
        ctx.say("No tasks." if not args.active else "No active tasks.")
    for r in records:
        server = await ctx.catalog.get_server(r.server_id)
        alias = server.alias if server else "?"
        ctx.say(f"{_short(r)}  {alias}/{r.tool}  {summary(r)}")
    return ExitCode.OK


async def show(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Show one task (by local id, task id, or a unique prefix)."""
    record = await _find(ctx, args.id)
    shown = await record_json(ctx, record)
    if ctx.as_json:
        ctx.say(json.dumps(shown, indent=2))
        return ExitCode.OK
    ctx.say(f"operation  {shown['id']}")
    ctx.say(f"task       {shown['task_id'] or '-'}")
    ctx.say(f"tool       {shown['server']}/{shown['tool']}")
    ctx.say(f"state      {summary(record)}")
    ctx.say(f"polls      {shown['poll_count']}")
    for item in shown["inputs"]:
        state = (
            "delivered"
            if item["delivered"]
            else item["outcome"] or ("answered, not yet delivered" if item["answered"] else "open")
        )
        ctx.say(f"input      {item['key']}: {item['message']} [{state}]")
    text = result_text(shown["result"])
    if text:
        ctx.say(f"result     {text}")
    if shown["error"]:
        ctx.say(f"error      {shown['error'].get('code')}: {shown['error'].get('message')}")
    return ExitCode.OK


async def watch(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Follow tasks (default: every active one) to their ends.

    One process per data folder polls: if another holds the poller lock (the window, another
    watcher), this one follows what it writes to the database, and polls itself only once the
    other is gone. ``--notify`` tells the user privately when a task ends or needs them, from
    the polling process only (so no notification is shown twice).
    """
    if args.ids:
        records = [await _find(ctx, key) for key in args.ids]
    else:
        records = [r for r in await ctx.ledger.unfinished() if r.is_monitored]
    if not records:
        ctx.say("No active tasks to watch.")
        return ExitCode.OK
    for r in records:
        if not ctx.as_json:
            ctx.say(f"{_short(r)}: {summary(r)}")
    notifier = ctx.notifier if args.notify else None
    lock = ctx.poller_lock
    driver: Driver = ctx.monitor
    if lock is not None and ctx.follower is not None and not lock.try_acquire():
        ctx.warn(
            f"mooring: {lock.holder() or 'another Mooring process'} is polling these tasks; "
            "following its results from the database."
        )
        driver = ctx.follower

        def took_over() -> None:
            if not ctx.as_json:
                ctx.warn("mooring: the other process stopped; polling these tasks now")
            if notifier is not None:
                notifier.start()

        ctx.follower.on_takeover = took_over
    else:
        if lock is not None and not ctx.as_json:
            ctx.warn(f"mooring: polling {len(records)} task(s) for this data folder")
        if notifier is not None:
            notifier.start()
    delivering = asyncio.create_task(notifier.run()) if notifier is not None else None
    adopting = (
        asyncio.create_task(_adopt_while_polling(ctx, {r.id for r in records}))
        if lock is not None
        else None
    )
    try:
        finals = await follow(
            ctx,
            records,
            give_up_after=args.timeout,
            driver=driver,
            wait_for_answers=args.notify,
        )
    finally:
        if adopting is not None:
            adopting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await adopting
        if notifier is not None:
            await notifier.aclose(delivering)
        if lock is not None:
            lock.release()
    codes = [await _final_output(ctx, finals[r.id]) for r in records]
    return next((c for c in codes if c is not ExitCode.OK), ExitCode.OK)


async def _adopt_while_polling(ctx: CliContext, known: set[str]) -> None:
    """While this process holds the poller lock, poll tasks other processes start too."""
    adopter = Adopter(
        ledger=ctx.ledger,
        catalog=ctx.catalog,
        accounts=ctx.accounts,
        monitor=ctx.monitor,
        known=known,
    )
    while True:
        if ctx.poller_lock is not None and ctx.poller_lock.held:
            await adopter.adopt()
        await asyncio.sleep(ADOPT_EVERY.total_seconds())


async def cancel(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Ask the server to cancel a task; the server's answer decides the outcome."""
    record = await _find(ctx, args.id)
    if record.is_terminal:
        ctx.say(f"{_short(record)} is already {record.state.value}; nothing to cancel.")
        return await _final_output(ctx, record)
    record = await ctx.monitor.cancel(record.id)
    if not ctx.as_json:
        ctx.say(f"{_short(record)}: cancel requested; waiting for the server's answer")
    if args.no_wait:
        return ExitCode.OK
    finals = await follow(ctx, [record], give_up_after=args.timeout)
    return await _final_output(ctx, finals[record.id])


async def answer(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Answer an input request of a task (the answer is saved before it is sent)."""
    record = await _find(ctx, args.id)
    open_inputs = [i for i in await ctx.ledger.inputs(record.id) if i.awaiting_answer]
    if args.key:
        matches = [i for i in open_inputs if i.key == args.key]
        if not matches:
            raise KnownError(f"Task {_short(record)} has no open question {args.key!r}.")
        item = matches[0]
    elif len(open_inputs) == 1:
        item = open_inputs[0]
    elif not open_inputs:
        raise KnownError(f"Task {_short(record)} is not waiting for an answer.", code="no_input")
    else:
        keys = ", ".join(i.key for i in open_inputs)
        raise KnownError(f"Task {_short(record)} asks several questions; name one: {keys}.")

    if args.decline:
        reply: dict[str, Any] = DECLINE
    elif args.cancel:
        reply = CANCEL
    elif args.value is not None:
        value = _json_object(args.value)
        reply = (
            {"action": "accept", "content": value} if item.method == "elicitation/create" else value
        )
    elif ctx.interactive:
        server = await ctx.catalog.get_server(record.server_id)
        asker = f"{server.alias if server else 'the server'} ({record.tool})"
        reply = await in_daemon_thread(_prompt, ctx, item, asker)
    else:
        raise KnownError(
            "No answer given and no terminal to ask on.",
            hint="Pass --value JSON, --decline or --cancel.",
            code="usage",
        )
    settled = await ctx.monitor.answer(record.id, item.key, reply)
    if ctx.as_json:
        ctx.say(
            json.dumps({"key": item.key, "delivered": settled.delivered, "detail": settled.detail})
        )
    else:
        ctx.say(f"{_short(record)}: answer {item.key!r}: {settled.detail}")
    return ExitCode.OK if settled.delivered else ExitCode.WAITING


async def reconcile(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Re-read every unfinished task from its server; never re-send a call."""
    report = await ctx.reconciler.run()
    if ctx.as_json:
        ctx.say(
            json.dumps(
                {
                    "checked": report.checked,
                    "refreshed": [await record_json(ctx, r) for r in report.refreshed],
                    "unknown_outcome": [r.id for r in report.unknown],
                    "orphaned": [r.id for r in report.orphaned],
                    "approval_withdrawn": [r.id for r in report.withdrawn],
                    "never_sent": [r.id for r in report.never_sent],
                    "in_progress_elsewhere": [r.id for r in report.in_progress],
                    "unreachable": report.unreachable,
                },
                indent=2,
            )
        )
    else:
        ctx.say(f"Checked {report.checked} unfinished task(s).")
        for r in report.refreshed:
            ctx.say(f"{_short(r)}  {r.tool}: {summary(r)}")
        for r in report.unknown:
            ctx.say(f"{_short(r)}  {r.tool}: may or may not have run — retry or abandon it")
        for r in report.never_sent:
            ctx.say(f"{_short(r)}  {r.tool}: never sent (Mooring stopped first); nothing ran")
        for r in report.orphaned:
            ctx.say(f"{_short(r)}  {r.tool}: its server was removed")
        for alias, reason in report.unreachable.items():
            ctx.say(f"server {alias} unreachable: {reason}")
    return ExitCode.OK


async def abandon(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Mark a call with an unknown outcome abandoned."""
    record = await ctx.unknown.abandon(await _find(ctx, args.id))
    ctx.say(
        json.dumps(await record_json(ctx, record))
        if ctx.as_json
        else f"{_short(record)}: abandoned"
    )
    return ExitCode.OK


async def retry(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Send a call with an unknown outcome again, as a new operation, after a warning."""
    record = await _find(ctx, args.id)
    if record.state is not LocalState.UNKNOWN_OUTCOME:
        raise KnownError(
            f"Only a call with an unknown outcome can be retried; this one is {record.state}.",
            code="not_unknown",
        )
    if not await ctx.unknown.retry_is_safe(record) and not args.may_run_twice:
        warning = (
            f"{record.tool} is not known to be idempotent on a trusted server: the first call "
            "may have run, and a retry may run it twice."
        )
        if not ctx.interactive:
            raise KnownError(warning, hint="Pass --may-run-twice to retry anyway.", code="unsafe")
        ctx.say(warning)
        ctx.out.write("Retry anyway? [y/N] ")
        ctx.out.flush()
        if (await in_daemon_thread(ctx.stdin.readline)).strip().lower() != "y":
            ctx.say("Not retried.")
            return ExitCode.OK
    server = await ctx.catalog.get_server(record.server_id)
    tool_round = await ctx.ledger.tool_round(record.tool_round_id or "")
    if server is None or tool_round is None:
        raise KnownError("The server or the original arguments of this call are gone.")
    new = await ctx.runner.call(
        server,
        record.tool,
        tool_round.arguments,
        conversation_id=record.conversation_id,
        profile_id=record.credential_profile_id,
    )
    if new.state is not LocalState.DENIED and not (
        new.state is LocalState.FAILED and new.sent_at is None
    ):
        # Only a retry that went out replaces the original; a refused one leaves it to decide.
        await ctx.unknown.abandon(record, reason=f"Retried as {new.id}.")
    if not ctx.as_json:
        ctx.say(f"retried as operation {new.id}")
    if new.is_terminal or new.state is LocalState.UNKNOWN_OUTCOME:
        return await _final_output(ctx, new)
    finals = await follow(ctx, [new], give_up_after=args.timeout)
    return await _final_output(ctx, finals[new.id])


async def list_issues(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Problems that need the user, kept until resolved."""
    issues = await ctx.issues.open_issues()
    if ctx.as_json:
        ctx.say(
            json.dumps(
                [
                    {
                        "id": i.id,
                        "kind": i.kind.value,
                        "subject": i.subject,
                        "title": i.title,
                        "detail": i.detail,
                        "created_at": i.created_at.isoformat(),
                    }
                    for i in issues
                ],
                indent=2,
            )
        )
    elif not issues:
        ctx.say("Nothing needs your attention.")
    for i in issues if not ctx.as_json else []:
        ctx.say(f"{i.id[:8]}  {i.title}\n          {i.detail}")
    return ExitCode.OK


async def dismiss_issue(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Mark an issue resolved (by id or unique prefix)."""
    issue = by_prefix(await ctx.issues.open_issues(), args.id, "open issue")
    await ctx.issues.resolve(issue.id)
    ctx.say(f"Dismissed: {issue.title}")
    return ExitCode.OK
