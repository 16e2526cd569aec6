"""``mooring call`` and ``mooring tasks …``: start, follow, answer and cancel durable tasks."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import threading
from collections.abc import Iterator
from typing import Any

from mooring.cli.answering import (
    given_answer,
    json_object,
    no_answer_given,
    open_question,
    say_settled,
)
from mooring.cli.calling import call_arguments
from mooring.cli.context import CliContext, Terminal
from mooring.cli.describe import list_line, no_tasks, state_line, view_state_line
from mooring.cli.exit_codes import ExitCode
from mooring.cli.form import ask_fields
from mooring.cli.lookup import find_task
from mooring.cli.render import (
    progress_line,
    record_json,
    records_json,
    result_text,
    say_final,
    summary,
    view_json,
)
from mooring.cli.resources import resource_text
from mooring.cli.terminal import in_daemon_thread
from mooring.core.elicitation import (
    ELICITATION_METHOD,
    SAMPLING_METHOD,
    SchemaError,
    decline,
    fields_of,
)
from mooring.core.elicitation import cancel as cancel_reply
from mooring.core.errors import KnownError
from mooring.core.events import AnswerDidSettle, Event, TaskDidChange
from mooring.core.ids import short_id
from mooring.core.issues import Issue, IssueAction, actions_for
from mooring.core.tasks.inputs import TaskInput
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from mooring.core.views import CancelResult


def _short(record: TaskRecord) -> str:
    return short_id(record.id)


async def _find(ctx: CliContext, key: str) -> TaskRecord:
    return await find_task(ctx, key)


async def _final_output(ctx: CliContext, record: TaskRecord) -> ExitCode:
    return (await _final_outputs(ctx, [record]))[0]


async def _final_outputs(ctx: CliContext, records: list[TaskRecord]) -> list[ExitCode]:
    """Print where each record ended, in order (read in one database round); their exit
    codes."""
    shown = await records_json(ctx, records)
    return [_say_final(ctx, record, one) for record, one in zip(records, shown, strict=True)]


def _say_final(ctx: CliContext, record: TaskRecord, shown: dict[str, Any]) -> ExitCode:
    return say_final(ctx.terminal, ctx.as_json, record, shown)


# -- call ----------------------------------------------------------------------------------


async def call(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Call a tool; follow the task to its end unless ``--detach``."""
    server = await ctx.host.server(args.server)
    arguments = call_arguments(args.args)

    started: list[str] = []

    def persisted(record: TaskRecord) -> None:
        started.append(record.id)
        if not ctx.as_json:
            ctx.say(f"operation {record.id}")

    from mooring.cli.accounts import profile_id_for

    profile_id = await profile_id_for(ctx, server, args.account)

    def live(event: Event) -> None:  # a plain call's progress, as it arrives (stored first)
        if isinstance(event, TaskDidChange) and event.note == "progress" and not ctx.as_json:
            ctx.say(f"{_short(event.record)}: {progress_line(event.record)}")

    unsubscribe = ctx.events.subscribe(live)
    try:
        with _ctrl_c_stops_plain_call(ctx, started):
            record = await ctx.host.call(
                server, args.tool, arguments, profile_id=profile_id, on_persisted=persisted
            )
    finally:
        unsubscribe()
    if not ctx.as_json:
        if record.task_id:
            ctx.say(f"task {record.task_id}")
        ctx.say(f"{_short(record)}: {await state_line(ctx, record)}")
    if args.detach or record.is_terminal or record.state is LocalState.UNKNOWN_OUTCOME:
        if args.detach and not record.is_terminal:
            if ctx.as_json:
                ctx.say(json.dumps(await record_json(ctx, record), indent=2))
            return ExitCode.OK
        return await _final_output(ctx, record)
    finals = await follow(ctx, [record], give_up_after=args.timeout)
    return await _final_output(ctx, finals[record.id])


@contextlib.contextmanager
def _ctrl_c_stops_plain_call(ctx: CliContext, started: list[str]) -> Iterator[None]:
    """While a plain call runs, Ctrl-C stops it: the server is told (``notifications/cancelled``)
    and the round ends "stopped by you". Otherwise Ctrl-C does what it did before.

    A command started with SIGINT ignored (a script's background job, ``nohup``) keeps it
    ignored, as Python and asyncio do: that Ctrl-C was meant for the job in the foreground."""
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or previous is signal.SIG_IGN:
        yield
        return
    loop = asyncio.get_running_loop()

    main = asyncio.current_task()

    async def stop_or_interrupt() -> None:
        if started and await ctx.host.stop_call(started[-1]):
            ctx.warn("Stopping the call; the server is told to stop.")
        elif callable(previous) and previous is not signal.default_int_handler:
            previous(signal.SIGINT, None)
        elif main is not None:
            main.cancel()  # as Ctrl-C does: this command stops, the engine goes on

    stopping: set[asyncio.Task[None]] = set()

    def on_ctrl_c() -> None:
        task = loop.create_task(stop_or_interrupt())
        stopping.add(task)
        task.add_done_callback(stopping.discard)

    loop.add_signal_handler(signal.SIGINT, on_ctrl_c)
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        signal.signal(signal.SIGINT, previous)


# -- following -----------------------------------------------------------------------------


async def follow(
    ctx: CliContext,
    records: list[TaskRecord],
    *,
    give_up_after: float | None = None,
    wait_for_answers: bool = False,
) -> dict[str, TaskRecord]:
    """Watch records until each is terminal, printing every change (the engine follows
    them; this command hears what it stored).

    Without a terminal, a task that waits for an answer is left waiting (the caller exits
    with ``WAITING`` and says how to answer) unless ``wait_for_answers`` (someone answers
    elsewhere); ``give_up_after`` seconds stop following early.
    """
    try:
        async with asyncio.timeout(give_up_after):
            return await _follow(ctx, records, wait_for_answers)
    except TimeoutError:  # each as stored now (asked at once: the ledger batches the reads)
        stored = await ctx.host.records([r.id for r in records])
        return {r.id: now or r for r, now in zip(records, stored, strict=True)}
    except asyncio.CancelledError:  # Ctrl-C: only this command stops, never the task
        _say_the_task_goes_on(ctx, records)
        raise


def _say_the_task_goes_on(ctx: CliContext, records: list[TaskRecord]) -> None:
    going_on = [r for r in records if not r.is_terminal]
    if not going_on:
        return
    ids = " ".join(r.id for r in going_on)
    ctx.warn(
        f"\nmooring: stopped following; the task{'s go' if len(going_on) > 1 else ' goes'} on "
        f"(on the server, and in Mooring's ledger).\n"
        f"  Follow again with: mooring tasks watch {ids}\n"
        f"  Or cancel with:    mooring tasks cancel {going_on[0].id}"
    )


async def _follow(
    ctx: CliContext, records: list[TaskRecord], wait_for_answers: bool
) -> dict[str, TaskRecord]:
    latest = {r.id: r for r in records}
    waiting_on_user: set[str] = set()
    told: set[tuple[str, str]] = set()  # answers already reported at the prompt
    asked: set[tuple[str, str]] = set()  # questions put to the person (each once)
    queue: asyncio.Queue[Event] = asyncio.Queue()
    # Heard from before the read below: what changes after it is told, what changed before
    # it is in what it returns.
    unsubscribe = ctx.events.subscribe(queue.put_nowait)
    try:
        # One task is looked at as soon as its interval allows; many are spread over their
        # first interval (a burst would keep them bunched up ever after).
        for record in await ctx.host.watch(list(latest), soon=len(records) == 1):
            before = latest[record.id]
            latest[record.id] = record
            # Changed before this command heard of it (between the call's answer and the
            # watch): said as if heard, so no state goes unshown.
            if not ctx.as_json and _worth_a_line(ctx, before, record, state_changed=False):
                ctx.say(f"{_short(record)}: {await state_line(ctx, record)}")
        asking = [r for r in latest.values() if r.state is LocalState.INPUT_REQUIRED]
        for view in await ctx.host.task_views(asking) if asking else []:
            for item in view.open_questions:
                asked.add((view.record.id, item.key))
                if not await _ask(ctx, view.record, item, told, view.server_label):
                    waiting_on_user.add(view.record.id)

        def settled(record: TaskRecord) -> bool:
            return (
                record.is_terminal
                or not record.is_monitored
                or (record.id in waiting_on_user and not wait_for_answers)
            )

        # Kept up to date per event: checking every record at each event cost O(records) a
        # poll, most of `tasks watch`'s CPU with 1,000 tasks.
        open_ids = {r.id for r in latest.values() if not settled(r)}
        while open_ids:
            event = await queue.get()
            if isinstance(event, AnswerDidSettle) and event.record_id in latest:
                if not ctx.as_json and (event.record_id, event.key) not in told:
                    ctx.say(f"{short_id(event.record_id)}: answer {event.key!r}: {event.detail}")
                continue
            if not isinstance(event, TaskDidChange) or event.record.id not in latest:
                continue
            before = latest[event.record.id]
            latest[event.record.id] = event.record
            if not ctx.as_json and _worth_a_line(
                ctx, before, event.record, state_changed=event.state_changed
            ):
                ctx.say(f"{_short(event.record)}: {await state_line(ctx, event.record)}")
            if event.record.state is not LocalState.INPUT_REQUIRED:
                waiting_on_user.discard(event.record.id)
            for item in event.new_inputs:
                if (event.record.id, item.key) in asked:
                    # Stored as the watch read it (its event came first): asked once already.
                    continue
                asked.add((event.record.id, item.key))
                if not await _ask(ctx, event.record, item, told):
                    waiting_on_user.add(event.record.id)
            if settled(event.record):
                open_ids.discard(event.record.id)
            else:
                open_ids.add(event.record.id)
    finally:
        unsubscribe()
    return latest


def _worth_a_line(
    ctx: CliContext, before: TaskRecord, after: TaskRecord, *, state_changed: bool
) -> bool:
    """A new state or flag always; a new status message only for a person at a terminal
    (a log or a pipe gets the changes, not a progress line per poll)."""
    if state_changed or before.state is not after.state or before.flags != after.flags:
        return True
    if before.cancel_requested != after.cancel_requested:
        return True
    return ctx.out.isatty() and before.status_message != after.status_message


async def _ask(
    ctx: CliContext,
    record: TaskRecord,
    item: TaskInput,
    told: set[tuple[str, str]] | None = None,
    server_label: str | None = None,
) -> bool:
    """Ask the person at the terminal (True), or say how to answer from elsewhere (False)."""
    message = item.params.get("message") or f"{item.method} request"
    if server_label is None:
        server = await ctx.host.server_by_id(record.server_id, removed_too=True)
        server_label = server.alias if server else "the server"
    asker = f"{server_label} ({record.tool})"
    if not ctx.interactive:
        if not ctx.as_json:
            ctx.say(
                f"{_short(record)}: input required: {asker} asks ({item.key}): {message}\n"
                f"  answer with: mooring tasks answer {record.id} {item.key} --value '{{...}}'"
            )
        return False
    if item.method == SAMPLING_METHOD:
        # The same approval as a plain call's sampling: shown whole, sent to a model only if
        # approved, the reply reviewed (on this terminal); declined, the task hears "decline".
        settled = await ctx.host.sample_answer(record.id, item.key)
    else:
        answer = await in_daemon_thread(_prompt, ctx.terminal, item, asker)
        settled = await ctx.host.answer(record.id, item.key, answer)
    if told is not None:
        told.add((record.id, item.key))  # said here; the settle event need not say it again
    ctx.say(f"{_short(record)}: answer {item.key!r}: {settled.detail}")
    return True


def _prompt(term: Terminal, item: TaskInput, asker: str = "the server") -> dict[str, Any]:
    """Read an answer on the terminal (runs in a worker thread).

    The question says who asks, inside which task; a sampling request is never passed to a
    model from here: the person types the result or cancels. A form is asked field by field
    (from the question's schema), each value checked as it is typed.
    """
    term.say(f"\n{asker} asks: {item.params.get('message') or item.method}")
    if item.method == SAMPLING_METHOD:
        term.say(
            "The server wants a model to write a reply. Mooring does not call a model without "
            "your approval; type the result as a JSON object, or 'cancel':"
        )
        line = term.stdin.readline().strip()
        return cancel_reply() if line in ("", "cancel") else _json_object(line)
    if item.method != ELICITATION_METHOD:
        term.say("Enter the result as a JSON object (or 'cancel'):")
        line = term.stdin.readline().strip()
        return cancel_reply() if line in ("", "cancel") else _json_object(line)
    try:
        fields = fields_of(item.params.get("requestedSchema"))
    except SchemaError as exc:
        term.say(f"This question cannot be shown as a form ({exc}); it is declined.")
        return decline()
    return ask_fields(term, fields)


def _json_object(text: str, option: str = "the answer") -> dict[str, Any]:
    return json_object(text, option)


# -- tasks list / show / watch / cancel / answer --------------------------------------------


async def list_tasks(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """List task records, newest first."""
    views = await ctx.host.tasks(active=args.active, limit=None if args.active else args.limit)
    if ctx.as_json:
        ctx.say(json.dumps([view_json(view) for view in views], indent=2))
        return ExitCode.OK
    if not views:
        ctx.say(no_tasks(active=args.active))
    removed: dict[str, str | None] = {}  # views name live servers; a removed one's tasks too
    for view in views:  # results read together, not per row
        alias = view.server_alias
        server_id = view.record.server_id
        if alias is None:
            if server_id not in removed:
                server = await ctx.host.server_by_id(server_id, removed_too=True)
                removed[server_id] = server.alias if server else None
            alias = removed[server_id]
        ctx.say(list_line(view.record, alias, view_state_line(view)))
    return ExitCode.OK


async def show(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Show one task (by local id, task id, or a unique prefix)."""
    record = await _find(ctx, args.id)
    shown = await record_json(ctx, record)
    which = getattr(args, "resource", None)
    read = await ctx.host.read_resources(record.id, which) if which else []
    if ctx.as_json:
        if which:
            shown["resources"] = read
        ctx.say(json.dumps(shown, indent=2))
        return ExitCode.OK
    ctx.say(f"operation  {shown['id']}")
    ctx.say(f"task       {shown['task_id'] or '-'}")
    ctx.say(f"tool       {shown['server']}/{shown['tool']}")
    ctx.say(f"state      {await state_line(ctx, record)}")
    if record.last_sign_of_life_at is not None and not record.is_terminal:
        # Once it has ended, its last progress line is history (kept in --json), not its state.
        ago = (ctx.clock.now() - record.last_sign_of_life_at).total_seconds()
        life = "last sign of life" if record.state is LocalState.CREATING else "last progress"
        ctx.say(f"progress   {progress_line(record)} ({life} {ago:.0f} s ago)")
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
    for item in read:
        ctx.say(f"resource   {item['uri']}\n{resource_text(item)}")
    if read and any(item["error"] for item in read):
        return ExitCode.PROBLEM
    return ExitCode.OK


async def watch(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Follow tasks (default: every active one) to their ends.

    The data folder's engine follows them (it is the one process that polls their servers);
    this command shows what it stores. ``--notify`` waits for answers given elsewhere (the
    window, another command) instead of ending when a task needs one; the engine tells the
    user privately when a task ends or needs them (on this terminal when the desktop cannot).
    """
    if args.ids:
        records = [await _find(ctx, key) for key in args.ids]
    else:
        records = [v.record for v in await ctx.host.tasks(active=True) if v.record.is_monitored]
    if not records:
        ctx.say("No active tasks to watch.")
        return ExitCode.OK
    for r in records:
        if not ctx.as_json:
            ctx.say(f"{_short(r)}: {await state_line(ctx, r)}")
    finals = await follow(ctx, records, give_up_after=args.timeout, wait_for_answers=args.notify)
    codes = await _final_outputs(ctx, [finals[r.id] for r in records])
    return next((c for c in codes if c is not ExitCode.OK), ExitCode.OK)


async def cancel(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Ask the server to cancel a task; the server's answer decides the outcome.

    Exits 0 once the request is delivered (or nothing is left to cancel) and says in words how
    the task ended; exits 9 if the request could not be delivered yet (it is resent later).
    """
    record = await _find(ctx, args.id)
    if record.is_terminal:
        if ctx.as_json:
            ctx.say(
                json.dumps({**await record_json(ctx, record), "cancel_delivered": False}, indent=2)
            )
        else:
            ctx.say(f"{_short(record)} has already ended ({summary(record)}); nothing to cancel.")
        return ExitCode.OK
    cancelled = await ctx.host.cancel(record.id)
    record = cancelled.record
    if cancelled.result is CancelResult.REQUESTED and not ctx.as_json:
        ctx.say(f"{_short(record)}: cancel requested; waiting for the server's answer")
    if not args.no_wait and not record.is_terminal:
        record = (await follow(ctx, [record], give_up_after=args.timeout))[record.id]
    delivered = cancelled.delivered or await ctx.host.cancel_delivered(record.id)
    if ctx.as_json:
        ctx.say(
            json.dumps({**await record_json(ctx, record), "cancel_delivered": delivered}, indent=2)
        )
    else:
        ctx.say(f"{_short(record)}: {cancel_outcome(record, delivered=delivered)}")
    return ExitCode.OK if delivered or record.is_terminal else ExitCode.WAITING


def cancel_outcome(record: TaskRecord, *, delivered: bool) -> str:
    """What became of a cancel request, in words."""
    if record.state is LocalState.CANCELLED:
        return "cancelled."
    if record.is_terminal and delivered:
        return f"the cancel arrived too late: {summary(record)}"
    if record.is_terminal:
        return f"the task ended before the cancel reached the server: {summary(record)}"
    if not delivered:
        return (
            "the cancel request is saved but could not be delivered yet; Mooring sends it "
            f"again when it next follows the task (mooring tasks watch {record.id})."
        )
    return (
        "the server has the cancel request and has not ended the task yet; "
        f"follow it with: mooring tasks watch {record.id}"
    )


async def answer(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Answer an input request of a task (the answer is saved before it is sent)."""
    view = await ctx.host.task_view(await _find(ctx, args.id))
    record = view.record
    item = open_question(view, args.key)
    reply = given_answer(args, item)
    if reply is None:
        if not ctx.interactive:
            raise no_answer_given()
        reply = await in_daemon_thread(
            _prompt, ctx.terminal, item, f"{view.server_label} ({record.tool})"
        )
    settled = await ctx.host.answer(record.id, item.key, reply)
    return say_settled(ctx.terminal, ctx.as_json, record.id, item.key, settled)


async def reconcile(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Re-read every unfinished task from its server; never re-send a call."""
    report = await ctx.host.reconcile()
    if ctx.as_json:
        ctx.say(
            json.dumps(
                {
                    "checked": report.checked,
                    "refreshed": await records_json(ctx, report.refreshed),
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
        for view in await ctx.host.task_views(report.refreshed):
            ctx.say(f"{_short(view.record)}  {view.record.tool}: {view_state_line(view)}")
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
    record = await ctx.host.abandon((await _find(ctx, args.id)).id)
    ctx.say(
        json.dumps(await record_json(ctx, record))
        if ctx.as_json
        else f"{_short(record)}: abandoned"
    )
    return ExitCode.OK


async def retry(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Send a call with an unknown outcome again, as a new operation, after a warning."""
    record = await _find(ctx, args.id)

    async def confirm(warning: str) -> bool:
        ctx.say(warning)
        ctx.terminal.write("Retry anyway? [y/N] ")
        return (await in_daemon_thread(ctx.stdin.readline)).strip().lower() == "y"

    try:
        new = await ctx.host.retry(
            record.id,
            may_run_twice=args.may_run_twice,
            confirm=confirm if ctx.interactive else None,
        )
    except KnownError as exc:
        if exc.code == "unsafe":
            raise KnownError(
                exc.message, hint="Pass --may-run-twice to retry anyway.", code="unsafe"
            ) from exc
        raise
    if new is None:
        ctx.say("Not retried.")
        return ExitCode.OK
    if not ctx.as_json:
        ctx.say(f"retried as operation {new.id}")
    if new.is_terminal or new.state is LocalState.UNKNOWN_OUTCOME:
        return await _final_output(ctx, new)
    finals = await follow(ctx, [new], give_up_after=args.timeout)
    return await _final_output(ctx, finals[new.id])


async def list_issues(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Problems that need the user, kept until resolved."""
    issues = [view.issue for view in await ctx.host.open_issues()]
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
                        "actions": [a.value for a in actions_for(i)],
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
        ctx.say(f"{short_id(i.id)}  {i.title}\n          {i.detail}")
        for action in actions_for(i):
            ctx.say(f"          {_command_for(action, i)}")
    return ExitCode.OK


def _command_for(action: IssueAction, issue: Issue) -> str:
    """How the CLI offers an issue's action."""
    subject = short_id(issue.subject)
    match action:
        case IssueAction.RETRY:
            return f"retry (it may run twice): mooring tasks retry {subject}"
        case IssueAction.ABANDON:
            return f"give it up:               mooring tasks abandon {subject}"
        case IssueAction.SHOW_TASK:
            return f"look at it:               mooring tasks show {subject}"
        case IssueAction.SIGN_IN:
            return "sign in:                  mooring accounts login SERVER"
        case IssueAction.CHECK_SERVER:
            return "check the server:         mooring servers list; mooring doctor"
        case IssueAction.DISMISS:
            return f"dismiss:                  mooring issues dismiss {short_id(issue.id)}"


async def dismiss_issue(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Mark an issue resolved (by id or unique prefix)."""
    issue = await ctx.host.dismiss_issue(args.id)
    ctx.say(f"Dismissed: {issue.title}")
    return ExitCode.OK
