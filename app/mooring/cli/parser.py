"""The ``mooring`` command line."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Mapping

from mooring import __version__

TYPE_CHECKING = False  # not typing's: the quick listing loads no typing (docs/architecture.md)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    Fill = Callable[[argparse.ArgumentParser], None]
    """What adds a command's (or an action's) own arguments to its parser."""
    _SubParsers = argparse._SubParsersAction[argparse.ArgumentParser]
else:
    _SubParsers = argparse._SubParsersAction  # generic only in typeshed


class _Parser(argparse.ArgumentParser):
    """argparse's parser, which asks for the terminal's width only to lay out text.

    ``add_argument`` asks for a help formatter only to check the metavar against ``nargs``, and
    argparse's formatter reads the terminal's width as it is made, which loads ``shutil`` (with
    the compression modules it imports, ~5 ms of a quick command). A formatter of any width
    checks the same; usage, help and error messages still get the terminal's.
    """

    _adding = False

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        self._adding = True
        try:
            return super().add_argument(*args, **kwargs)
        finally:
            self._adding = False

    def _get_formatter(self, *args: Any, **kwargs: Any) -> argparse.HelpFormatter:
        if self._adding:
            return argparse.HelpFormatter(self.prog, width=80)
        return super()._get_formatter(*args, **kwargs)


class _Parsers(Mapping[str, argparse.ArgumentParser]):
    """Subcommands by name; each one's parser is made, and its arguments added, when it is
    first looked up."""

    def __init__(self, prog: str) -> None:
        self._prog = prog
        self._fills: dict[str, Fill | None] = {}
        self._made: dict[str, argparse.ArgumentParser] = {}

    def add(self, name: str, fill: Fill | None) -> None:
        """Add the subcommand ``name``, whose own arguments ``fill`` adds."""
        self._fills[name] = fill

    def __getitem__(self, name: str) -> argparse.ArgumentParser:
        parser = self._made.get(name)
        if parser is None:
            fill = self._fills[name]
            parser = self._made[name] = _Parser(prog=f"{self._prog} {name}")
            # The same options before and after the command: `mooring --json tasks show ID`
            # and `mooring tasks show ID --json` mean the same. The copies on every command
            # default to SUPPRESS, so a command's parser sets them only when given there and
            # never overwrites a value given before the command with its own default.
            _add_global_options(parser, default=argparse.SUPPRESS)
            if fill is not None:
                fill(parser)
        return parser

    def __contains__(self, name: object) -> bool:
        return name in self._fills

    def __iter__(self) -> Iterator[str]:
        return iter(self._fills)

    def __len__(self) -> int:
        return len(self._fills)


class _Subcommands(_SubParsers):
    """A parser's subcommands, whose parsers are made only when the command line names them:
    ``mooring tasks list`` makes 3 parsers of 55.

    Help, usage and error messages read only the subcommands' names and help lines, which are
    all there from the start, so they are what every parser made at once would print; what
    walks the whole tree (the reference's generator) looks each parser up in ``choices``,
    which makes it.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.parsers = _Parsers(self._prog_prefix)
        # argparse reads a subcommand action's choices as names (`in`, iteration)
        self.choices = self.parsers  # type: ignore[assignment]

    def add(self, name: str, help: str, fill: Fill | None) -> None:
        """Add the subcommand ``name``: ``help`` is its line in the help, ``fill`` adds its own
        arguments once its parser is made."""
        self._choices_actions.append(self._ChoicesPseudoAction(name, (), help))
        self.parsers.add(name, fill)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        assert isinstance(values, list)  # nargs=PARSER: the subcommand, then its arguments
        self._name_parser_map[values[0]] = self.parsers[values[0]]  # checked against choices
        super().__call__(parser, namespace, values, option_string)


def _subcommands(
    parser: argparse.ArgumentParser,
    dest: str,
    metavar: str,
    subcommands: Sequence[tuple[str, str, Fill | None]],
    *,
    required: bool = True,
) -> None:
    """Add ``subcommands`` (name, help line, what adds its arguments) to ``parser``."""
    # prog: the usage of a parser with no positional arguments yet, which is its prog (what
    # argparse works out itself, by laying out text for the terminal's width)
    action = parser.add_subparsers(
        dest=dest, metavar=metavar, required=required, prog=parser.prog, action=_Subcommands
    )
    assert isinstance(action, _Subcommands)
    for name, text, fill in subcommands:
        action.add(name, text, fill)


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
    """The argument parser for every ``mooring`` command. A command's parser (and each of its
    actions') is made when the command line names it, or when something looks it up in its
    parent's subcommand action's ``choices``."""
    parser = _Parser(
        prog="mooring", description="Mooring: a desktop MCP host for long-running, durable work."
    )
    _add_global_options(parser, default=None)
    parser.add_argument("--version", action="version", version=f"mooring {__version__}")
    _subcommands(parser, "command", "COMMAND", COMMANDS, required=False)
    return parser


def _servers(servers: argparse.ArgumentParser) -> None:
    """``mooring servers``."""
    _subcommands(
        servers,
        "servers_command",
        "ACTION",
        (
            ("add", "add a stdio or HTTP server", _servers_add),
            (
                "import",
                "import Claude Desktop / Cursor (mcpServers) or VS Code (servers) JSON",
                _servers_import,
            ),
            ("list", "list servers", None),
            ("remove", "remove a server", _servers_remove),
        ),
    )


def _servers_add(add: argparse.ArgumentParser) -> None:
    add.add_argument("name", help="the name Mooring calls the server by (its alias)")
    where = add.add_mutually_exclusive_group(required=True)
    where.add_argument("--command", dest="program", help="program that runs a stdio server")
    where.add_argument("--url", help="Streamable HTTP endpoint")
    add.add_argument(
        "--arg", action="append", help="argument for --command (repeatable; --arg=-x for dashes)"
    )
    add.add_argument(
        "--env",
        action="append",
        metavar="K=V",
        help="environment value; a secret, kept in the keyring (repeatable)",
    )
    add.add_argument(
        "--env-plain",
        action="append",
        metavar="K=V",
        help="environment value that is not secret, stored in Mooring's database (repeatable)",
    )
    add.add_argument(
        "--env-from",
        action="append",
        metavar="K=VAR",
        help="environment value read from Mooring's own variable VAR when the server starts "
        "(only the name is stored; repeatable)",
    )
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


def _servers_import(imp: argparse.ArgumentParser) -> None:
    imp.add_argument(
        "file",
        nargs="?",
        help="the file to import (without one: show what the configurations found here hold)",
    )


def _servers_remove(rm: argparse.ArgumentParser) -> None:
    rm.add_argument("name", help="the server's name")


def _tools(tools: argparse.ArgumentParser) -> None:
    """``mooring tools``."""
    _subcommands(
        tools,
        "tools_command",
        "ACTION",
        (
            ("list", "list tools", _tools_list),
            ("show", "what a tool takes and how to call it", _tools_show),
        ),
    )


def _tools_list(tools_list: argparse.ArgumentParser) -> None:
    tools_list.add_argument(
        "server", nargs="?", help="only this server's tools (default: every server)"
    )


def _tools_show(tools_show: argparse.ArgumentParser) -> None:
    tools_show.add_argument("server", help="the server's name")
    tools_show.add_argument("tool", help="the tool's name")


def _prompts(prompts: argparse.ArgumentParser) -> None:
    """``mooring prompts``."""
    _subcommands(
        prompts,
        "prompts_command",
        "ACTION",
        (
            ("list", "list the prompts servers offer", _prompts_list),
            ("get", "a prompt's messages, with its arguments filled in", _prompts_get),
        ),
    )


def _prompts_list(prompts_list: argparse.ArgumentParser) -> None:
    prompts_list.add_argument(
        "server", nargs="?", help="only this server's (default: every server)"
    )


def _prompts_get(prompts_get: argparse.ArgumentParser) -> None:
    prompts_get.add_argument("server", help="the server's name")
    prompts_get.add_argument("name", help="the prompt's name")
    prompts_get.add_argument(
        "--arg",
        action="append",
        metavar="NAME=VALUE",
        help="an argument of the prompt (repeat for each)",
    )


def _resources(resources: argparse.ArgumentParser) -> None:
    """``mooring resources``."""
    _subcommands(
        resources,
        "resources_command",
        "ACTION",
        (("list", "list the resources and resource templates servers offer", _prompts_list),),
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
    _subcommands(
        accounts,
        "accounts_command",
        "ACTION",
        (
            ("list", "a server's accounts", _server),
            ("add", "add an account to a server", _server_and_new_label),
            ("remove", "remove an account", _server_and_label),
            ("login", "sign in (OAuth)", _server_and_account),
            ("logout", "forget an account's tokens", _server_and_account),
        ),
    )


def _server(action: argparse.ArgumentParser) -> None:
    action.add_argument("server", help="the server's name")


def _server_and_new_label(action: argparse.ArgumentParser) -> None:
    action.add_argument("server", help="the server's name")
    action.add_argument("label", help="a name for the account, e.g. work")


def _server_and_label(action: argparse.ArgumentParser) -> None:
    action.add_argument("server", help="the server's name")
    action.add_argument("label", help="the account's label")


def _server_and_account(action: argparse.ArgumentParser) -> None:
    action.add_argument("server", help="the server's name")
    action.add_argument(
        "--account", metavar="LABEL", help="which account (default: the default one)"
    )


def _rules(rules: argparse.ArgumentParser) -> None:
    """``mooring rules``."""
    _subcommands(
        rules,
        "rules_command",
        "ACTION",
        (
            ("list", "list approval rules", None),
            ("add", "add an approval rule", _rules_add),
            ("remove", "remove an approval rule", _rules_remove),
        ),
    )


def _rules_add(radd: argparse.ArgumentParser) -> None:
    radd.add_argument("server", help="the server's name")
    radd.add_argument("tool", help="tool name or pattern such as '*' or 'list_*'")
    radd.add_argument("decision", choices=["allow", "ask", "deny"], help="what the rule decides")
    radd.add_argument(
        "--scope",
        choices=["once", "conversation", "always"],
        default="always",
        help="how long the rule holds (conversation rules are made in the app)",
    )


def _rules_remove(rrm: argparse.ArgumentParser) -> None:
    rrm.add_argument("id", help="the rule's id (from rules list)")


def _tasks(tasks: argparse.ArgumentParser) -> None:
    """``mooring tasks``."""
    _subcommands(
        tasks,
        "tasks_command",
        "ACTION",
        (
            ("list", "list tasks, newest first", _tasks_list),
            ("show", "show one task", _tasks_show),
            ("watch", "follow tasks to their end", _tasks_watch),
            ("cancel", "ask the server to cancel", _tasks_cancel),
            ("answer", "answer an input request", _tasks_answer),
            ("abandon", "give up on a call that may or may not have run", _task_id),
            ("retry", "send a call with an unknown outcome again", _tasks_retry),
        ),
    )


def _task_id(action: argparse.ArgumentParser) -> None:
    action.add_argument("id", help="local operation id, task id, or a unique prefix")


def _tasks_list(tl: argparse.ArgumentParser) -> None:
    tl.add_argument("--active", action="store_true", help="only unfinished tasks")
    tl.add_argument("--limit", type=int, default=50, help="at most this many")


def _tasks_show(ts: argparse.ArgumentParser) -> None:
    _task_id(ts)
    ts.add_argument(
        "--resource",
        nargs="?",
        const="*",
        metavar="URI",
        help="also read what the result links to (every link, or only URI) from the server",
    )


def _tasks_watch(tw: argparse.ArgumentParser) -> None:
    tw.add_argument("ids", nargs="*", metavar="ID", help="default: every active task")
    tw.add_argument("--timeout", type=float, metavar="S", help="stop following after S seconds")
    tw.add_argument(
        "--notify",
        action="store_true",
        help="notify (privately) when a task ends or needs you; keep following tasks that "
        "wait for an answer",
    )


def _tasks_cancel(tc: argparse.ArgumentParser) -> None:
    _task_id(tc)
    tc.add_argument("--no-wait", action="store_true", help="do not wait for the outcome")
    tc.add_argument("--timeout", type=float, metavar="S", help="stop waiting after S seconds")


def _tasks_answer(ta: argparse.ArgumentParser) -> None:
    _task_id(ta)
    ta.add_argument("key", nargs="?", help="which question (default: the only open one)")
    how = ta.add_mutually_exclusive_group()
    how.add_argument("--value", help="the answer: the form's fields as a JSON object")
    how.add_argument("--decline", action="store_true", help="decline to answer")
    how.add_argument("--cancel", action="store_true", help="cancel the question")


def _tasks_retry(tre: argparse.ArgumentParser) -> None:
    _task_id(tre)
    tre.add_argument(
        "--may-run-twice",
        action="store_true",
        help="retry even though the first call may have run",
    )
    tre.add_argument("--timeout", type=float, metavar="S", help="stop following after S seconds")


def _issues(issues: argparse.ArgumentParser) -> None:
    """``mooring issues``."""
    _subcommands(
        issues,
        "issues_command",
        "ACTION",
        (
            ("list", "open issues (the default)", None),
            ("dismiss", "mark an issue resolved", _issues_dismiss),
        ),
        required=False,
    )


def _issues_dismiss(dismiss: argparse.ArgumentParser) -> None:
    dismiss.add_argument("id", help="the issue's id (from mooring issues)")


def _traces(traces: argparse.ArgumentParser) -> None:
    """``mooring traces``."""
    _subcommands(
        traces,
        "traces_command",
        "ACTION",
        (("export", "write traces as OTLP/JSON lines (for bug reports)", _traces_export),),
    )


def _traces_export(tex: argparse.ArgumentParser) -> None:
    tex.add_argument("--task", metavar="ID", help="only this task's trace")
    tex.add_argument("--since", metavar="DATE", help="only spans that started since DATE")
    tex.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")


def _providers(providers: argparse.ArgumentParser) -> None:
    """``mooring providers``."""
    _subcommands(
        providers,
        "providers_command",
        "ACTION",
        (
            (
                "add",
                "add an OpenAI-compatible or Anthropic endpoint, or a local model file",
                _providers_add,
            ),
            ("edit", "change a provider's name, address, model or key", _providers_edit),
            ("list", "list providers", None),
            ("remove", "remove a provider and its secrets", _provider_name),
            ("default", "use this provider for new conversations", _provider_name),
            ("test", "make one tiny request and say what works", _provider_or_default),
            ("models", "list the models the endpoint offers", _provider_or_default),
        ),
    )


def _providers_add(add: argparse.ArgumentParser) -> None:
    add.add_argument("name", help="the name Mooring calls the provider by")
    add.add_argument("--kind", choices=["openai", "anthropic", "local"], required=True)
    add.add_argument(
        "--base-url",
        metavar="URL",
        help="the endpoint (default: OpenAI's or Anthropic's own; Ollama: "
        "http://127.0.0.1:11434/v1)",
    )
    add.add_argument(
        "--model",
        help="the model id to chat with (required but for --kind local, where it is a label: "
        "default the file's name)",
    )
    add.add_argument(
        "--model-path",
        metavar="FILE",
        help="with --kind local: the GGUF model file Mooring runs itself (no key, no network)",
    )
    _provider_key(add)
    add.add_argument(
        "--header", action="append", metavar="K=V", help="HTTP header; kept in the keyring"
    )


def _provider_key(parser: argparse.ArgumentParser) -> None:
    key = parser.add_mutually_exclusive_group()
    key.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="the API key is in this environment variable (copied to the keyring; with no "
        "keyring, its name is kept and it is read at each use)",
    )
    key.add_argument(
        "--api-key-stdin", action="store_true", help="read the API key from standard input"
    )


def _providers_edit(edit: argparse.ArgumentParser) -> None:
    edit.add_argument("name", help="the provider's name")
    edit.add_argument("--rename", metavar="NEW", help="call it NEW from now on")
    edit.add_argument("--kind", choices=["openai", "anthropic", "local"])
    edit.add_argument("--base-url", metavar="URL", help="the endpoint")
    edit.add_argument("--model", help="the model id to chat with")
    edit.add_argument("--model-path", metavar="FILE", help="a local provider's GGUF model file")
    _provider_key(edit)


def _provider_name(action: argparse.ArgumentParser) -> None:
    action.add_argument("name", help="the provider's name")


def _provider_or_default(action: argparse.ArgumentParser) -> None:
    action.add_argument("name", nargs="?", help="default: the default provider")


def _chat(chat: argparse.ArgumentParser) -> None:
    """``mooring chat``."""
    chat.add_argument("message", nargs="+", help="what to say (words are joined by spaces)")
    chat.add_argument("--conversation", metavar="ID", help="continue this conversation")
    start = chat.add_mutually_exclusive_group()
    start.add_argument("--provider", metavar="NAME", help="the model provider to use")
    start.add_argument(
        "--assistant",
        metavar="NAME",
        help="start a new conversation from this assistant (its system prompt, provider, model "
        "and tools; see mooring assistants)",
    )
    chat.add_argument(
        "--wait",
        action="store_true",
        help="follow any task the reply started to its end, then continue with its result",
    )
    chat.add_argument("--timeout", type=float, metavar="S", help="with --wait: stop after S s")
    chat.add_argument(
        "--attach",
        action="append",
        metavar="SERVER:URI",
        help="send a server's resource with the message (its text, at most 32,000 characters; "
        "repeat for more)",
    )
    chat.add_argument(
        "--file",
        action="append",
        metavar="PATH",
        # core.files.LIMITS_WORDS, written out: the quick listing imports no more than it must
        help="send a file with the message: text files (UTF-8) up to 200 KB, images (PNG, "
        "JPEG, GIF, WebP) up to 5 MB; at most 10 files, 10 MB in all; images only to a model "
        "that reads them (repeat for more)",
    )


def _assistants(assistants: argparse.ArgumentParser) -> None:
    """``mooring assistants``."""
    _subcommands(
        assistants,
        "assistants_command",
        "ACTION",
        (
            ("list", "saved assistants, by name", None),
            ("add", "save an assistant: instructions, provider, model, tools", _assistants_add),
            (
                "edit",
                "change an assistant (conversations already started keep theirs)",
                _assistants_edit,
            ),
            ("remove", "remove an assistant (its conversations keep their settings)", _name),
        ),
    )


def _name(action: argparse.ArgumentParser) -> None:
    action.add_argument("name", help="the assistant's name")


def _assistant_options(parser: argparse.ArgumentParser, *, editing: bool) -> None:
    prompt = parser.add_mutually_exclusive_group()
    prompt.add_argument("--system-prompt", metavar="TEXT", help="its instructions to the model")
    prompt.add_argument(
        "--system-prompt-file", metavar="FILE", help="the same, read from a UTF-8 text file"
    )
    parser.add_argument(
        "--provider",
        metavar="NAME",
        help="the model provider ('' for the default one)"
        if editing
        else "the model provider (default: the default one when a conversation starts)",
    )
    parser.add_argument(
        "--model",
        help="the model to ask ('' for the provider's own)"
        if editing
        else "the model to ask (default: the provider's own)",
    )
    parser.add_argument(
        "--servers",
        metavar="A,B",
        help="offer every tool of these servers ('' and no --tools: no tools at all)",
    )
    parser.add_argument(
        "--tools",
        metavar="SRV:TOOL,…",
        help="offer these tools (with --servers: theirs too); with neither, every tool",
    )
    if editing:
        parser.add_argument("--rename", metavar="NEW", help="call it NEW from now on")
        parser.add_argument("--all-tools", action="store_true", help="offer every tool again")


def _assistants_add(add: argparse.ArgumentParser) -> None:
    _name(add)
    _assistant_options(add, editing=False)


def _assistants_edit(edit: argparse.ArgumentParser) -> None:
    _name(edit)
    _assistant_options(edit, editing=True)


def _conversations(conv: argparse.ArgumentParser) -> None:
    """``mooring conversations``."""
    _subcommands(
        conv,
        "conversations_command",
        "ACTION",
        (
            ("list", "most recently active first", _conversations_list),
            ("show", "messages and tool rounds", _conversation_id),
            ("search", "full-text search", _conversations_search),
            ("rename", "give a new title", _conversations_rename),
            ("delete", "delete (the task ledger stays)", _conversation_id),
            (
                "export",
                "what was said, what ran and why, as Markdown or JSON",
                _conversations_export,
            ),
            ("set", "change a conversation's options", _conversations_set),
            (
                "regenerate",
                "answer your last message (or --message) again; the old reply is kept",
                _conversations_regenerate,
            ),
            (
                "edit",
                "send new words in place of a message of yours; the old ones are kept",
                _conversations_edit,
            ),
            (
                "branch",
                "a new conversation from a message: copies of what is shown up to it",
                _conversations_branch,
            ),
            ("versions", "the places with more than one version", _conversation_id),
            ("show-version", "show another version of a place", _conversations_show_version),
        ),
    )


def _conversations_regenerate(cg: argparse.ArgumentParser) -> None:
    _conversation_id(cg)
    cg.add_argument(
        "--message", metavar="MSG", help="answer the message of yours at or before this one"
    )


def _conversations_edit(ce: argparse.ArgumentParser) -> None:
    _conversation_id(ce)
    ce.add_argument("message", metavar="MSG", help="the message of yours (id or a prefix)")
    ce.add_argument("text", nargs="+", help="its new words (joined by spaces)")


def _conversations_branch(cb: argparse.ArgumentParser) -> None:
    _conversation_id(cb)
    cb.add_argument(
        "--from",
        dest="from_message",
        metavar="MSG",
        required=True,
        help="the last message to copy (id or a prefix; conversations show --json lists them)",
    )


def _conversations_show_version(cv: argparse.ArgumentParser) -> None:
    _conversation_id(cv)
    where = cv.add_mutually_exclusive_group(required=True)
    where.add_argument("--after", metavar="MSG", help="the place after this message")
    where.add_argument("--start", action="store_true", help="the conversation's first message")
    cv.add_argument("number", type=int, help="which version (1: the first written)")


def _conversation_id(action: argparse.ArgumentParser) -> None:
    action.add_argument("id", help="conversation id or a unique prefix")


def _conversations_list(cl: argparse.ArgumentParser) -> None:
    cl.add_argument("--limit", type=int, default=50, help="at most this many")


def _conversations_search(cf: argparse.ArgumentParser) -> None:
    cf.add_argument("text", nargs="+", help="words to find")
    cf.add_argument("--limit", type=int, default=20, help="at most this many")


def _conversations_rename(cr: argparse.ArgumentParser) -> None:
    _conversation_id(cr)
    cr.add_argument("title", nargs="+", help="the new title")


def _conversations_export(ce: argparse.ArgumentParser) -> None:
    _conversation_id(ce)
    ce.add_argument("--format", choices=["md", "json"], default="md", help="Markdown or JSON")
    ce.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")


def _conversations_set(cset: argparse.ArgumentParser) -> None:
    _conversation_id(cset)
    cset.add_argument(
        "--auto-continue",
        choices=["on", "off"],
        help="start a model turn when one of its tasks ends",
    )
    cset.add_argument("--mute", choices=["on", "off"], help="no notifications about it")
    cset.add_argument("--model", help="the model to ask")
    cset.add_argument("--provider", metavar="NAME", help="the model provider to use")
    system = cset.add_mutually_exclusive_group()
    system.add_argument(
        "--system-prompt",
        metavar="TEXT",
        help="its own instructions to the model ('' for none), sent after Mooring's guidance",
    )
    system.add_argument(
        "--system-prompt-file", metavar="FILE", help="the same, read from a UTF-8 text file"
    )
    system.add_argument(
        "--default-system-prompt",
        action="store_true",
        help="follow the default of Settings again (chat.system_prompt)",
    )


def _autostart(autostart: argparse.ArgumentParser) -> None:
    """``mooring autostart``."""
    autostart.add_argument(
        "switch", nargs="?", choices=["on", "off"], help="switch it on or off (default: show)"
    )


def _agent(agent: argparse.ArgumentParser) -> None:
    """``mooring agent``."""
    _subcommands(
        agent,
        "agent_command",
        "ACTION",
        (
            ("run", "run the engine here until it has nothing to do (autostart runs this)", None),
            ("start", "start the engine in the background unless one runs", None),
            ("status", "whether an engine runs, and what it follows", None),
            ("stop", "end the engine (its tasks are followed again when one next starts)", None),
        ),
        required=False,
    )


def _settings(settings: argparse.ArgumentParser) -> None:
    """``mooring settings``."""
    _subcommands(
        settings,
        "settings_command",
        "ACTION",
        (
            ("list", "every setting and its value", None),
            ("set", "change a setting", _settings_set),
        ),
    )


def _settings_set(sset: argparse.ArgumentParser) -> None:
    sset.add_argument("key", help="the setting (see settings list)")
    sset.add_argument("value", help="its new value")


def _models(models: argparse.ArgumentParser) -> None:
    """``mooring models``."""
    _subcommands(
        models,
        "models_command",
        "ACTION",
        (
            ("list", "the recommended local models and the ones here", None),
            ("download", "download a recommended model (resumable, checksum-checked)", _model_key),
            ("add", "make a GGUF file you have one of the local models (linked)", _model_path),
            ("remove", "remove a local model file", _model_name),
        ),
    )


def _model_key(download: argparse.ArgumentParser) -> None:
    download.add_argument("key", help="the model's key (see models list)")


def _model_path(add: argparse.ArgumentParser) -> None:
    add.add_argument("path", help="the .gguf file")


def _model_name(remove: argparse.ArgumentParser) -> None:
    remove.add_argument("name", help="the model's file name (see models list)")


COMMANDS: tuple[tuple[str, str, Fill | None], ...] = (
    ("gui", "open the desktop app (the default with no command)", None),
    ("doctor", "check the database, keyring, notifications and Qt; say what to fix", None),
    ("servers", "manage MCP servers", _servers),
    ("tools", "inspect tools", _tools),
    ("prompts", "the prompts servers offer", _prompts),
    ("resources", "the resources servers offer (chat --attach sends one)", _resources),
    ("call", "call a tool; follow its task to the end", _call),
    ("accounts", "server accounts", _accounts),
    ("rules", "approval rules", _rules),
    ("tasks", "durable tasks", _tasks),
    ("reconcile", "re-read every unfinished task from its server", None),
    ("issues", "problems that need you", _issues),
    ("traces", "task-lifecycle traces", _traces),
    ("providers", "model providers", _providers),
    ("models", "local model files: download, add, remove", _models),
    ("chat", "send a message to a model; stream its reply", _chat),
    ("assistants", "saved presets for new conversations", _assistants),
    ("conversations", "conversations", _conversations),
    ("agent", "the data folder's engine, which owns every server connection", _agent),
    (
        "autostart",
        "start the engine at login to follow tasks and notify (XDG autostart)",
        _autostart,
    ),
    ("settings", "see or change settings", _settings),
)
"""Every command: its name, its line in ``mooring --help``, what adds its options and actions."""
