"""An approval waiting is told on the event bus (for notifications) after its record is
persisted, and the event carries no arguments."""

from __future__ import annotations

from pathlib import Path

import pytest

from mooring.core.approval.request import ApprovalAnswer, ApprovalOutcome, ApprovalRequest
from mooring.core.events import ApprovalRequested
from mooring.core.tasks.states import LocalState
from tests.services.conftest import SAMPLES, HostFactory, demo_definition

pytestmark = pytest.mark.anyio


async def test_an_approval_question_is_told_after_the_record_waits_in_the_ledger(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    server = demo_definition(tmp_path / "store.sqlite3", tmp_path / "requests.log")
    await host.store.add_server(server)
    waiting: list[list[LocalState]] = []

    async def ask(request: ApprovalRequest) -> ApprovalAnswer:
        told = [e for e in host.seen if isinstance(e, ApprovalRequested)]
        assert [e.request.id for e in told] == [request.id]  # told before being asked
        records = await host.store.list_records()
        waiting.append(
            [r.state for r in records if r.tool_round_id == told[0].request.tool_round_id]
        )
        return ApprovalAnswer(ApprovalOutcome.DENIED)

    host.broker.ask = ask
    path = str(SAMPLES / "suppliers_clean.csv")
    record = await host.runner.call(
        server, "import_suppliers", {"path": path}, conversation_id=None
    )
    assert record.state is LocalState.DENIED
    assert waiting == [[LocalState.AWAITING_APPROVAL]]
    [event] = [e for e in host.seen if isinstance(e, ApprovalRequested)]
    assert (event.request.server_alias, event.request.tool) == ("demo", "import_suppliers")
    # The event carries the question whole (the window's dialog shows the arguments); what
    # reaches a notification is decided by the notifier, which never reads them (canary tests).
