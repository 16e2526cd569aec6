"""The documentation stays true: every command it shows runs, every reference it makes exists.

- ``docs/cli-reference.md`` is what ``python -m mooring.cli.docgen`` writes from the parser.
- Every ```` ```console ```` block's ``$ mooring …`` lines run, in order, in a fresh data folder
  (one per page, the bundled demo server configured as on a first run) and exit as documented:
  0, or the code a trailing ``# exit N`` names. ``ID`` stands for the newest task's id.
- ``$ make X`` lines name a target of the Makefile; anything else must be in :data:`EXEMPT`
  with the reason it cannot run here.
- Command blocks are ``console`` blocks: a ``bash``/``sh``/``shell`` block fails the check.
- Every ``mooring …`` in running text names a real command and only options it has.
- Every image, relative link and source path a page mentions exists.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from mooring.cli import docgen
from mooring.cli.parser import build_parser
from mooring.demo_server.config import build_parser as demo_server_parser
from mooring.local_model.__main__ import build_parser as local_model_parser
from mooring.settings.paths import ENV_DATA_DIR, resolve_paths
from tests.helpers import zygote
from tests.helpers.model_endpoints import ModelEndpoint, Text, ToolCall, ToolCalls

REPO = Path(__file__).resolve().parents[2]
PAGES = sorted([REPO / "README.md", *(REPO / "docs").glob("*.md")])

TOOLS = frozenset({"jq"})
"""Other programs a console block may use (run through the shell when installed)."""

EXEMPT: dict[str, str] = {
    "mooring accounts login tickets": "opens a browser: tests/e2e/test_accounts.py signs in "
    "against tests/helpers/authserver.py",
    "source .venv/bin/activate": "changes the reader's own shell",
    'ln -s "$PWD/.venv/bin/mooring" ~/.local/bin/mooring': "changes the reader's home folder",
    "python -m mooring.demo_server": "a stdio server waits for a client: tests/demo_server",
    "python -m mooring.demo_server --http --port 8765": "a server runs until stopped: "
    "tests/demo_server start it on a free port",
    "python -m mooring.demo_server --http --port 0": "a server runs until stopped: "
    "tests/demo_server start it this way",
    "python -m mooring.demo_server --http --port 0 --oauth-issuer http://127.0.0.1:9000": "needs "
    "an authorization server: tests/demo_server/test_oauth*.py",
    "python -m bench --size small": "minutes of benchmarks: tests/bench/test_suite.py runs "
    "the suite at this size",
    "python -m bench --only reconcile_1000,cli_start": "minutes of benchmarks: "
    "tests/bench/test_suite.py runs the suite with --only",
    "python -m bench --out /tmp/results.json": "minutes of benchmarks: tests/bench/test_suite.py "
    "runs the suite with --out",
    "pip install -e '.[local]'": "installs software: `make venv` installs the local extra",
    "mooring models download qwen3-0.6b": "downloads 400 MB: tests/adapters/test_model_files.py "
    "downloads, interrupts and resumes a file served on 127.0.0.1",
    "mooring providers add qwen --kind local --model-path "
    "~/.local/share/Mooring/models/Qwen3-0.6B-Q4_K_M.gguf": "needs "
    "a 400 MB model file: tests/e2e/test_local_provider.py adds the tests' small model this way",
    "mooring providers test qwen": "needs that model: tests/e2e/test_local_provider.py tests the "
    "tests' small model this way",
}
"""Commands shown in a console block that this check does not run, each with its reason."""

PENDING_TARGETS: dict[str, str] = {}
"""Make targets the docs name that another branch is adding (remove once merged)."""

PENDING_FILES: dict[str, str] = {}
"""Pages the docs link to that another branch is adding (remove once merged)."""

OLLAMA = "http://127.0.0.1:11434/v1"
"""The local model address the providers page shows: a scripted endpoint answers in its place."""

PLACEHOLDER = re.compile(r"\bID\b")
EXIT = re.compile(r"#\s*exit\s+(\d+)\s*$")


@dataclass(frozen=True)
class Shown:
    """A command a page shows in a console block."""

    page: Path
    line: int
    text: str
    expect: int


def _fences(page: Path) -> Iterator[tuple[str, int, list[str]]]:
    """``(language, first line number, lines)`` of each fenced block."""
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opened = re.match(r"^(\s*)(```+)\s*([\w-]*)", lines[i])
        if opened:
            fence, language, start = opened.group(2), opened.group(3), i + 1
            body: list[str] = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(fence):
                body.append(lines[i])
                i += 1
            yield language, start, body
        i += 1


FILE_MARK = re.compile(r"<!-- docs-check: file ([\w.-]+) -->")


def _files(page: Path) -> dict[str, str]:
    """Example files a page shows: a fenced block right after ``<!-- docs-check: file NAME -->``."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: dict[str, str] = {}
    for _, start, body in _fences(page):
        mark = FILE_MARK.search(lines[start - 2]) if start >= 2 else None
        if mark:
            found[mark.group(1)] = "\n".join(body) + "\n"
    return found


def _console_commands(page: Path) -> list[Shown]:
    found: list[Shown] = []
    for language, start, body in _fences(page):
        if language != "console":
            continue
        pending = ""
        for offset, raw in enumerate(body):
            line = raw.strip()
            if pending:
                line = pending + " " + line
            elif not line.startswith("$ "):
                continue  # output
            else:
                line = line[2:]
            if line.endswith("\\"):
                pending = line[:-1].rstrip()
                continue
            pending = ""
            code = EXIT.search(line)
            text = EXIT.sub("", line).strip()
            found.append(Shown(page, start + offset + 1, text, int(code.group(1)) if code else 0))
    return found


def _make_targets() -> set[str]:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    return {m.group(1) for m in re.finditer(r"^([a-z][\w-]*):", text, re.MULTILINE)}


def _rel(page: Path) -> str:
    return str(page.relative_to(REPO))


# --- the generated CLI reference ---------------------------------------------------------------


def test_cli_reference_is_what_the_parser_says() -> None:
    on_disk = (REPO / "docs" / "cli-reference.md").read_text(encoding="utf-8")
    assert on_disk == docgen.render(), "docs/cli-reference.md is stale: run `make docs`"


def test_cli_reference_lists_every_command_and_exit_code() -> None:
    text = docgen.render()
    for words in (("servers", "add"), ("tasks", "answer"), ("issues",), ("autostart",)):
        assert f"### mooring {' '.join(words)}\n" in text
    assert "`--scope once|conversation|always`".replace("|", "\\|") in text
    assert "| 70 | `INTERNAL` |" in text


def test_docgen_check_fails_on_a_stale_file(tmp_path: Path) -> None:
    stale = tmp_path / "cli-reference.md"
    stale.write_text(docgen.render().replace("mooring tasks cancel", "mooring tasks kill"))
    assert docgen.main(["--check", "-o", str(stale)]) == 1
    assert docgen.main(["-o", str(stale)]) == 0
    assert docgen.main(["--check", "-o", str(stale)]) == 0


def test_make_docs_regenerates_the_reference() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^docs:.*\n\t.*-m mooring\.cli\.docgen", makefile, re.MULTILINE)


# --- commands shown in the docs ----------------------------------------------------------------


def test_command_blocks_are_console_blocks() -> None:
    wrong = [
        f"{_rel(page)}:{start}"
        for page in PAGES
        for language, start, _ in _fences(page)
        if language in ("bash", "sh", "shell", "zsh")
    ]
    assert not wrong, f"use ```console with `$ ` prompts so the commands are checked: {wrong}"


def test_every_shown_command_is_run_checked_or_exempt_with_a_reason() -> None:
    targets = _make_targets()
    unknown: list[str] = []
    for page in PAGES:
        for shown in _console_commands(page):
            words = shlex.split(shown.text, comments=True)
            if words[:1] in (["mooring"], *([t] for t in TOOLS)) and shown.text not in EXEMPT:
                continue  # run by test_console_blocks_run_as_documented
            if words[:1] == ["make"]:
                target = words[1] if len(words) > 1 else ""
                if target not in targets and target not in PENDING_TARGETS:
                    unknown.append(f"{_rel(page)}:{shown.line}: no make target {target!r}")
                continue
            if shown.text not in EXEMPT:
                unknown.append(f"{_rel(page)}:{shown.line}: {shown.text!r} is not run or exempt")
    assert not unknown, "\n".join(unknown)


def test_make_targets_in_the_text_exist() -> None:
    targets = _make_targets()
    missing = [
        f"{_rel(page)}:{number}: make {target}"
        for page in PAGES
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        for target in re.findall(r"`make ([\w-]+)", line)
        if target not in targets and target not in PENDING_TARGETS
    ]
    assert not missing, "\n".join(missing)


def test_exemptions_are_all_still_shown() -> None:
    shown = {s.text for page in PAGES for s in _console_commands(page)}
    assert not set(EXEMPT) - shown, "drop exemptions for commands no longer shown"


def _pages_with_runs() -> list[Path]:
    return [
        page
        for page in PAGES
        if any(
            s.text.startswith("mooring ") and s.text not in EXEMPT for s in _console_commands(page)
        )
    ]


@pytest.mark.parametrize("page", _pages_with_runs(), ids=lambda p: _rel(p))
def test_console_blocks_run_as_documented(page: Path, tmp_path: Path) -> None:
    """Each page's commands, in order; a page that uses the local model gets a scripted one."""
    with ModelEndpoint.running(models=("llama3.2",)) as model:
        model.script(
            Text("OK"),  # providers test
            ToolCalls([ToolCall("demo__import_suppliers", {"path": "suppliers_clean.csv"})]),
            Text("The import has started; I will tell you when it is done."),
            Text("12 suppliers were saved."),  # chat --wait continues with the task's result
        )
        _run_page(page, tmp_path, model.openai_url)
        if OLLAMA in page.read_text(encoding="utf-8"):
            assert model.pending == 0, "the page's model commands did not all reach the model"


def _run_page(page: Path, tmp_path: Path, model_url: str) -> None:
    data = tmp_path / "data"
    work = tmp_path / "work"
    work.mkdir()
    for name, text in _files(page).items():
        (work / name).write_text(text, encoding="utf-8")
    env = dict(os.environ)
    env["MOORING_DATA_DIR"] = str(data)
    env["PYTHON_KEYRING_BACKEND"] = "tests.helpers.filekeyring.FileKeyring"
    env["MOORING_TEST_KEYRING_FILE"] = str(tmp_path / "keyring.json")
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY"):
        env[var] = "sk-docs-check"  # for the providers examples; never sent anywhere
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO), str(REPO / "app"), *filter(None, [env.get("PYTHONPATH")])]
    )
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    timings: list[str] = []
    for shown in _console_commands(page):
        if shown.text in EXEMPT:
            continue
        if shown.text.split()[0] in TOOLS:
            if shutil.which(shown.text.split()[0]) is not None:
                tool = subprocess.run(
                    ["bash", "-c", shown.text], cwd=work, capture_output=True, text=True, timeout=60
                )
                assert tool.returncode == shown.expect, (shown.text, tool.stderr)
            continue
        if not shown.text.startswith("mooring "):
            continue
        text = shown.text.replace(OLLAMA, model_url)
        if PLACEHOLDER.search(text):
            text = PLACEHOLDER.sub(_newest_task(env, work), text)
        argv = shlex.split(text, comments=True)
        began = time.monotonic()
        done = zygote.run("mooring", argv[1:], env=env, timeout=60, cwd=work, stdin_closed=True)
        timings.append(f"{time.monotonic() - began:5.1f}s {shown.text}")
        assert done.returncode == shown.expect, (
            f"{_rel(page)}:{shown.line}: `{shown.text}` exited {done.returncode}, "
            f"the page says {shown.expect}\n{done.stdout}\n{done.stderr}\n" + "\n".join(timings)
        )


def _newest_task(env: dict[str, str], cwd: Path) -> str:
    done = zygote.run(
        "mooring", ["tasks", "list", "--limit", "1", "--json"], env=env, timeout=60, cwd=cwd
    )
    assert done.returncode == 0, done.stderr
    tasks = json.loads(done.stdout)
    assert tasks, "a page uses ID before any task exists"
    return str(tasks[0]["id"])


def _inline_commands(page: Path) -> Iterator[tuple[int, str]]:
    """``mooring …`` in inline code spans and table cells."""
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        for span in re.findall(r"`(mooring [^`]+)`", line.replace("\\|", "|")):
            yield number, span


def _command_parser(
    parser: argparse.ArgumentParser, words: list[str]
) -> tuple[argparse.ArgumentParser, list[str]]:
    """The deepest subcommand parser ``words`` name, and the words it consumed."""
    used: list[str] = []
    for word in words:
        subs = {
            name: sub
            for action in parser._actions
            if isinstance(action, argparse._SubParsersAction)
            for name, sub in action.choices.items()
        }
        if word not in subs:
            break
        parser = subs[word]
        used.append(word)
    return parser, used


def test_commands_in_the_text_name_real_commands_and_options() -> None:
    top = build_parser()
    problems: list[str] = []
    shown = [(page, n, text) for page in PAGES for n, text in _inline_commands(page)] + [
        (s.page, s.line, s.text)
        for page in PAGES
        for s in _console_commands(page)
        if s.text.startswith("mooring ")
    ]
    for page, number, text in shown:
        words = text.replace("\\|", "|").split()[1:]
        if words[:1] == ["demo-server"]:  # handed to the demo server's own command line
            parser, used = demo_server_parser({}), words[:1]
        elif words[:1] == ["local-model"]:  # the local model runner's own command line
            parser, used = local_model_parser(), words[:1]
        else:
            parser, used = _command_parser(top, words)
        has_subcommands = any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)
        rest = words[len(used) :]
        if has_subcommands and rest and re.fullmatch(r"[a-z]+", rest[0]) and used:
            problems.append(f"{_rel(page)}:{number}: `{text}`: no command {rest[0]!r}")
            continue
        if not used and rest and re.fullmatch(r"[a-z]+", rest[0]):
            problems.append(f"{_rel(page)}:{number}: `{text}`: no command {rest[0]!r}")
            continue
        options = {o for a in parser._actions for o in a.option_strings}
        options |= {o for a in top._actions for o in a.option_strings}
        for token in rest:
            flag = token.lstrip("[(").split("=")[0].rstrip("])…,")
            if not re.fullmatch(r"--?[a-z][a-z-]*", flag):
                continue
            if flag not in options:
                problems.append(f"{_rel(page)}:{number}: `{text}`: no option {flag}")
    assert not problems, "\n".join(problems)


# --- references ---------------------------------------------------------------------------------


def _links(page: Path) -> Iterator[tuple[int, str, bool]]:
    """``(line, target, is_image)`` of every Markdown link or image outside code."""
    in_code = False
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        plain = re.sub(r"`[^`]*`", "", line)
        for bang, target in re.findall(r"(!?)\[[^\]]*\]\(([^)\s]+)\)", plain):
            yield number, target, bool(bang)
        for target in re.findall(r'<img[^>]+src="([^"]+)"', plain):
            yield number, target, True


def test_every_image_and_relative_link_exists() -> None:
    missing: list[str] = []
    for page in PAGES:
        for number, target, _ in _links(page):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            path = (page.parent / target.split("#")[0]).resolve()
            rel = str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)
            if not path.exists() and rel not in PENDING_FILES:
                missing.append(f"{_rel(page)}:{number}: {target}")
    assert not missing, "\n".join(missing)


def test_docs_images_are_the_ones_make_screenshots_regenerates() -> None:
    script = (REPO / "packaging" / "screenshots.sh").read_text(encoding="utf-8")
    copied = set(re.findall(r"\b(\d\d-[a-z-]+)\b", script.split("docs/images", 1)[-1]))
    images = {p.stem for p in (REPO / "docs" / "images").glob("*.png")}
    used = {
        Path(target).stem
        for page in PAGES
        for _, target, is_image in _links(page)
        if is_image and "images/" in target
    }
    assert images, "docs/images/ holds the screenshots the docs show"
    assert images <= copied, f"not regenerated by make screenshots: {images - copied}"
    assert used <= images
    assert images <= used, f"screenshots no page shows: {images - used}"


SOURCE_PATH = re.compile(
    r"`((?:app/|tests/|bench/|packaging/|resources/)?[\w/.-]+\.(?:py|sh|toml))"
)


def test_source_files_the_docs_name_exist() -> None:
    """A page that names a module keeps naming one that exists (architecture kept true)."""
    roots = [REPO, REPO / "app" / "mooring", REPO / "app"]
    missing: list[str] = []
    for page in PAGES:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for name in SOURCE_PATH.findall(line):
                if "/" not in name:
                    continue
                if not any((root / name).exists() for root in roots):
                    missing.append(f"{_rel(page)}:{number}: {name}")
    assert not missing, "\n".join(missing)


DEFAULT_FOLDER = re.compile(r"~/\.(?:local/share|local/state|config)/mooring\b[\w./-]*", re.I)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the docs give Linux's folders")
def test_the_default_folders_the_docs_name_are_the_ones_mooring_uses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``~/.local/share/Mooring`` and the others are spelled as platformdirs makes them."""
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", ENV_DATA_DIR):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    paths = resolve_paths()
    folders = [
        "~/" + str(folder.relative_to(tmp_path))
        for folder in (paths.data_dir, paths.config_dir, paths.log_dir)
    ]
    wrong: list[str] = []
    for page in PAGES:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for named in (n.rstrip(".") for n in DEFAULT_FOLDER.findall(line)):
                if not any(named == f or named.startswith(f + "/") for f in folders):
                    wrong.append(f"{_rel(page)}:{number}: {named} (Mooring uses {folders})")
    assert not wrong, "\n".join(wrong)


NAMED = re.compile(r"`([\w/]+\.py): (\w+)")
CAMEL = re.compile(r"`([A-Z][a-z]+(?:[A-Z][a-z]*)+)`")
NOT_OURS = frozenset(
    {
        "CallToolResult",
        "DetailedTask",
        "ExportTraceServiceRequest",
        "InputRequiredResult",
        "MarkdownNoHTML",
        "OAuthClientProvider",
        "QAbstractListModel",
        "QTextDocument",
        "ReadStream",
        "TokenStorage",
        "TransportStreams",
    }
)
"""Names the docs mention that belong to the MCP spec, the SDK, Qt or OpenTelemetry."""


def _defines(source: str, name: str) -> bool:
    return bool(
        re.search(rf"^\s*(?:async def|def|class) {name}\b|^\s*{name}\b\s*[:=]", source, re.M)
    )


def test_names_the_docs_give_for_code_are_defined_there() -> None:
    """`path.py: name` is defined in that file; a `CamelCase` name is one of Mooring's own."""
    sources = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "app").rglob("*.py"))
    wrong: list[str] = []
    for page in PAGES:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for path, name in NAMED.findall(line):
                file = REPO / "app" / "mooring" / path
                if not file.exists() or not _defines(file.read_text(encoding="utf-8"), name):
                    wrong.append(f"{_rel(page)}:{number}: {path}: {name}")
            for name in CAMEL.findall(line):
                if name not in NOT_OURS and not _defines(sources, name):
                    wrong.append(f"{_rel(page)}:{number}: {name}")
    assert not wrong, "\n".join(wrong)
