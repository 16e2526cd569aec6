"""The ``mooring`` command line."""

from __future__ import annotations

import argparse
from typing import Any

from mooring import __version__


def _add_global_options(parser: argparse.ArgumentParser, *, default: object) -> None:
    """``--data-dir``, ``--json`` and ``--log-json`` (``default`` None: the top-level copy)."""
    flag_default = False if default is None else default
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        default=default,
        help="keep all of Mooring's files under DIR (default: $MOORING_DATA_DIR, else the "
        "platform's user data folder)",
    )
    parser.add_argument(
        "--json", action="store_true", default=flag_default, help="print machine-readable JSON"
    )
    parser.add_argument(
        "--log-json",
        action="store_true",
        default=flag_default,
        help="write the log file as JSON lines",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every ``mooring`` command."""
    # The same options before and after the command: `mooring --json tasks show ID` and
    # `mooring tasks show ID --json` mean the same. The copies on every command default to
    # SUPPRESS, so a command's parser sets them only when given there and never overwrites a
    # value given before the command with its own default.
    common = argparse.ArgumentParser(add_help=False)
    _add_global_options(common, default=argparse.SUPPRESS)
    top = argparse.ArgumentParser(add_help=False)
    _add_global_options(top, default=None)

    parser = argparse.ArgumentParser(
        prog="mooring",
        description="Mooring: a desktop MCP host for long-running, durable work.",
        parents=[top],
    )
    parser.add_argument("--version", action="version", version=f"mooring {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser(
        "gui", parents=[common], help="open the desktop app (the default with no command)"
    )
    commands.add_parser(
        "doctor",
        parents=[common],
        help="check the database, keyring, notifications and Qt; say what to fix",
    )

    servers = commands.add_parser("servers", parents=[common], help="manage MCP servers")
    servers_cmd = servers.add_subparsers(dest="servers_command", metavar="ACTION", required=True)
    add = servers_cmd.add_parser("add", parents=[common], help="add a stdio or HTTP server")
    add.add_argument("name", help="the name Mooring calls the server by (its alias)")
    where = add.add_mutually_exclusive_group(required=True)
    where.add_argument("--command", dest="program", help="program that runs a stdio server")
    where.add_argument("--url", help="Streamable HTTP endpoint")
    add.add_argument(
        "--arg", action="append", help="argument for --command (repeatable; --arg=-x for dashes)"
    )
    add.add_argument("--env", action="append", metavar="K=V", help="environment (repeatable)")
    add.add_argument("--cwd", help="working folder for --command")
    add.add_argument(
        "--header", action="append", metavar="K=V", help="HTTP header; kept in the keyring"
    )
    add.add_argument(
        "--trusted", action="store_true", help="believe this server's tool annotations"
    )
    add.add_argument(
        "--allow-tool", action="append", metavar="PATTERN", help="only these tools may run"
    )
    add.add_argument(
        "--hide-tool",
        action="append",
        metavar="PATTERN",
        help="never show this tool to the model, never run it",
    )
    imp = servers_cmd.add_parser(
        "import",
        parents=[common],
        help="import Claude Desktop / Cursor (mcpServers) or VS Code (servers) JSON",
    )
    imp.add_argument(
        "file",
        nargs="?",
        help="the file to import (without one: show what the configurations found here hold)",
    )
    servers_cmd.add_parser("list", parents=[common], help="list servers")
    rm = servers_cmd.add_parser("remove", parents=[common], help="remove a server")
    rm.add_argument("name", help="the server's name")

    tools = commands.add_parser("tools", parents=[common], help="inspect tools")
    tools_cmd = tools.add_subparsers(dest="tools_command", metavar="ACTION", required=True)
    tools_list = tools_cmd.add_parser("list", parents=[common], help="list tools")
    tools_list.add_argument(
        "server", nargs="?", help="only this server's tools (default: every server)"
    )

    call = commands.add_parser(
        "call", parents=[common], help="call a tool; follow its task to the end"
    )
    call.add_argument("server", help="the server's name")
    call.add_argument("tool", help="the tool's name")
    call.add_argument("--args", help="tool arguments as a JSON object")
    call.add_argument("--detach", action="store_true", help="return once the task id is persisted")
    call.add_argument("--account", metavar="LABEL", help="the server account to use")
    call.add_argument("--timeout", type=float, metavar="S", help="stop following after S seconds")

    accounts = commands.add_parser("accounts", parents=[common], help="server accounts")
    accounts_cmd = accounts.add_subparsers(dest="accounts_command", metavar="ACTION", required=True)
    al = accounts_cmd.add_parser("list", parents=[common], help="a server's accounts")
    al.add_argument("server", help="the server's name")
    aa = accounts_cmd.add_parser("add", parents=[common], help="add an account to a server")
    aa.add_argument("server", help="the server's name")
    aa.add_argument("label", help="a name for the account, e.g. work")
    ar = accounts_cmd.add_parser("remove", parents=[common], help="remove an account")
    ar.add_argument("server", help="the server's name")
    ar.add_argument("label", help="the account's label")
    ali = accounts_cmd.add_parser("login", parents=[common], help="sign in (OAuth)")
    ali.add_argument("server", help="the server's name")
    ali.add_argument("--account", metavar="LABEL", help="which account (default: the default one)")
    alo = accounts_cmd.add_parser("logout", parents=[common], help="forget an account's tokens")
    alo.add_argument("server", help="the server's name")
    alo.add_argument("--account", metavar="LABEL", help="which account (default: the default one)")

    rules = commands.add_parser("rules", parents=[common], help="approval rules")
    rules_cmd = rules.add_subparsers(dest="rules_command", metavar="ACTION", required=True)
    rules_cmd.add_parser("list", parents=[common], help="list approval rules")
    radd = rules_cmd.add_parser("add", parents=[common], help="add an approval rule")
    radd.add_argument("server", help="the server's name")
    radd.add_argument("tool", help="tool name or pattern such as '*' or 'list_*'")
    radd.add_argument("decision", choices=["allow", "ask", "deny"], help="what the rule decides")
    radd.add_argument(
        "--scope",
        choices=["once", "conversation", "always"],
        default="always",
        help="how long the rule holds (conversation rules are made in the app)",
    )
    rrm = rules_cmd.add_parser("remove", parents=[common], help="remove an approval rule")
    rrm.add_argument("id", help="the rule's id (from rules list)")

    tasks = commands.add_parser("tasks", parents=[common], help="durable tasks")
    tasks_cmd = tasks.add_subparsers(dest="tasks_command", metavar="ACTION", required=True)
    tl = tasks_cmd.add_parser("list", parents=[common], help="list tasks, newest first")
    tl.add_argument("--active", action="store_true", help="only unfinished tasks")
    tl.add_argument("--limit", type=int, default=50, help="at most this many")
    ts = tasks_cmd.add_parser("show", parents=[common], help="show one task")
    ts.add_argument("id", help="local operation id, task id, or a unique prefix")
    ts.add_argument(
        "--resource",
        nargs="?",
        const="*",
        metavar="URI",
        help="also read what the result links to (every link, or only URI) from the server",
    )
    tw = tasks_cmd.add_parser("watch", parents=[common], help="follow tasks to their end")
    tw.add_argument("ids", nargs="*", metavar="ID", help="default: every active task")
    tw.add_argument("--timeout", type=float, metavar="S", help="stop following after S seconds")
    tw.add_argument(
        "--notify",
        action="store_true",
        help="notify (privately) when a task ends or needs you; keep following tasks that "
        "wait for an answer",
    )
    tc = tasks_cmd.add_parser("cancel", parents=[common], help="ask the server to cancel")
    tc.add_argument("id", help="local operation id, task id, or a unique prefix")
    tc.add_argument("--no-wait", action="store_true", help="do not wait for the outcome")
    tc.add_argument("--timeout", type=float, metavar="S", help="stop waiting after S seconds")
    ta = tasks_cmd.add_parser("answer", parents=[common], help="answer an input request")
    ta.add_argument("id", help="local operation id, task id, or a unique prefix")
    ta.add_argument("key", nargs="?", help="which question (default: the only open one)")
    how = ta.add_mutually_exclusive_group()
    how.add_argument("--value", help="the answer: the form's fields as a JSON object")
    how.add_argument("--decline", action="store_true", help="decline to answer")
    how.add_argument("--cancel", action="store_true", help="cancel the question")
    tab = tasks_cmd.add_parser(
        "abandon", parents=[common], help="give up on a call that may or may not have run"
    )
    tab.add_argument("id", help="local operation id, task id, or a unique prefix")
    tre = tasks_cmd.add_parser(
        "retry", parents=[common], help="send a call with an unknown outcome again"
    )
    tre.add_argument("id", help="local operation id, task id, or a unique prefix")
    tre.add_argument(
        "--may-run-twice",
        action="store_true",
        help="retry even though the first call may have run",
    )
    tre.add_argument("--timeout", type=float, metavar="S", help="stop following after S seconds")
    commands.add_parser(
        "reconcile", parents=[common], help="re-read every unfinished task from its server"
    )
    issues = commands.add_parser("issues", parents=[common], help="problems that need you")
    issues_cmd = issues.add_subparsers(dest="issues_command", metavar="ACTION")
    issues_cmd.add_parser("list", parents=[common], help="open issues (the default)")
    dismiss = issues_cmd.add_parser("dismiss", parents=[common], help="mark an issue resolved")
    dismiss.add_argument("id", help="the issue's id (from mooring issues)")
    traces = commands.add_parser("traces", parents=[common], help="task-lifecycle traces")
    traces_cmd = traces.add_subparsers(dest="traces_command", metavar="ACTION", required=True)
    tex = traces_cmd.add_parser(
        "export", parents=[common], help="write traces as OTLP/JSON lines (for bug reports)"
    )
    tex.add_argument("--task", metavar="ID", help="only this task's trace")
    tex.add_argument("--since", metavar="DATE", help="only spans that started since DATE")
    tex.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    _add_provider_commands(commands, common)
    _add_chat_commands(commands, common)
    autostart = commands.add_parser(
        "autostart",
        parents=[common],
        help="start `mooring tasks watch --notify` at login (XDG autostart)",
    )
    autostart.add_argument(
        "switch", nargs="?", choices=["on", "off"], help="switch it on or off (default: show)"
    )
    settings = commands.add_parser("settings", parents=[common], help="see or change settings")
    settings_cmd = settings.add_subparsers(dest="settings_command", metavar="ACTION", required=True)
    settings_cmd.add_parser("list", parents=[common], help="every setting and its value")
    sset = settings_cmd.add_parser("set", parents=[common], help="change a setting")
    sset.add_argument("key", help="the setting (see settings list)")
    sset.add_argument("value", help="its new value")
    return parser


def _add_provider_commands(commands: Any, common: argparse.ArgumentParser) -> None:
    """``mooring providers …`` (issue 12)."""
    providers = commands.add_parser("providers", parents=[common], help="model providers")
    cmd = providers.add_subparsers(dest="providers_command", metavar="ACTION", required=True)
    add = cmd.add_parser(
        "add", parents=[common], help="add an OpenAI-compatible or Anthropic endpoint"
    )
    add.add_argument("name", help="the name Mooring calls the provider by")
    add.add_argument("--kind", choices=["openai", "anthropic"], required=True)
    add.add_argument(
        "--base-url",
        metavar="URL",
        help="the endpoint (default: OpenAI's or Anthropic's own; Ollama: "
        "http://127.0.0.1:11434/v1)",
    )
    add.add_argument("--model", required=True, help="the model id to chat with")
    key = add.add_mutually_exclusive_group()
    key.add_argument(
        "--api-key-env", metavar="VAR", help="read the API key from this environment variable"
    )
    key.add_argument(
        "--api-key-stdin", action="store_true", help="read the API key from standard input"
    )
    add.add_argument(
        "--header", action="append", metavar="K=V", help="HTTP header; kept in the keyring"
    )
    cmd.add_parser("list", parents=[common], help="list providers")
    for action, text in (
        ("remove", "remove a provider and its secrets"),
        ("default", "use this provider for new conversations"),
    ):
        sub = cmd.add_parser(action, parents=[common], help=text)
        sub.add_argument("name", help="the provider's name")
    for action, text in (
        ("test", "make one tiny request and say what works"),
        ("models", "list the models the endpoint offers"),
    ):
        sub = cmd.add_parser(action, parents=[common], help=text)
        sub.add_argument("name", nargs="?", help="default: the default provider")


def _add_chat_commands(commands: Any, common: argparse.ArgumentParser) -> None:
    """``mooring chat`` and ``mooring conversations …``."""
    chat = commands.add_parser(
        "chat", parents=[common], help="send a message to a model; stream its reply"
    )
    chat.add_argument("message", nargs="+", help="what to say (words are joined by spaces)")
    chat.add_argument("--conversation", metavar="ID", help="continue this conversation")
    chat.add_argument("--provider", metavar="NAME", help="the model provider to use")
    chat.add_argument(
        "--wait",
        action="store_true",
        help="follow any task the reply started to its end, then continue with its result",
    )
    chat.add_argument("--timeout", type=float, metavar="S", help="with --wait: stop after S s")

    conv = commands.add_parser("conversations", parents=[common], help="conversations")
    conv_cmd = conv.add_subparsers(dest="conversations_command", metavar="ACTION", required=True)
    cl = conv_cmd.add_parser("list", parents=[common], help="most recently active first")
    cl.add_argument("--limit", type=int, default=50, help="at most this many")
    cs = conv_cmd.add_parser("show", parents=[common], help="messages and tool rounds")
    cs.add_argument("id", help="conversation id or a unique prefix")
    cf = conv_cmd.add_parser("search", parents=[common], help="full-text search")
    cf.add_argument("text", nargs="+", help="words to find")
    cf.add_argument("--limit", type=int, default=20, help="at most this many")
    cr = conv_cmd.add_parser("rename", parents=[common], help="give a new title")
    cr.add_argument("id", help="conversation id or a unique prefix")
    cr.add_argument("title", nargs="+", help="the new title")
    cd = conv_cmd.add_parser("delete", parents=[common], help="delete (the task ledger stays)")
    cd.add_argument("id", help="conversation id or a unique prefix")
    ce = conv_cmd.add_parser(
        "export", parents=[common], help="what was said, what ran and why, as Markdown or JSON"
    )
    ce.add_argument("id", help="conversation id or a unique prefix")
    ce.add_argument("--format", choices=["md", "json"], default="md", help="Markdown or JSON")
    ce.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    cset = conv_cmd.add_parser("set", parents=[common], help="change a conversation's options")
    cset.add_argument("id", help="conversation id or a unique prefix")
    cset.add_argument(
        "--auto-continue",
        choices=["on", "off"],
        help="start a model turn when one of its tasks ends",
    )
    cset.add_argument("--mute", choices=["on", "off"], help="no notifications about it")
    cset.add_argument("--model", help="the model to ask")
    cset.add_argument("--provider", metavar="NAME", help="the model provider to use")
