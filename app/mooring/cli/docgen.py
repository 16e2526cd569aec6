"""The CLI reference (``docs/cli-reference.md``), written from the argparse parser itself.

``python -m mooring.cli.docgen`` (``make docs``) rewrites the file; ``--check`` exits 1 when the
file on disk differs from what the parser says, so the reference cannot drift from the code.
The output depends only on the parser and :mod:`mooring.cli.exit_codes`, never on the terminal
width or the Python version's help formatter.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import sys
from collections.abc import Iterator
from pathlib import Path

from mooring.cli import exit_codes
from mooring.cli.parser import build_parser

GLOBAL_DESTS = frozenset({"help", "data_dir", "json", "log_json"})
"""Options every command accepts: described once, at the top."""

DEFAULT_OUTPUT = Path("docs") / "cli-reference.md"


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """``(name, help, parser)`` of each subcommand of ``parser``, in the order they were added."""
    found: list[tuple[str, str, argparse.ArgumentParser]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                found.append((name, helps.get(name, ""), sub))
    return found


def _walk(
    parser: argparse.ArgumentParser, words: tuple[str, ...], help_text: str
) -> Iterator[tuple[tuple[str, ...], str, argparse.ArgumentParser]]:
    """Every command that takes no further subcommand, with its words and help."""
    subs = _subcommands(parser)
    if words and (not subs or not _subcommand_required(parser)):
        yield words, help_text, parser
    for name, text, sub in subs:
        yield from _walk(sub, (*words, name), text)


def _subcommand_required(parser: argparse.ArgumentParser) -> bool:
    return any(isinstance(a, argparse._SubParsersAction) and a.required for a in parser._actions)


def _own_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [
        a
        for a in parser._actions
        if a.dest not in GLOBAL_DESTS
        and a.help is not argparse.SUPPRESS
        and not isinstance(a, argparse._SubParsersAction)
    ]


def _metavar(action: argparse.Action) -> str:
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        return "|".join(str(c) for c in action.choices)
    if isinstance(action.metavar, str):
        return action.metavar
    return action.dest.upper()


def _takes_value(action: argparse.Action) -> bool:
    return action.nargs != 0


def _term(action: argparse.Action) -> str:
    """How one argument is written: ``NAME``, ``[ID ...]``, ``--scope once|always``."""
    if not action.option_strings:
        meta = _metavar(action)
        if action.nargs == "?":
            return f"[{meta}]"
        if action.nargs == "*":
            return f"[{meta} ...]"
        if action.nargs == "+":
            return f"{meta} [{meta} ...]"
        return meta
    flags = ", ".join(action.option_strings)
    if not _takes_value(action):
        return flags
    meta = _metavar(action)
    if action.nargs == "?":
        return f"{flags} [{meta}]"
    return f"{flags} {meta}"


def _usage(words: tuple[str, ...], parser: argparse.ArgumentParser) -> str:
    groups = {
        id(a): group
        for group in parser._mutually_exclusive_groups
        for a in group._group_actions
        if a.dest not in GLOBAL_DESTS
    }
    parts: list[str] = []
    done: set[int] = set()
    actions = _own_actions(parser)
    for action in [a for a in actions if not a.option_strings] + [
        a for a in actions if a.option_strings
    ]:
        if id(action) in done:
            continue
        group = groups.get(id(action))
        if group is not None:
            members = [a for a in group._group_actions if a.dest not in GLOBAL_DESTS]
            done.update(id(a) for a in members)
            inner = " | ".join(_short(a) for a in members)
            parts.append(f"({inner})" if group.required else f"[{inner}]")
            continue
        done.add(id(action))
        text = _short(action)
        if action.option_strings and not action.required:
            text = f"[{text}]"
        if action.option_strings and action.nargs is None and _repeatable(action):
            text += " …"
        parts.append(text)
    return " ".join(["mooring", *words, *parts])


def _short(action: argparse.Action) -> str:
    if not action.option_strings:
        return _term(action)
    flag = max(action.option_strings, key=len)
    if not _takes_value(action):
        return flag
    return f"{flag} {_metavar(action)}"


def _repeatable(action: argparse.Action) -> bool:
    return isinstance(action, argparse._AppendAction)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _describe(action: argparse.Action) -> str:
    text = action.help or ""
    extras: list[str] = []
    if action.option_strings and action.required:
        extras.append("required")
    if _repeatable(action) and "repeatable" not in text:
        extras.append("repeatable")
    default = action.default
    if (
        action.option_strings
        and _takes_value(action)
        and default is not None
        and default is not argparse.SUPPRESS
        and not isinstance(default, bool)
    ):
        extras.append(f"default: `{default}`")
    if extras:
        text = f"{text} ({'; '.join(extras)})" if text else "; ".join(extras)
    return text


def _exit_codes() -> list[tuple[int, str, str]]:
    """``(code, NAME, docstring)`` from :mod:`mooring.cli.exit_codes`, in source order."""
    tree = ast.parse(inspect.getsource(exit_codes))
    docs: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == exit_codes.ExitCode.__name__:
            body = node.body
            for here, after in zip(body, [*body[1:], None], strict=True):
                if (
                    isinstance(here, ast.Assign)
                    and isinstance(here.targets[0], ast.Name)
                    and isinstance(after, ast.Expr)
                    and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)
                ):
                    text = " ".join(after.value.value.split())
                    docs[here.targets[0].id] = text.replace("``", "`")
    return [(int(code), code.name, docs.get(code.name, "")) for code in exit_codes.ExitCode]


def render() -> str:
    """The whole reference as Markdown."""
    parser = build_parser()
    lines = [
        "# CLI reference",
        "",
        "<!-- Generated from app/mooring/cli/parser.py by `make docs`"
        " (python -m mooring.cli.docgen). Do not edit by hand. -->",
        "",
        "Every command, option and exit code of `mooring`, written from the program's own",
        "argument parser. For what the commands do in practice, see [cli.md](cli.md) and the",
        "guides in [the documentation index](README.md).",
        "",
        "## Options every command accepts",
        "",
        "They may come before or after the command.",
        "",
        "| option | meaning |",
        "| --- | --- |",
    ]
    for action in parser._actions:
        if action.dest in GLOBAL_DESTS or action.dest == "version":
            lines.append(f"| `{_cell(_term(action))}` | {_cell(action.help or '')} |")
    lines += ["", "With no command, `mooring` opens the desktop app (as `mooring gui`).", ""]
    lines += ["## Commands", ""]
    commands = list(_walk(parser, (), ""))
    for words, text, _ in commands:
        anchor = "-".join(("mooring", *words))
        lines.append(f"- [`mooring {' '.join(words)}`](#{anchor}) — {text}")
    lines.append("")
    for words, text, sub in commands:
        lines += [f"### mooring {' '.join(words)}", "", text.rstrip(".") + "." if text else ""]
        lines += ["", "```text", _usage(words, sub), "```", ""]
        actions = _own_actions(sub)
        if actions:
            lines += ["| argument | meaning |", "| --- | --- |"]
            for action in actions:
                lines.append(f"| `{_cell(_term(action))}` | {_cell(_describe(action))} |")
            lines.append("")
    lines += ["## Exit codes", "", "| code | name | meaning |", "| --- | --- | --- |"]
    for code, name, doc in _exit_codes():
        lines.append(f"| {code} | `{name}` | {_cell(doc)} |")
    lines += [
        "| 130 | | interrupted (Ctrl-C); a task that was being followed goes on |",
        "",
    ]
    return "\n".join(line for line in _squeeze(lines))


def _squeeze(lines: list[str]) -> Iterator[str]:
    """Drop repeated blank lines."""
    blank = False
    for line in lines:
        if not line and blank:
            continue
        blank = not line
        yield line


def main(argv: list[str] | None = None) -> int:
    """Write the reference (default ``docs/cli-reference.md``), or ``--check`` it is current."""
    args = argparse.ArgumentParser(prog="python -m mooring.cli.docgen", description=__doc__)
    args.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT)
    options = args.parse_args(argv)
    text = render()
    if options.check:
        current = options.output.read_text(encoding="utf-8") if options.output.exists() else ""
        if current != text:
            sys.stderr.write(f"{options.output} is stale: run `make docs`\n")
            return 1
        return 0
    options.output.write_text(text, encoding="utf-8")
    sys.stdout.write(f"wrote {options.output}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
