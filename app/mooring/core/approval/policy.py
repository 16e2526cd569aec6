"""The approval policy: may this call go out without asking the user?

``decide`` is pure. Its answer is :class:`Allow`, :class:`Deny` or :class:`Ask`; the default is
Ask. Precedence:

1. guards refuse outright (a tool hidden from the model, a tool outside the server's allowed list,
   arguments over the size limit) — no rule can open these;
2. the user's rules, most specific first (an exact tool name beats a pattern, a longer pattern
   beats a shorter one, a conversation rule beats an "always" rule); on a tie the stricter wins
   (deny, then ask, then allow). Rules bind to the server's *identity* (command or URL), so a
   renamed or re-pointed server does not inherit them;
3. tool annotations, only for servers the user marked trusted: a read-only, non-destructive tool
   runs without asking. Annotations from an untrusted server are claims, not facts;
4. everything else asks — destructive tools always do, unless a rule says otherwise.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass

from mooring.core.approval.rules import ApprovalRule, Decision, Scope
from mooring.core.servers import ServerDefinition
from mooring.core.tools import ToolAnnotations


@dataclass(frozen=True, slots=True)
class Allow:
    """Send without asking."""

    reason: str
    rule: ApprovalRule | None = None


@dataclass(frozen=True, slots=True)
class Deny:
    """Do not send; tell the model why."""

    reason: str
    rule: ApprovalRule | None = None


@dataclass(frozen=True, slots=True)
class Ask:
    """Ask the user first; ``reason`` says why the policy could not decide alone."""

    reason: str
    rule: ApprovalRule | None = None


Verdict = Allow | Deny | Ask


@dataclass(frozen=True, slots=True)
class Guards:
    """Limits checked before any rule (per server, and the argument-size setting)."""

    max_argument_bytes: int
    allowed_tools: frozenset[str] | None = None
    """When set, only these tools (names or patterns) may be called on the server."""
    hidden_tools: frozenset[str] = frozenset()
    """Tools the model never sees and that are never called ("Never")."""


def _specificity(pattern: str) -> tuple[int, int]:
    wildcards = sum(pattern.count(c) for c in "*?[")
    return (1 if wildcards == 0 else 0, len(pattern) - wildcards)


_STRICTNESS = {Decision.DENY: 2, Decision.ASK: 1, Decision.ALLOW: 0}


def matching_rules(
    rules: Iterable[ApprovalRule],
    server: ServerDefinition,
    tool: str,
    conversation_id: str | None,
) -> list[ApprovalRule]:
    """The rules that apply to this call, the one that decides first."""
    found = [
        r
        for r in rules
        if r.server_identity == server.identity
        and fnmatch.fnmatchcase(tool, r.tool_pattern)
        and (r.scope is not Scope.CONVERSATION or r.conversation_id == conversation_id)
    ]
    return sorted(
        found,
        key=lambda r: (
            _specificity(r.tool_pattern),
            r.scope is Scope.CONVERSATION,
            r.scope is Scope.ONCE,
            _STRICTNESS[r.decision],
        ),
        reverse=True,
    )


def is_hidden(tool: str, guards: Guards) -> bool:
    """Whether the model must not even see this tool."""
    return any(fnmatch.fnmatchcase(tool, p) for p in guards.hidden_tools)


def decide(
    *,
    server: ServerDefinition,
    tool: str,
    annotations: ToolAnnotations,
    argument_bytes: int,
    rules: Iterable[ApprovalRule],
    guards: Guards,
    conversation_id: str | None = None,
) -> Verdict:
    """Whether to send ``tool`` on ``server`` now, refuse it, or ask the user."""
    if is_hidden(tool, guards):
        return Deny(f"{tool} is hidden on {server.alias}: the user set it to never run.")
    if guards.allowed_tools is not None and not any(
        fnmatch.fnmatchcase(tool, p) for p in guards.allowed_tools
    ):
        return Deny(f"{tool} is not in the allowed tools of {server.alias}.")
    if argument_bytes > guards.max_argument_bytes:
        return Deny(
            f"The arguments are {argument_bytes:,} bytes; the limit is "
            f"{guards.max_argument_bytes:,}. Nothing was sent."
        )

    ranked = matching_rules(rules, server, tool, conversation_id)
    if ranked:
        rule = ranked[0]
        where = f"rule {rule.tool_pattern!r} ({rule.scope.value})"
        if rule.decision is Decision.DENY:
            return Deny(f"Denied by the user's {where}.", rule)
        if rule.decision is Decision.ALLOW:
            return Allow(f"Allowed by the user's {where}.", rule)
        return Ask(f"The user's {where} says to ask.", rule)

    if annotations.destructive is True:
        return Ask(f"{tool} says it may delete or overwrite data.")
    if not server.trusted:
        return Ask(f"{server.alias} is not trusted, so its tool hints are not relied on.")
    if annotations.read_only is True:  # destructive tools returned above
        return Allow("A read-only tool on a trusted server.")
    return Ask(f"{tool} may have side effects.")
