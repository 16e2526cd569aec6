"""Dispatching a parsed command line to its handler (only the handler's module loads)."""

from __future__ import annotations

import argparse
import functools
import importlib
from collections.abc import Awaitable, Callable
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mooring.cli.context import CliContext
    from mooring.cli.exit_codes import ExitCode

Handler = Callable[["CliContext", argparse.Namespace], Awaitable["ExitCode"]]

HANDLERS: dict[tuple[str, str | None], str] = {
    ("servers", "add"): "servers:add",
    ("servers", "list"): "servers:list_servers",
    ("servers", "remove"): "servers:remove",
    ("servers", "import"): "servers:import_file",
    ("tools", "list"): "servers:list_tools",
    ("tools", "show"): "tool_show:show_tool",
    ("prompts", "list"): "prompts:list_prompts",
    ("prompts", "get"): "prompts:get_prompt",
    ("resources", "list"): "prompts:list_resources",
    ("call", None): "tasks:call",
    ("accounts", "list"): "accounts:list_accounts",
    ("accounts", "add"): "accounts:add_account",
    ("accounts", "remove"): "accounts:remove_account",
    ("accounts", "login"): "accounts:login",
    ("accounts", "logout"): "accounts:logout",
    ("rules", "list"): "rules:list_rules",
    ("rules", "add"): "rules:add_rule",
    ("rules", "remove"): "rules:remove_rule",
    ("tasks", "list"): "tasks:list_tasks",
    ("tasks", "show"): "tasks:show",
    ("tasks", "watch"): "tasks:watch",
    ("tasks", "cancel"): "tasks:cancel",
    ("tasks", "answer"): "tasks:answer",
    ("tasks", "abandon"): "tasks:abandon",
    ("tasks", "retry"): "tasks:retry",
    ("reconcile", None): "tasks:reconcile",
    ("issues", None): "tasks:list_issues",
    ("issues", "list"): "tasks:list_issues",
    ("issues", "dismiss"): "tasks:dismiss_issue",
    # model providers (issue 12)
    ("providers", "add"): "providers:add",
    ("providers", "edit"): "providers:edit",
    ("providers", "list"): "providers:list_providers",
    ("providers", "remove"): "providers:remove",
    ("providers", "default"): "providers:set_default",
    ("providers", "test"): "providers:test",
    ("providers", "models"): "providers:models",
    ("chat", None): "chat:chat",
    ("assistants", "list"): "assistants:list_assistants",
    ("assistants", "add"): "assistants:add",
    ("assistants", "edit"): "assistants:edit",
    ("assistants", "remove"): "assistants:remove",
    ("conversations", "list"): "conversations:list_conversations",
    ("conversations", "show"): "conversations:show",
    ("conversations", "search"): "conversations:search",
    ("conversations", "rename"): "conversations:rename",
    ("conversations", "delete"): "conversations:delete",
    ("conversations", "export"): "conversations:export",
    ("conversations", "set"): "conversations:configure",
    ("conversations", "regenerate"): "chat:regenerate",
    ("conversations", "edit"): "chat:edit_message",
    ("conversations", "branch"): "chat:branch",
    ("conversations", "versions"): "conversations:versions",
    ("conversations", "show-version"): "conversations:show_version",
}

HEADLESS = {
    "servers",
    "tools",
    "prompts",
    "resources",
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
    "assistants",
}
"""Commands that run without the GUI and need the host's services."""


class EngineUse(Enum):
    """Whether a command runs in the data folder's engine."""

    NEEDED = "needed"
    """It makes or follows live server state (a task, a question, a stateful conversation):
    the engine runs it, started first when none runs."""
    IF_RUNNING = "if_running"
    """It reads or changes what is stored: in the engine while one runs (so the window and
    the engine's caches see the change), else in this process."""
    NEVER = "never"
    """It needs nothing of a host."""


NEEDS_ENGINE = frozenset(
    {
        ("call", None),
        ("tasks", "watch"),
        ("tasks", "answer"),
        ("tasks", "cancel"),
        ("tasks", "retry"),
        ("reconcile", None),
        ("chat", None),
        ("conversations", "regenerate"),
        ("conversations", "edit"),
    }
)
"""The commands that need the engine's connections (see :class:`EngineUse`)."""


def engine_use(args: argparse.Namespace) -> EngineUse:
    """Where this command line runs."""
    if args.command == "traces":
        return EngineUse.IF_RUNNING  # the engine writes what it traced first, then it is read
    action = getattr(args, f"{args.command}_command", None)
    return EngineUse.NEEDED if (args.command, action) in NEEDS_ENGINE else EngineUse.IF_RUNNING


def handler_for(args: argparse.Namespace, *, traces_dir: Path) -> Handler:
    """The coroutine function that runs this command line."""
    if args.command == "traces":
        from mooring.cli import traces

        return functools.partial(traces.export, traces_dir=traces_dir)
    action = getattr(args, f"{args.command}_command", None)
    module, name = HANDLERS[(args.command, action)].split(":")
    handler: Handler = getattr(importlib.import_module(f"mooring.cli.{module}"), name)
    return handler
