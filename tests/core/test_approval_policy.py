"""The approval policy, table-driven: who runs without asking, who is refused, who asks."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from mooring.core.approval.policy import Allow, Ask, Deny, Guards, decide, is_hidden
from mooring.core.approval.rules import ApprovalRule, Decision, Scope
from mooring.core.servers import ServerDefinition, Transport
from mooring.core.tools import ToolAnnotations
from tests.core.tasks.factories import T0

TRUSTED = ServerDefinition(
    id="s1", alias="demo", transport=Transport.STDIO, command="demo", trusted=True, created_at=T0
)
UNTRUSTED = ServerDefinition(
    id="s2", alias="other", transport=Transport.STDIO, command="other", created_at=T0
)
READ_ONLY = ToolAnnotations(read_only=True, destructive=False)
DESTRUCTIVE = ToolAnnotations(destructive=True)
NONE = ToolAnnotations()
GUARDS = Guards(max_argument_bytes=1000)


def rule(
    pattern: str,
    decision: Decision,
    scope: Scope = Scope.ALWAYS,
    server: ServerDefinition = TRUSTED,
    conversation_id: str | None = None,
) -> ApprovalRule:
    return ApprovalRule(
        id=f"{pattern}-{decision}-{scope}",
        server_identity=server.identity,
        tool_pattern=pattern,
        decision=decision,
        scope=scope,
        conversation_id=conversation_id,
        created_at=T0,
    )


@dataclass(frozen=True)
class Case:
    name: str
    verdict: type
    server: ServerDefinition = TRUSTED
    tool: str = "list_suppliers"
    annotations: ToolAnnotations = NONE
    argument_bytes: int = 10
    rules: list[ApprovalRule] = field(default_factory=list)
    guards: Guards = GUARDS
    conversation_id: str | None = None


CASES = [
    Case("default asks", Ask, tool="import_suppliers"),
    Case("trusted read-only runs", Allow, annotations=READ_ONLY),
    Case("untrusted read-only still asks", Ask, server=UNTRUSTED, annotations=READ_ONLY),
    Case(
        "destructive asks even when trusted", Ask, tool="delete_supplier", annotations=DESTRUCTIVE
    ),
    Case(
        "explicit allow rule opens a destructive tool",
        Allow,
        tool="delete_supplier",
        annotations=DESTRUCTIVE,
        rules=[rule("delete_supplier", Decision.ALLOW)],
    ),
    Case(
        "deny rule beats trusted read-only",
        Deny,
        annotations=READ_ONLY,
        rules=[rule("list_*", Decision.DENY)],
    ),
    Case(
        "exact name beats pattern",
        Allow,
        tool="export_suppliers",
        rules=[rule("*", Decision.DENY), rule("export_suppliers", Decision.ALLOW)],
    ),
    Case(
        "longer pattern beats shorter",
        Ask,
        tool="export_suppliers",
        rules=[rule("*", Decision.ALLOW), rule("export_*", Decision.ASK)],
    ),
    Case(
        "on a tie the stricter rule wins",
        Deny,
        tool="export_suppliers",
        rules=[rule("export_*", Decision.ALLOW), rule("export_*", Decision.DENY)],
    ),
    Case(
        "rules bind to the server identity, not the alias",
        Ask,
        server=UNTRUSTED,
        tool="export_suppliers",
        rules=[rule("*", Decision.ALLOW, server=TRUSTED)],
    ),
    Case(
        "conversation rule applies in its conversation",
        Allow,
        tool="export_suppliers",
        rules=[rule("*", Decision.ALLOW, Scope.CONVERSATION, conversation_id="c1")],
        conversation_id="c1",
    ),
    Case(
        "conversation rule does not leak into another",
        Ask,
        tool="export_suppliers",
        rules=[rule("*", Decision.ALLOW, Scope.CONVERSATION, conversation_id="c1")],
        conversation_id="c2",
    ),
    Case(
        "oversize arguments are refused before any rule",
        Deny,
        argument_bytes=1001,
        rules=[rule("*", Decision.ALLOW)],
    ),
    Case(
        "hidden tool is refused even with an allow rule",
        Deny,
        rules=[rule("*", Decision.ALLOW)],
        guards=Guards(max_argument_bytes=1000, hidden_tools=frozenset({"list_*"})),
    ),
    Case(
        "tool outside the allowed list is refused",
        Deny,
        tool="delete_supplier",
        guards=Guards(max_argument_bytes=1000, allowed_tools=frozenset({"list_*"})),
    ),
    Case(
        "tool inside the allowed list goes on to the rules",
        Allow,
        annotations=READ_ONLY,
        guards=Guards(max_argument_bytes=1000, allowed_tools=frozenset({"list_*"})),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_policy(case: Case) -> None:
    verdict = decide(
        server=case.server,
        tool=case.tool,
        annotations=case.annotations,
        argument_bytes=case.argument_bytes,
        rules=case.rules,
        guards=case.guards,
        conversation_id=case.conversation_id,
    )
    assert isinstance(verdict, case.verdict), verdict
    assert verdict.reason


def test_a_renamed_server_keeps_its_identity_and_a_repointed_one_does_not() -> None:
    renamed = ServerDefinition(
        id="s3", alias="renamed", transport=Transport.STDIO, command="demo", created_at=T0
    )
    repointed = ServerDefinition(
        id="s1", alias="demo", transport=Transport.STDIO, command="evil", created_at=T0
    )
    assert renamed.identity == TRUSTED.identity
    assert repointed.identity != TRUSTED.identity


def test_hidden_tools_match_patterns() -> None:
    guards = Guards(max_argument_bytes=1, hidden_tools=frozenset({"delete_*"}))
    assert is_hidden("delete_supplier", guards)
    assert not is_hidden("list_suppliers", guards)
