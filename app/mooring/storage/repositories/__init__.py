"""Repositories: functions of a :class:`Session` that speak in core objects, one module per
aggregate (servers and accounts, tool rounds, the task ledger, approvals, issues).

Each takes the session of the caller's transaction, so several changes (a state transition, the
final result into its tool round, new input requests) commit together or not at all — "write,
then tell" starts here. Callers use the package (``from mooring.storage import repositories as
repo``); the modules are how it is kept.
"""

from __future__ import annotations

from mooring.storage.repositories.approvals import (
    add_audit,
    add_rule,
    list_audit,
    list_rules,
    remove_rule,
    set_round_approval,
)
from mooring.storage.repositories.issues import (
    list_open_issues,
    raise_issue,
    resolve_issue,
)
from mooring.storage.repositories.rounds import (
    add_tool_round,
    finish_tool_round,
    get_tool_round,
)
from mooring.storage.repositories.servers import (
    add_profile,
    add_server,
    builtin_server_ever_configured,
    find_server,
    get_server,
    list_profiles,
    list_servers,
    profile_removed_at,
    remove_profile,
    remove_server,
    server_removed_at,
    set_server_trusted,
    update_server,
)
from mooring.storage.repositories.task_parts import read_task_parts
from mooring.storage.repositories.tasks import (
    add_task_inputs,
    add_task_record,
    apply_reconciliation,
    count_task_records,
    find_task_record,
    get_task_record,
    inputs_of,
    list_task_inputs,
    list_task_records,
    list_unfinished_task_records,
    mark_answer_delivered,
    mark_checked,
    save_answer,
    save_task_record,
    task_record_by_task_id,
    task_record_with_inputs,
    task_records_matching,
    unfinished_task_ids,
    unmarked,
)

__all__ = [
    "add_audit",
    "add_profile",
    "add_rule",
    "add_server",
    "add_task_inputs",
    "add_task_record",
    "add_tool_round",
    "apply_reconciliation",
    "builtin_server_ever_configured",
    "count_task_records",
    "find_server",
    "find_task_record",
    "finish_tool_round",
    "get_server",
    "get_task_record",
    "get_tool_round",
    "inputs_of",
    "list_audit",
    "list_open_issues",
    "list_profiles",
    "list_rules",
    "list_servers",
    "list_task_inputs",
    "list_task_records",
    "list_unfinished_task_records",
    "mark_answer_delivered",
    "mark_checked",
    "profile_removed_at",
    "raise_issue",
    "read_task_parts",
    "remove_profile",
    "remove_rule",
    "remove_server",
    "resolve_issue",
    "save_answer",
    "save_task_record",
    "server_removed_at",
    "set_round_approval",
    "set_server_trusted",
    "task_record_by_task_id",
    "task_record_with_inputs",
    "task_records_matching",
    "unfinished_task_ids",
    "unmarked",
    "update_server",
]
