"""The host's use cases against a real demo server: what every face (CLI, window) relies on."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mooring.core.errors import KnownError
from mooring.core.events import (
    ApprovalDidEnd,
    ApprovalRequested,
    Event,
    TaskDidChange,
    ToolRoundDidFinish,
)
from mooring.core.servers import ServerDefinition
from mooring.core.tasks.codes import UNKNOWN_TOOL_CODE
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState, TaskFlag
from mooring.services.host import ENV_SCOPE, CancelResult
from mooring.storage import repositories as repo
from tests.services.conftest import SAMPLES, Host, HostFactory, demo_definition, run_until

pytestmark = pytest.mark.anyio


def requests(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line]


def count(log: Path, method: str) -> int:
    return sum(1 for r in requests(log) if r.get("method") == method)


async def demo(host: Host, tmp_path: Path) -> tuple[ServerDefinition, Path]:
    log = tmp_path / "requests.log"
    server = demo_definition(tmp_path / "store.sqlite3", log)
    await host.store.add_server(server)
    return server, log


async def test_an_answer_outside_the_questions_choices_is_never_saved_or_sent(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    server, log = await demo(host, tmp_path)
    record = await host.host.call(
        server, "import_suppliers", {"path": str(SAMPLES / "suppliers_ambiguous_id.csv")}
    )
    asking = await run_until(host, record.id, lambda r: r.state is LocalState.INPUT_REQUIRED)
    [question] = await host.store.inputs(asking.id)

    with pytest.raises(KnownError, match="does not fit the question") as caught:
        await host.host.answer(
            asking.id, question.key, {"action": "accept", "content": {"column": "bogus"}}
        )
    assert caught.value.code == "invalid_answer"
    [still_open] = await host.store.inputs(asking.id)
    assert still_open.answer is None
    assert count(log, "tasks/update") == 0

    schema = question.params["requestedSchema"]
    choice = next(iter(schema["properties"].values()))["enum"][0]
    field = next(iter(schema["properties"]))
    settled = await host.host.answer(
        asking.id, question.key, {"action": "accept", "content": {field: choice}}
    )
    assert settled.delivered
    done = await run_until(host, record.id, lambda r: r.is_terminal)
    assert done.state is LocalState.COMPLETED


async def test_a_tool_the_server_does_not_offer_is_refused_without_asking(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    server, log = await demo(host, tmp_path)
    record = await host.host.call(server, "delete_everything", {})
    assert record.state is LocalState.DENIED
    assert host.asked == []
    view = await host.host.task_view(record)
    assert view.error is not None
    assert view.error["code"] == UNKNOWN_TOOL_CODE
    assert "does not offer a tool called 'delete_everything'" in str(view.words)
    assert count(log, "tools/call") == 0


async def test_the_tool_list_is_read_once_for_many_calls(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    server, log = await demo(host, tmp_path)
    for _ in range(3):
        record = await host.host.call(
            server, "import_suppliers", {"path": str(SAMPLES / "suppliers_clean.csv")}
        )
        await run_until(host, record.id, lambda r: r.is_terminal)
    assert count(log, "tools/call") == 3
    assert count(log, "tools/list") == 1


async def test_listeners_are_told_only_after_the_change_is_on_disk(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    server, _log = await demo(host, tmp_path)
    on_disk: list[tuple[str, LocalState | None]] = []

    def listen(event: Event) -> None:
        if isinstance(event, ToolRoundDidFinish):
            # Read the file as the listener is told: the outcome must already be there.
            stored = host.db.call_sync(lambda s: repo.get_task_record(s, event.record.id))
            on_disk.append(("finished", stored.state if stored else None))
        elif isinstance(event, ApprovalRequested | ApprovalDidEnd):
            on_disk.append((type(event).__name__, None))

    host.events.subscribe(listen)
    record = await host.host.call(
        server, "import_suppliers", {"path": str(SAMPLES / "suppliers_clean.csv")}
    )
    done = await run_until(host, record.id, lambda r: r.is_terminal)
    assert ("ApprovalRequested", None) in on_disk
    assert ("ApprovalDidEnd", None) in on_disk
    assert on_disk[-1] == ("finished", LocalState.COMPLETED)
    assert done.state is LocalState.COMPLETED


async def test_the_monitor_forgets_tasks_that_ended(hosts: HostFactory, tmp_path: Path) -> None:
    host = await hosts()
    server, _log = await demo(host, tmp_path)
    for _ in range(3):
        record = await host.host.call(
            server, "import_suppliers", {"path": str(SAMPLES / "suppliers_clean.csv")}
        )
        await run_until(host, record.id, lambda r: r.is_terminal)
    assert host.monitor.scheduled == 0
    assert host.monitor.remembered == 0


async def test_cancelling_a_finished_task_sends_nothing_and_says_so(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    server, log = await demo(host, tmp_path)
    record = await host.host.call(
        server, "import_suppliers", {"path": str(SAMPLES / "suppliers_clean.csv")}
    )
    done = await run_until(host, record.id, lambda r: r.is_terminal)
    cancelled = await host.host.cancel(done.id)
    assert cancelled.result is CancelResult.ALREADY_OVER
    assert count(log, "tasks/cancel") == 0


async def a_task_left_running(
    hosts: HostFactory, tmp_path: Path
) -> tuple[ServerDefinition, TaskRecord]:
    """A demo server and a task of it left waiting when its host stopped (the app closed)."""
    host = await hosts()
    server, _log = await demo(host, tmp_path)
    record = await host.host.call(
        server, "import_suppliers", {"path": str(SAMPLES / "suppliers_ambiguous_id.csv")}
    )
    assert record.state in (LocalState.WORKING, LocalState.INPUT_REQUIRED)
    await host.host.stop()
    return server, record


async def test_an_unreachable_server_at_reconcile_flags_its_tasks_unavailable(
    hosts: HostFactory, tmp_path: Path
) -> None:
    server, record = await a_task_left_running(hosts, tmp_path)

    # The app restarts; the server's program is gone by then.
    later = await hosts()
    missing = str(tmp_path / "no-such-program")
    await later.store.db.run(lambda s: _set_command(s, server.id, missing))
    seen: list[TaskDidChange] = []
    later.events.on(TaskDidChange, seen.append)
    report = await later.host.reconcile()
    assert server.alias in report.unreachable
    stored = await later.store.get(record.id)
    assert stored is not None
    assert TaskFlag.STATUS_UNAVAILABLE in stored.flags
    view = await later.host.task_view(stored)
    assert view.words.label.startswith("status temporarily unavailable — last known: ")
    assert any(e.record.id == record.id for e in seen)
    issues = await later.host.open_issues()
    assert any(i.issue.subject == server.id for i in issues)


def _set_command(session: Any, server_id: str, command: str) -> None:
    from sqlalchemy import update

    from mooring.storage import tables

    session.execute(
        update(tables.servers).where(tables.servers.c.id == server_id).values(command=command)
    )


async def test_an_ambiguous_prefix_names_the_matches(hosts: HostFactory, tmp_path: Path) -> None:
    host = await hosts()
    server, _log = await demo(host, tmp_path)
    ids = set()
    for _ in range(20):
        record = await host.host.call(server, "no_such_tool", {})
        ids.add(record.id)
    first_chars = [i[0] for i in ids]
    prefix = max(set(first_chars), key=first_chars.count)  # 20 ids, 16 digits: one repeats
    with pytest.raises(KnownError, match="matches several tasks") as caught:
        await host.host.find_task(prefix)
    assert caught.value.code == "ambiguous"


async def test_trusting_a_server_is_stored_and_can_be_taken_back(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    server, _log = await demo(host, tmp_path)
    assert not server.trusted
    trusted = await host.host.server_desk.set_trusted("demo", True)
    assert trusted.trusted
    assert (await host.store.get_server(server.id)).trusted  # type: ignore[union-attr]
    assert not (await host.host.server_desk.set_trusted("demo", False)).trusted
    with pytest.raises(KnownError, match="No server called"):
        await host.host.server_desk.set_trusted("nope", True)


async def test_a_list_of_views_tells_each_task_as_its_own_view_does(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    server, _log = await demo(host, tmp_path)
    asking = await host.host.call(
        server, "import_suppliers", {"path": str(SAMPLES / "suppliers_ambiguous_id.csv")}
    )
    asking = await run_until(host, asking.id, lambda r: r.state is LocalState.INPUT_REQUIRED)
    done = await host.host.call(
        server, "import_suppliers", {"path": str(SAMPLES / "suppliers_clean.csv")}
    )
    done = await run_until(host, done.id, lambda r: r.is_terminal)
    denied = await host.host.call(server, "delete_everything", {})

    views = await host.host.task_views([denied, asking, done])
    assert [v.id for v in views] == [denied.id, asking.id, done.id]
    assert views == [await host.host.task_view(r) for r in (denied, asking, done)]
    assert [q.key for q in views[1].open_questions] == [
        q.key for q in await host.store.inputs(asking.id)
    ]
    assert views[2].result is not None
    assert views[0].error is not None

    await host.host.server_desk.remove(server.alias)
    [gone] = await host.host.task_views([done], fresh=True)
    assert gone.server_label == "(removed server)"
    assert gone.record == await host.store.get(done.id)


LEAKED = "env-s3cret-reconcile-31"


async def test_a_server_unreachable_at_reconcile_keeps_its_secrets_out_of_the_issue(
    hosts: HostFactory, tmp_path: Path
) -> None:
    server, record = await a_task_left_running(hosts, tmp_path)

    # The app restarts; the server now fails, printing the secret it was given.
    later = await hosts()
    later.host.secrets.set(ENV_SCOPE, f"{server.id}:API_KEY", LEAKED)
    script = "import os, sys; print('bad key ' + os.environ['API_KEY'], file=sys.stderr); exit(3)"
    await later.store.db.run(lambda s: _set_leaky(s, server.id, script))
    report = await later.host.reconcile()
    assert "bad key [redacted]" in report.unreachable[server.alias]
    [issue] = [v.issue for v in await later.host.open_issues() if "task(s) wait" in v.issue.title]
    assert LEAKED not in issue.title + issue.detail
    assert "bad key [redacted]" in issue.detail
    stored = await later.store.get(record.id)
    assert stored is not None
    assert LEAKED not in repr(stored)


def _set_leaky(session: Any, server_id: str, script: str) -> None:
    from sqlalchemy import update

    from mooring.storage import tables

    session.execute(
        update(tables.servers)
        .where(tables.servers.c.id == server_id)
        .values(command=sys.executable, args=["-c", script], env={"API_KEY": ""})
    )
