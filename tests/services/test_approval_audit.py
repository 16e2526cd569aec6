"""The approval audit keeps why the policy decided or asked and what the user chose to
remember, next to who decided — the window's tool round cards show it."""

from __future__ import annotations

from pathlib import Path

import pytest

from mooring.core.approval.request import ApprovalAnswer, ApprovalOutcome, ApprovalRequest
from mooring.core.approval.rules import Scope
from tests.services.conftest import HostFactory, demo_definition

pytestmark = pytest.mark.anyio


async def test_the_audit_keeps_the_policys_reason_and_the_remembered_scope(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    server = demo_definition(tmp_path / "store.sqlite3", tmp_path / "requests.log")
    await host.store.add_server(server)
    asked: list[str] = []

    async def ask(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request.reason)
        return ApprovalAnswer(ApprovalOutcome.APPROVED, remember=Scope.ALWAYS)

    host.broker.ask = ask
    await host.runner.call(server, "list_sample_files", {}, conversation_id=None)
    await host.runner.call(server, "list_sample_files", {}, conversation_id=None)
    second, first = (await host.store.rules.audit())[:2]
    assert (first.actor, first.outcome, first.remembered) == ("user", "approved", "always")
    assert first.reason == asked[0]  # why the policy asked
    assert len(asked) == 1  # the remembered rule decided the second call
    assert (second.actor, second.outcome, second.remembered) == ("policy", "auto_allowed", None)
    assert second.rule_id is not None
    assert second.reason  # the policy says which rule allowed it
