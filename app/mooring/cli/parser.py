"""The ``mooring`` command line."""

from __future__ import annotations

import argparse

from mooring import __version__


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every ``mooring`` command."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--data-dir",
        metavar="DIR",
        help="keep all of Mooring's files under DIR (default: $MOORING_DATA_DIR, else the "
        "platform's user data folder)",
    )
    common.add_argument("--json", action="store_true", help="print machine-readable JSON")
    common.add_argument("--log-json", action="store_true", help="write the log file as JSON lines")

    parser = argparse.ArgumentParser(
        prog="mooring",
        description="Mooring: a desktop MCP host for long-running, durable work.",
        parents=[common],
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
    add.add_argument("name")
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
    imp.add_argument("file")
    servers_cmd.add_parser("list", parents=[common], help="list servers")
    rm = servers_cmd.add_parser("remove", parents=[common], help="remove a server")
    rm.add_argument("name")

    tools = commands.add_parser("tools", parents=[common], help="inspect tools")
    tools_cmd = tools.add_subparsers(dest="tools_command", metavar="ACTION", required=True)
    tools_list = tools_cmd.add_parser("list", parents=[common], help="list tools")
    tools_list.add_argument("server", nargs="?")

    call = commands.add_parser(
        "call", parents=[common], help="call a tool; follow its task to the end"
    )
    call.add_argument("server")
    call.add_argument("tool")
    call.add_argument("--args", help="tool arguments as a JSON object")
    call.add_argument("--detach", action="store_true", help="return once the task id is persisted")
    call.add_argument("--account", metavar="LABEL", help="the server account to use")
    call.add_argument("--timeout", type=float, metavar="S", help="stop following after S seconds")

    accounts = commands.add_parser("accounts", parents=[common], help="server accounts")
    accounts_cmd = accounts.add_subparsers(dest="accounts_command", metavar="ACTION", required=True)
    al = accounts_cmd.add_parser("list", parents=[common], help="a server's accounts")
    al.add_argument("server")
    aa = accounts_cmd.add_parser("add", parents=[common], help="add an account to a server")
    aa.add_argument("server")
    aa.add_argument("label")
    ar = accounts_cmd.add_parser("remove", parents=[common], help="remove an account")
    ar.add_argument("server")
    ar.add_argument("label")
    ali = accounts_cmd.add_parser("login", parents=[common], help="sign in (OAuth)")
    ali.add_argument("server")
    ali.add_argument("--account", metavar="LABEL")
    alo = accounts_cmd.add_parser("logout", parents=[common], help="forget an account's tokens")
    alo.add_argument("server")
    alo.add_argument("--account", metavar="LABEL")

    rules = commands.add_parser("rules", parents=[common], help="approval rules")
    rules_cmd = rules.add_subparsers(dest="rules_command", metavar="ACTION", required=True)
    rules_cmd.add_parser("list", parents=[common], help="list approval rules")
    radd = rules_cmd.add_parser("add", parents=[common], help="add an approval rule")
    radd.add_argument("server")
    radd.add_argument("tool", help="tool name or pattern such as '*' or 'list_*'")
    radd.add_argument("decision", choices=["allow", "ask", "deny"])
    radd.add_argument("--scope", choices=["once", "conversation", "always"], default="always")
    rrm = rules_cmd.add_parser("remove", parents=[common], help="remove an approval rule")
    rrm.add_argument("id")

    tasks = commands.add_parser("tasks", parents=[common], help="durable tasks")
    tasks_cmd = tasks.add_subparsers(dest="tasks_command", metavar="ACTION", required=True)
    tl = tasks_cmd.add_parser("list", parents=[common], help="list tasks, newest first")
    tl.add_argument("--active", action="store_true", help="only unfinished tasks")
    tl.add_argument("--limit", type=int, default=50)
    ts = tasks_cmd.add_parser("show", parents=[common], help="show one task")
    ts.add_argument("id", help="local operation id, task id, or a unique prefix")
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
    tc.add_argument("id")
    tc.add_argument("--no-wait", action="store_true", help="do not wait for the outcome")
    tc.add_argument("--timeout", type=float, metavar="S", help="stop waiting after S seconds")
    ta = tasks_cmd.add_parser("answer", parents=[common], help="answer an input request")
    ta.add_argument("id")
    ta.add_argument("key", nargs="?", help="which question (default: the only open one)")
    how = ta.add_mutually_exclusive_group()
    how.add_argument("--value", help="the answer: the form's fields as a JSON object")
    how.add_argument("--decline", action="store_true", help="decline to answer")
    how.add_argument("--cancel", action="store_true", help="cancel the question")
    tab = tasks_cmd.add_parser(
        "abandon", parents=[common], help="give up on a call that may or may not have run"
    )
    tab.add_argument("id")
    tre = tasks_cmd.add_parser(
        "retry", parents=[common], help="send a call with an unknown outcome again"
    )
    tre.add_argument("id")
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
    dismiss.add_argument("id")
    traces = commands.add_parser("traces", parents=[common], help="task-lifecycle traces")
    traces_cmd = traces.add_subparsers(dest="traces_command", metavar="ACTION", required=True)
    tex = traces_cmd.add_parser(
        "export", parents=[common], help="write traces as OTLP/JSON lines (for bug reports)"
    )
    tex.add_argument("--task", metavar="ID", help="only this task's trace")
    tex.add_argument("--since", metavar="DATE", help="only spans that started since DATE")
    tex.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
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
    sset.add_argument("key")
    sset.add_argument("value")
    return parser
