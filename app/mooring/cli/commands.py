"""Dispatching a parsed command line to its handler."""

from __future__ import annotations

import argparse
import functools
from collections.abc import Awaitable, Callable
from pathlib import Path

from mooring.cli import accounts, chat, conversations, providers, rules, servers, tasks, traces
from mooring.cli.context import CliContext
from mooring.cli.exit_codes import ExitCode

Handler = Callable[[CliContext, argparse.Namespace], Awaitable[ExitCode]]

HANDLERS: dict[tuple[str, str | None], Handler] = {
    ("servers", "add"): servers.add,
    ("servers", "list"): servers.list_servers,
    ("servers", "remove"): servers.remove,
    ("servers", "import"): servers.import_file,
    ("tools", "list"): servers.list_tools,
    ("call", None): tasks.call,
    ("accounts", "list"): accounts.list_accounts,
    ("accounts", "add"): accounts.add_account,
    ("accounts", "remove"): accounts.remove_account,
    ("accounts", "login"): accounts.login,
    ("accounts", "logout"): accounts.logout,
    ("rules", "list"): rules.list_rules,
    ("rules", "add"): rules.add_rule,
    ("rules", "remove"): rules.remove_rule,
    ("tasks", "list"): tasks.list_tasks,
    ("tasks", "show"): tasks.show,
    ("tasks", "watch"): tasks.watch,
    ("tasks", "cancel"): tasks.cancel,
    ("tasks", "answer"): tasks.answer,
    ("tasks", "abandon"): tasks.abandon,
    ("tasks", "retry"): tasks.retry,
    ("reconcile", None): tasks.reconcile,
    ("issues", None): tasks.list_issues,
    ("issues", "list"): tasks.list_issues,
    ("issues", "dismiss"): tasks.dismiss_issue,
    # model providers (issue 12)
    ("providers", "add"): providers.add,
    ("providers", "list"): providers.list_providers,
    ("providers", "remove"): providers.remove,
    ("providers", "default"): providers.set_default,
    ("providers", "test"): providers.test,
    ("providers", "models"): providers.models,
    ("chat", None): chat.chat,
    ("conversations", "list"): conversations.list_conversations,
    ("conversations", "show"): conversations.show,
    ("conversations", "search"): conversations.search,
    ("conversations", "rename"): conversations.rename,
    ("conversations", "delete"): conversations.delete,
    ("conversations", "export"): conversations.export,
    ("conversations", "set"): conversations.configure,
}

HEADLESS = {
    "servers",
    "tools",
    "call",
    "tasks",
    "rules",
    "reconcile",
    "issues",
    "traces",
    "accounts",
    "providers",
    "chat",
    "conversations",
}
"""Commands that run without the GUI and need the host's services."""


def handler_for(args: argparse.Namespace, *, traces_dir: Path) -> Handler:
    """The coroutine function that runs this command line."""
    if args.command == "traces":
        return functools.partial(traces.export, traces_dir=traces_dir)
    action = getattr(args, f"{args.command}_command", None)
    return HANDLERS[(args.command, action)]
