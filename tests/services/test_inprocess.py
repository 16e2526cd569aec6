"""The services over in-process servers: the runner, the broker, the monitor and the reconciler
against the real demo server code and a real SQLite file, with no subprocess in between.

The same outcomes are tested against real server processes elsewhere (``test_host.py``,
``tests/e2e``); this tier is the fast one.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest

from mooring.core.approval.request import ApprovalAnswer, ApprovalOutcome
from mooring.core.approval.rules import Decision, Scope
from mooring.core.events import ApprovalDidEnd, ApprovalRequested, TaskDidChange
from mooring.core.results import CLIPPED_KEY
from mooring.core.servers import ServerDefinition
from mooring.core.tasks.states import LocalState, TaskFlag
from mooring.services.host import CancelResult
from tests.helpers.inprocess import SAMPLES, InProcessServers, inprocess_definition, running_demo
from tests.services.conftest import Host, HostFactory, run_until

pytestmark = pytest.mark.anyio


@dataclass
class Demo:
    """An in-process demo server, the opener serving it, and its request log."""

    servers: InProcessServers
    definition: ServerDefinition
    log: Path

    def count(self, method: str) -> int:
        if not self.log.exists():
            return 0
        lines = self.log.read_text().splitlines()
        return sum(1 for line in lines if line and json.loads(line).get("method") == method)

    async def host(self, hosts: HostFactory) -> Host:
        """A host whose connections reach this server in-process, with the server on record."""
        host = await hosts(open_transport=self.servers)
        if await host.store.get_server(self.definition.id) is None:
            await host.store.add_server(self.definition)
        return host


@pytest.fixture
async def demo(tmp_path: Path) -> AsyncIterator[Demo]:
    log = tmp_path / "requests.log"
    servers = InProcessServers()
    definition = inprocess_definition()
    async with AsyncExitStack() as stack:
        server = await stack.enter_async_context(
            running_demo(tmp_path / "demo-store.sqlite3", request_log=log)
        )
        servers.serve(definition, server.mcp)
        yield Demo(servers, definition, log)


# -- the tool runner -----------------------------------------------------------------------------


async def test_a_plain_tool_answers_at_once_and_its_round_completes(
    demo: Demo, hosts: HostFactory
) -> None:
    host = await demo.host(hosts)
    record = await host.host.call(demo.definition, "greet", {"name": "Ada"})
    assert record.state is LocalState.COMPLETED
    assert record.task_id is None
    view = await host.host.task_view(record)
    assert "Ada" in json.dumps(view.result)
    assert demo.servers.opened == 1


async def test_a_face_showing_a_results_start_gets_its_start_and_the_ledger_keeps_it_whole(
    demo: Demo, hosts: HostFactory
) -> None:
    # The window shows a result's first 2,000 characters: a 1 MB result crosses to it clipped
    # (its words read from the whole), while a command asking for the task gets all of it.
    host = await demo.host(hosts)
    record = await host.host.call(demo.definition, "large_text", {"megabytes": 1})
    whole = await host.host.task_view(record)
    assert whole.result is not None
    [block] = whole.result["content"]
    assert len(block["text"]) >= 1_000_000
    [listed] = await host.host.tasks(result_limit=5_000)
    [viewed] = await host.host.task_views([record], result_limit=5_000)
    for clipped in (listed, viewed, await host.host.task_view(record, result_limit=5_000)):
        assert clipped.result is not None
        assert clipped.result["content"] == [{"type": "text", "text": block["text"][:5_000]}]
        assert clipped.result["_meta"][CLIPPED_KEY] == len(block["text"])
        assert clipped.words == whole.words
    [full] = await host.host.tasks()
    assert full.result == whole.result


async def test_a_task_capable_tool_starts_a_task_with_its_id_on_record(
    demo: Demo, hosts: HostFactory
) -> None:
    host = await demo.host(hosts)
    record = await host.host.call(
        demo.definition, "import_suppliers", {"path": str(SAMPLES / "suppliers_clean.csv")}
    )
    assert record.state in (LocalState.WORKING, LocalState.COMPLETED)
    assert record.task_id
    stored = await host.store.get(record.id)
    assert stored is not None
    assert stored.task_id == record.task_id


# -- the approval broker -------------------------------------------------------------------------


async def test_a_call_to_an_untrusted_server_is_asked_first_and_announced(
    demo: Demo, hosts: HostFactory
) -> None:
    host = await demo.host(hosts)
    await host.host.call(demo.definition, "greet", {"name": "Ada"})
    [request] = host.asked
    assert request.tool == "greet"
    assert request.server_id == demo.definition.id
    kinds = [type(e) for e in host.seen if isinstance(e, ApprovalRequested | ApprovalDidEnd)]
    assert kinds == [ApprovalRequested, ApprovalDidEnd]


@pytest.mark.parametrize("outcome", [ApprovalOutcome.DENIED, ApprovalOutcome.CANCELLED])
async def test_a_call_the_user_refuses_or_dismisses_never_reaches_the_server(
    demo: Demo, hosts: HostFactory, outcome: ApprovalOutcome
) -> None:
    host = await demo.host(hosts)
    host.answers.append(ApprovalAnswer(outcome))
    record = await host.host.call(demo.definition, "greet", {"name": "Ada"})
    assert record.state is LocalState.DENIED
    assert demo.count("tools/call") == 0
    [ended] = [e for e in host.seen if isinstance(e, ApprovalDidEnd)]
    assert ended.outcome is outcome


async def test_a_standing_allow_rule_runs_the_call_without_asking(
    demo: Demo, hosts: HostFactory
) -> None:
    host = await demo.host(hosts)
    await host.host.rule_desk.add(demo.definition, "gree*", Decision.ALLOW, Scope.ALWAYS)
    record = await host.host.call(demo.definition, "greet", {"name": "Ada"})
    assert record.state is LocalState.COMPLETED
    assert host.asked == []
    assert not [e for e in host.seen if isinstance(e, ApprovalRequested)]
    assert demo.count("tools/call") == 1


# -- the task monitor ----------------------------------------------------------------------------


async def test_the_monitor_follows_a_task_to_its_result(demo: Demo, hosts: HostFactory) -> None:
    host = await demo.host(hosts)
    record = await host.host.call(
        demo.definition, "import_suppliers", {"path": str(SAMPLES / "suppliers_clean.csv")}
    )
    done = await run_until(host, record.id, lambda r: r.is_terminal)
    assert done.state is LocalState.COMPLETED
    view = await host.host.task_view(done)
    assert view.result is not None
    assert demo.count("tools/call") == 1


async def test_a_question_is_saved_then_the_answer_lets_the_task_finish(
    demo: Demo, hosts: HostFactory
) -> None:
    host = await demo.host(hosts)
    record = await host.host.call(
        demo.definition,
        "import_suppliers",
        {"path": str(SAMPLES / "suppliers_ambiguous_id.csv")},
    )
    asking = await run_until(host, record.id, lambda r: r.state is LocalState.INPUT_REQUIRED)
    [question] = await host.store.inputs(asking.id)
    await host.host.answer(
        asking.id, question.key, {"action": "accept", "content": {"column": "vendor_code"}}
    )
    done = await run_until(host, record.id, lambda r: r.is_terminal)
    assert done.state is LocalState.COMPLETED
    [answered] = await host.store.inputs(asking.id)
    assert answered.answer is not None


async def test_a_cancel_shows_requested_until_the_server_confirms_it(
    demo: Demo, hosts: HostFactory
) -> None:
    host = await demo.host(hosts)
    record = await host.host.call(demo.definition, "slow_compute", {"seconds": 600})
    assert record.task_id
    cancelled = await host.host.cancel(record.id)
    assert cancelled.result is CancelResult.REQUESTED
    assert cancelled.record.cancel_requested
    assert not cancelled.record.is_terminal
    words = (await host.host.task_view(cancelled.record)).words.label
    assert words.startswith("cancel requested")
    done = await run_until(host, record.id, lambda r: r.is_terminal)
    assert done.state is LocalState.CANCELLED


# -- the reconciler ------------------------------------------------------------------------------


async def test_after_a_restart_a_running_task_catches_up_without_being_sent_again(
    demo: Demo, hosts: HostFactory
) -> None:
    host = await demo.host(hosts)
    record = await host.host.call(
        demo.definition, "import_suppliers", {"path": str(SAMPLES / "suppliers_clean.csv")}
    )
    await host.host.stop()

    later = await demo.host(hosts)
    report = await later.host.reconcile()
    assert demo.definition.alias not in report.unreachable
    done = await run_until(later, record.id, lambda r: r.is_terminal)
    assert done.state is LocalState.COMPLETED
    assert demo.count("tools/call") == 1


async def test_a_server_that_is_gone_at_reconcile_leaves_its_tasks_unavailable(
    demo: Demo, hosts: HostFactory
) -> None:
    host = await demo.host(hosts)
    record = await host.host.call(demo.definition, "slow_compute", {"seconds": 600})
    await host.host.stop()

    demo.servers.stop(demo.definition)
    later = await demo.host(hosts)
    seen: list[TaskDidChange] = []
    later.events.on(TaskDidChange, seen.append)
    report = await later.host.reconcile()
    assert demo.definition.alias in report.unreachable
    stored = await later.store.get(record.id)
    assert stored is not None
    assert stored.state is LocalState.WORKING
    assert TaskFlag.STATUS_UNAVAILABLE in stored.flags
    assert any(e.record.id == record.id for e in seen)
    issues = await later.host.open_issues()
    assert any(i.issue.subject == demo.definition.id for i in issues)
