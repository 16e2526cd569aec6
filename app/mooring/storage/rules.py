"""The user's approval rules and the audit trail of every approval outcome (``RuleBook``)."""

from __future__ import annotations

from sqlalchemy.orm import Session

from mooring.core.approval.rules import ApprovalAuditEntry, ApprovalRule
from mooring.storage import repositories as repo
from mooring.storage.db import Database


class SqlRuleBook:
    """Implements ``RuleBook`` on one :class:`Database` (a :class:`SqlStore`'s ``rules``)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def list_rules(self) -> list[ApprovalRule]:
        return await self.db.run(repo.list_rules)

    async def add_rule(self, rule: ApprovalRule) -> None:
        await self.db.run(lambda s: repo.add_rule(s, rule))

    async def remove_rule(self, rule_id: str) -> bool:
        return await self.db.run(lambda s: repo.remove_rule(s, rule_id))

    async def record_approval(
        self, entry: ApprovalAuditEntry, *, consumed_rule_id: str | None = None
    ) -> None:
        def write(session: Session) -> None:
            repo.add_audit(session, entry)
            if entry.tool_round_id is not None:
                repo.set_round_approval(session, entry.tool_round_id, entry.outcome)
            if consumed_rule_id is not None:
                repo.remove_rule(session, consumed_rule_id)

        await self.db.run(write)

    async def audit(self, limit: int = 100) -> list[ApprovalAuditEntry]:
        return await self.db.run(lambda s: repo.list_audit(s, limit))
