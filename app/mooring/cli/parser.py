"""The ``mooring`` command line."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import partial

from mooring import __version__

TYPE_CHECKING = False  # not typing's: the quick listing loads no typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


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


class _Command(argparse.ArgumentParser):
    """A command's parser that adds its own options and actions when first used (parsed, or its
    usage or help shown), or at once unless ``deferred``: a command line then builds only the
    parser of the command it names (``tasks list`` builds 25 parsers of 56, in a fifth of the
    time)."""

    def __init__(
        self,
        *args: Any,
        fill: Callable[[argparse.ArgumentParser], None] | None = None,
        deferred: bool = False,
        **kwargs: Any,
    ) -> None:
        self._fill = fill
        self._help_due = deferred and kwargs.get("add_help", True)
        if self._help_due:  # its -h too: of the little a parser costs, the most
            kwargs["add_help"] = False
        super().__init__(*args, **kwargs)
        if not deferred:
            self._filled()

    def _filled(self) -> None:
        if self._help_due:
            self._help_due = False
            self.add_argument(
                "-h",
                "--help",
                action="help",
                default=argparse.SUPPRESS,
                help="show this help message and exit",
            )
        fill, self._fill = self._fill, None
        if fill is not None:
            fill(self)

    def parse_known_args(self, *args: Any, **kwargs: Any) -> Any:
        self._filled()
        return super().parse_known_args(*args, **kwargs)

    def format_usage(self, *args: Any, **kwargs: Any) -> str:
        self._filled()
        return super().format_usage(*args, **kwargs)

    def format_help(self, *args: Any, **kwargs: Any) -> str:
        self._filled()
        return super().format_help(*args, **kwargs)


def build_parser(*, deferred: bool = False) -> argparse.ArgumentParser:
    """The argument parser for every ``mooring`` command; ``deferred``: each command's own
    parser is completed only when the command line names it (the entry point's choice; what
    walks the whole tree, such as the reference's generator, wants it complete)."""
    top = argparse.ArgumentParser(add_help=False)
    _add_global_options(top, default=None)

    parser = argparse.ArgumentParser(
        prog="mooring",
        description="Mooring: a desktop MCP host for long-running, durable work.",
        parents=[top],
    )
    parser.add_argument("--version", action="version", version=f"mooring {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Command)
    for name, text, fill in COMMANDS:
        commands.add_parser(name, help=text, fill=partial(_complete, fill), deferred=deferred)
    return parser


def _complete(
    fill: Callable[[argparse.ArgumentParser], None] | None, command: argparse.ArgumentParser
) -> None:
    # The same options before and after the command: `mooring --json tasks show ID` and
    # `mooring tasks show ID --json` mean the same. The copies on every command default to
    # SUPPRESS, so a command's parser sets them only when given there and never overwrites a
    # value given before the command with its own default.
    _add_global_options(command, default=argparse.SUPPRESS)
    if fill is not None:
        fill(command)


def _action(actions: Any, name: str, *, help: str) -> argparse.ArgumentParser:
    """One action of a command (``tasks list``), with the global options (see _complete)."""
    action: argparse.ArgumentParser = actions.add_parser(name, help=help)
    _add_global_options(action, default=argparse.SUPPRESS)
    return action


def _servers(servers: argparse.ArgumentParser) -> None:
    """``mooring servers``."""
    servers_cmd = servers.add_subparsers(dest="servers_command", metavar="ACTION", required=True)
    add = _action(servers_cmd, "add", help="add a stdio or HTTP server")
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
    imp = _action(
        servers_cmd,
        "import",
        help="import Claude Desktop / Cursor (mcpServers) or VS Code (servers) JSON",
    )
    imp.add_argument(
        "file",
        nargs="?",
        help="the file to import (without one: show what the configurations found here hold)",
    )
    _action(servers_cmd, "list", help="list servers")
    rm = _action(servers_cmd, "remove", help="remove a server")
    rm.add_argument("name", help="the server's name")


def _tools(tools: argparse.ArgumentParser) -> None:
    """``mooring tools``."""
    tools_cmd = tools.add_subparsers(dest="tools_command", metavar="ACTION", required=True)
    tools_list = _action(tools_cmd, "list", help="list tools")
    tools_list.add_argument(
        "server", nargs="?", help="only this server's tools (default: every server)"
    )


def _call(call: argparse.ArgumentParser) -> None:
    """``mooring call``."""
    call.add_argument("server", help="the server's name")
    call.add_argument("tool", help="the tool's name")
    call.add_argument("--args", help="tool arguments as a JSON object")
    call.add_argument("--detach", action="store_true", help="return once the task id is persisted")
    call.add_argument("--account", metavar="LABEL", help="the server account to use")
    call.add_argument("--timeout", type=float, metavar="S", help="stop following after S seconds")


def _accounts(accounts: argparse.ArgumentParser) -> None:
    """``mooring accounts``."""
    accounts_cmd = accounts.add_subparsers(dest="accounts_command", metavar="ACTION", required=True)
    al = _action(accounts_cmd, "list", help="a server's accounts")
    al.add_argument("server", help="the server's name")
    aa = _action(accounts_cmd, "add", help="add an account to a server")
    aa.add_argument("server", help="the server's name")
    aa.add_argument("label", help="a name for the account, e.g. work")
    ar = _action(accounts_cmd, "remove", help="remove an account")
    ar.add_argument("server", help="the server's name")
    ar.add_argument("label", help="the account's label")
    ali = _action(accounts_cmd, "login", help="sign in (OAuth)")
    ali.add_argument("server", help="the server's name")
    ali.add_argument("--account", metavar="LABEL", help="which account (default: the default one)")
    alo = _action(accounts_cmd, "logout", help="forget an account's tokens")
    alo.add_argument("server", help="the server's name")
    alo.add_argument("--account", metavar="LABEL", help="which account (default: the default one)")


def _rules(rules: argparse.ArgumentParser) -> None:
    """``mooring rules``."""
    rules_cmd = rules.add_subparsers(dest="rules_command", metavar="ACTION", required=True)
    _action(rules_cmd, "list", help="list approval rules")
    radd = _action(rules_cmd, "add", help="add an approval rule")
    radd.add_argument("server", help="the server's name")
    radd.add_argument("tool", help="tool name or pattern such as '*' or 'list_*'")
    radd.add_argument("decision", choices=["allow", "ask", "deny"], help="what the rule decides")
    radd.add_argument(
        "--scope",
        choices=["once", "conversation", "always"],
        default="always",
        help="how long the rule holds (conversation rules are made in the app)",
    )
    rrm = _action(rules_cmd, "remove", help="remove an approval rule")
    rrm.add_argument("id", help="the rule's id (from rules list)")


def _tasks(tasks: argparse.ArgumentParser) -> None:
    """``mooring tasks``."""
    tasks_cmd = tasks.add_subparsers(dest="tasks_command", metavar="ACTION", required=True)
    tl = _action(tasks_cmd, "list", help="list tasks, newest first")
    tl.add_argument("--active", action="store_true", help="only unfinished tasks")
    tl.add_argument("--limit", type=int, default=50, help="at most this many")
    ts = _action(tasks_cmd, "show", help="show one task")
    ts.add_argument("id", help="local operation id, task id, or a unique prefix")
    ts.add_argument(
        "--resource",
        nargs="?",
        const="*",
        metavar="URI",
        help="also read what the result links to (every link, or only URI) from the server",
    )
    tw = _action(tasks_cmd, "watch", help="follow tasks to their end")
    tw.add_argument("ids", nargs="*", metavar="ID", help="default: every active task")
    tw.add_argument("--timeout", type=float, metavar="S", help="stop following after S seconds")
    tw.add_argument(
        "--notify",
        action="store_true",
        help="notify (privately) when a task ends or needs you; keep following tasks that "
        "wait for an answer",
    )
    tc = _action(tasks_cmd, "cancel", help="ask the server to cancel")
    tc.add_argument("id", help="local operation id, task id, or a unique prefix")
    tc.add_argument("--no-wait", action="store_true", help="do not wait for the outcome")
    tc.add_argument("--timeout", type=float, metavar="S", help="stop waiting after S seconds")
    ta = _action(tasks_cmd, "answer", help="answer an input request")
    ta.add_argument("id", help="local operation id, task id, or a unique prefix")
    ta.add_argument("key", nargs="?", help="which question (default: the only open one)")
    how = ta.add_mutually_exclusive_group()
    how.add_argument("--value", help="the answer: the form's fields as a JSON object")
    how.add_argument("--decline", action="store_true", help="decline to answer")
    how.add_argument("--cancel", action="store_true", help="cancel the question")
    tab = _action(tasks_cmd, "abandon", help="give up on a call that may or may not have run")
    tab.add_argument("id", help="local operation id, task id, or a unique prefix")
    tre = _action(tasks_cmd, "retry", help="send a call with an unknown outcome again")
    tre.add_argument("id", help="local operation id, task id, or a unique prefix")
    tre.add_argument(
        "--may-run-twice",
        action="store_true",
        help="retry even though the first call may have run",
    )
    tre.add_argument("--timeout", type=float, metavar="S", help="stop following after S seconds")


def _issues(issues: argparse.ArgumentParser) -> None:
    """``mooring issues``."""
    issues_cmd = issues.add_subparsers(dest="issues_command", metavar="ACTION")
    _action(issues_cmd, "list", help="open issues (the default)")
    dismiss = _action(issues_cmd, "dismiss", help="mark an issue resolved")
    dismiss.add_argument("id", help="the issue's id (from mooring issues)")


def _traces(traces: argparse.ArgumentParser) -> None:
    """``mooring traces``."""
    traces_cmd = traces.add_subparsers(dest="traces_command", metavar="ACTION", required=True)
    tex = _action(traces_cmd, "export", help="write traces as OTLP/JSON lines (for bug reports)")
    tex.add_argument("--task", metavar="ID", help="only this task's trace")
    tex.add_argument("--since", metavar="DATE", help="only spans that started since DATE")
    tex.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")


def _providers(providers: argparse.ArgumentParser) -> None:
    """``mooring providers``."""
    cmd = providers.add_subparsers(dest="providers_command", metavar="ACTION", required=True)
    add = _action(cmd, "add", help="add an OpenAI-compatible or Anthropic endpoint")
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
    _action(cmd, "list", help="list providers")
    for action, text in (
        ("remove", "remove a provider and its secrets"),
        ("default", "use this provider for new conversations"),
    ):
        sub = _action(cmd, action, help=text)
        sub.add_argument("name", help="the provider's name")
    for action, text in (
        ("test", "make one tiny request and say what works"),
        ("models", "list the models the endpoint offers"),
    ):
        sub = _action(cmd, action, help=text)
        sub.add_argument("name", nargs="?", help="default: the default provider")


def _chat(chat: argparse.ArgumentParser) -> None:
    """``mooring chat``."""
    chat.add_argument("message", nargs="+", help="what to say (words are joined by spaces)")
    chat.add_argument("--conversation", metavar="ID", help="continue this conversation")
    chat.add_argument("--provider", metavar="NAME", help="the model provider to use")
    chat.add_argument(
        "--wait",
        action="store_true",
        help="follow any task the reply started to its end, then continue with its result",
    )
    chat.add_argument("--timeout", type=float, metavar="S", help="with --wait: stop after S s")


def _conversations(conv: argparse.ArgumentParser) -> None:
    """``mooring conversations``."""
    conv_cmd = conv.add_subparsers(dest="conversations_command", metavar="ACTION", required=True)
    cl = _action(conv_cmd, "list", help="most recently active first")
    cl.add_argument("--limit", type=int, default=50, help="at most this many")
    cs = _action(conv_cmd, "show", help="messages and tool rounds")
    cs.add_argument("id", help="conversation id or a unique prefix")
    cf = _action(conv_cmd, "search", help="full-text search")
    cf.add_argument("text", nargs="+", help="words to find")
    cf.add_argument("--limit", type=int, default=20, help="at most this many")
    cr = _action(conv_cmd, "rename", help="give a new title")
    cr.add_argument("id", help="conversation id or a unique prefix")
    cr.add_argument("title", nargs="+", help="the new title")
    cd = _action(conv_cmd, "delete", help="delete (the task ledger stays)")
    cd.add_argument("id", help="conversation id or a unique prefix")
    ce = _action(conv_cmd, "export", help="what was said, what ran and why, as Markdown or JSON")
    ce.add_argument("id", help="conversation id or a unique prefix")
    ce.add_argument("--format", choices=["md", "json"], default="md", help="Markdown or JSON")
    ce.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    cset = _action(conv_cmd, "set", help="change a conversation's options")
    cset.add_argument("id", help="conversation id or a unique prefix")
    cset.add_argument(
        "--auto-continue",
        choices=["on", "off"],
        help="start a model turn when one of its tasks ends",
    )
    cset.add_argument("--mute", choices=["on", "off"], help="no notifications about it")
    cset.add_argument("--model", help="the model to ask")
    cset.add_argument("--provider", metavar="NAME", help="the model provider to use")


def _autostart(autostart: argparse.ArgumentParser) -> None:
    """``mooring autostart``."""
    autostart.add_argument(
        "switch", nargs="?", choices=["on", "off"], help="switch it on or off (default: show)"
    )


def _settings(settings: argparse.ArgumentParser) -> None:
    """``mooring settings``."""
    settings_cmd = settings.add_subparsers(dest="settings_command", metavar="ACTION", required=True)
    _action(settings_cmd, "list", help="every setting and its value")
    sset = _action(settings_cmd, "set", help="change a setting")
    sset.add_argument("key", help="the setting (see settings list)")
    sset.add_argument("value", help="its new value")


COMMANDS: tuple[tuple[str, str, Callable[[argparse.ArgumentParser], None] | None], ...] = (
    ("gui", "open the desktop app (the default with no command)", None),
    ("doctor", "check the database, keyring, notifications and Qt; say what to fix", None),
    ("servers", "manage MCP servers", _servers),
    ("tools", "inspect tools", _tools),
    ("call", "call a tool; follow its task to the end", _call),
    ("accounts", "server accounts", _accounts),
    ("rules", "approval rules", _rules),
    ("tasks", "durable tasks", _tasks),
    ("reconcile", "re-read every unfinished task from its server", None),
    ("issues", "problems that need you", _issues),
    ("traces", "task-lifecycle traces", _traces),
    ("providers", "model providers", _providers),
    ("chat", "send a message to a model; stream its reply", _chat),
    ("conversations", "conversations", _conversations),
    ("autostart", "start `mooring tasks watch --notify` at login (XDG autostart)", _autostart),
    ("settings", "see or change settings", _settings),
)
"""Every command: its name, its line in ``mooring --help``, what adds its options and actions."""
