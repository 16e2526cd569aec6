"""What a new user hits first: global options, hostile server text, headers, clear errors.

Each test drives the real ``mooring`` CLI as a process against real servers (the demo server
over stdio, small peers, a loopback HTTP endpoint) and real SQLite files.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.e2e.conftest import SAMPLES, Cli, add_demo
from tests.mcp.servers import PEERS

CLEAN = str(SAMPLES / "suppliers_clean.csv")
AMBIGUOUS = str(SAMPLES / "suppliers_ambiguous_id.csv")
RAW = ("\x1b", "\x07", "\x00", "\x08", "\u202e", "\u2067", "\u202c", "\u2069")
"""Characters that must never reach a terminal from a server."""


def no_raw_control(text: str) -> bool:
    return not any(char in text for char in RAW)


# -- global options --------------------------------------------------------------------------


@pytest.mark.parametrize("before", [True, False], ids=["before-command", "after-command"])
def test_global_options_work_before_and_after_the_command(
    cli: Cli, tmp_path: Path, before: bool
) -> None:
    chosen = tmp_path / "chosen"
    options = ["--data-dir", str(chosen), "--json"]
    command = ["servers", "add", "x", "--command", sys.executable]
    done = cli.run(*(options + command if before else command + options))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["name"] == "x"  # --json was honoured
    # The server went to the database named on the command line, not the environment's.
    assert (chosen / "mooring.sqlite3").exists()
    assert not (cli.data_dir / "mooring.sqlite3").exists()
    conn = sqlite3.connect(chosen / "mooring.sqlite3")
    try:
        # (besides the bundled demo server, configured on the folder's first use)
        assert conn.execute("SELECT alias FROM servers WHERE builtin = 0").fetchall() == [("x",)]
    finally:
        conn.close()
    listed = cli.run("--json", "--data-dir", str(chosen), "servers", "list")
    assert [s["name"] for s in json.loads(listed.stdout) if not s["builtin"]] == ["x"]


def test_doctor_honours_data_dir_before_the_command(cli: Cli, tmp_path: Path) -> None:
    chosen = tmp_path / "doctor-here"
    done = cli.run("--data-dir", str(chosen), "--json", "doctor")
    checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
    assert str(chosen) in str(checks["data directory"]["summary"])
    assert (chosen / "mooring.sqlite3").exists()


# -- hostile text ----------------------------------------------------------------------------


def test_hostile_status_question_and_result_are_shown_inert_and_json_keeps_them(
    cli: Cli, tmp_path: Path
) -> None:
    add_demo(cli, tmp_path, conformance_fixtures="1")
    started = cli.run("call", "demo", "hostile_text")
    assert started.returncode == 9, started.stderr  # waits for the (hostile) question
    assert "waiting \\x1b[2J\\x1b]0;pwned\\x07bad\\x00\\x08\\x08 <U+202E>txt.exe" in started.stdout
    assert "question \\x1b[2J" in started.stdout
    assert no_raw_control(started.stdout + started.stderr)

    [record] = cli.json("tasks", "list", "--active")
    assert record["status_message"].startswith("waiting \x1b[2J\x1b]0;pwned\x07bad\x00\x08\x08")
    assert "\u202etxt.exe\u202c \u2067isolated\u2069" in record["inputs"][0]["message"]
    listed = cli.run("tasks", "list")
    assert no_raw_control(listed.stdout)

    answered = cli.run("tasks", "answer", record["id"], "--value", '{"ok": true}')
    assert answered.returncode == 0, answered.stderr
    watched = cli.run("tasks", "watch", record["id"])
    shown = cli.run("tasks", "show", record["id"])
    for done in (watched, shown):
        assert done.returncode == 0, done.stderr
        assert "result \\x1b[2J\\x1b]0;pwned\\x07bad" in done.stdout
        assert "<U+2067>isolated<U+2069> ok=True" in done.stdout
        assert no_raw_control(done.stdout + done.stderr)
    exact = cli.json("tasks", "show", record["id"])
    assert exact["result"]["content"][0]["text"] == (
        "result \x1b[2J\x1b]0;pwned\x07bad\x00\x08\x08 \u202etxt.exe\u202c \u2067isolated\u2069"
        " ok=True"
    )


def test_hostile_tool_names_descriptions_and_errors_are_shown_inert(cli: Cli) -> None:
    added = cli.run(
        "servers",
        "add",
        "h",
        "--command",
        sys.executable,
        f"--arg={PEERS / 'hostile_server.py'}",
    )
    assert added.returncode == 0, added.stderr
    assert cli.run("rules", "add", "h", "*", "allow").returncode == 0
    tools = cli.run("tools", "list", "h")
    assert "h/shout\\x1b[5m" in tools.stdout
    assert "Blinks \\x1b[2J\\x1b[Hbad\\x1b]0;pwned\\x07" in tools.stdout
    assert no_raw_control(tools.stdout + tools.stderr)
    names = [t["name"] for t in cli.json("tools", "list", "h")]
    assert "shout\x1b[5m" in names  # exact for scripts

    refused = cli.run("call", "h", "refuse")
    assert refused.returncode == 4, refused.stderr
    assert "the tool reported an error: " in refused.stdout
    assert "refused \\x1b[2J" in refused.stdout
    assert no_raw_control(refused.stdout + refused.stderr)


# -- headers and secrets ---------------------------------------------------------------------


class Recorder(BaseHTTPRequestHandler):
    """Answers every request 401 and remembers the headers it was sent."""

    seen: list[dict[str, str]]

    def _refuse(self) -> None:
        self.seen.append({k.lower(): v for k, v in self.headers.items()})
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.send_response(401)
        self.send_header("WWW-Authenticate", "Bearer")
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = do_DELETE = _refuse

    def log_message(self, format: str, *args: object) -> None:  # stdlib's name
        pass


@pytest.fixture
def refusing_server() -> Iterator[tuple[str, list[dict[str, str]]]]:
    seen: list[dict[str, str]] = []
    handler = type("Handler", (Recorder,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=30)


def test_an_imported_header_is_kept_and_sent(
    cli: Cli, tmp_path: Path, refusing_server: tuple[str, list[dict[str, str]]]
) -> None:
    url, seen = refusing_server
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps({"mcpServers": {"api": {"url": url, "headers": {"X-Api-Key": "k-123"}}}})
    )
    imported = cli.json("servers", "import", str(config))
    assert imported["added"][0]["headers"] == ["X-Api-Key"]
    cli.run("tools", "list", "api")
    assert any(h.get("x-api-key") == "k-123" for h in seen), seen


def test_a_401_is_one_line_for_the_user_and_the_details_go_to_the_log(
    cli: Cli, refusing_server: tuple[str, list[dict[str, str]]]
) -> None:
    url, _seen = refusing_server
    assert cli.run("servers", "add", "w", "--url", url).returncode == 0
    assert cli.run("rules", "add", "w", "*", "allow").returncode == 0
    done = cli.run("call", "w", "anything")
    assert done.returncode == 5
    assert "Sign-in needed" in done.stdout
    assert "Traceback" not in done.stderr
    assert "OAuth flow error" not in done.stderr
    assert len(done.stderr.splitlines()) <= 1, done.stderr
    assert "OAuth flow error" in (cli.data_dir / "logs" / "mooring.log").read_text()


def test_without_a_keyring_a_header_is_refused_not_lost(cli: Cli, tmp_path: Path) -> None:
    no_keyring: dict[str, str | None] = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    done = cli.run(
        "servers",
        "add",
        "w",
        "--url",
        "http://127.0.0.1:9/mcp",
        "--header",
        "Authorization=Bearer t",
        env=no_keyring,
    )
    assert done.returncode == 1
    assert "No usable keyring" in done.stderr
    assert cli.json("servers", "list") == []
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {"mcpServers": {"api": {"url": "http://127.0.0.1:9/mcp", "headers": {"K": "v"}}}}
        )
    )
    imported = cli.run("servers", "import", str(config), "--json", env=no_keyring)
    assert json.loads(imported.stdout)["skipped"] == [
        {"name": "api", "reason": "its headers are secrets and no usable keyring can keep them"}
    ]


# -- errors a user must understand -----------------------------------------------------------


def test_servers_add_refuses_other_schemes_and_missing_programs(cli: Cli) -> None:
    ftp = cli.run("servers", "add", "f", "--url", "ftp://example.org/mcp")
    assert ftp.returncode == 2
    assert "not an http:// or https:// address" in ftp.stderr
    ghost = cli.run("servers", "add", "g", "--command", "no-such-mcp-server-7f3a")
    assert ghost.returncode == 2
    assert "'no-such-mcp-server-7f3a' was not found on PATH" in ghost.stderr
    assert cli.json("servers", "list") == []


def test_a_data_folder_that_is_a_file_is_named_as_such(cli: Cli, tmp_path: Path) -> None:
    a_file = tmp_path / "not-a-folder"
    a_file.write_text("")
    for command in (["doctor"], ["tasks", "list"], ["settings", "list"]):
        done = cli.run("--data-dir", str(a_file), *command)
        assert done.returncode == 1
        assert f"{a_file} is a file, not a folder" in done.stderr
        assert "File exists" not in done.stderr
        assert "settings file unreadable" not in done.stderr


@pytest.mark.parametrize("where", ["folder", "missing-parent"])
def test_traces_export_to_a_folder_or_nowhere_is_a_clear_error(
    cli: Cli, tmp_path: Path, where: str
) -> None:
    target = tmp_path if where == "folder" else tmp_path / "nope" / "t.jsonl"
    done = cli.run("traces", "export", "-o", str(target))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert ("is a folder" if where == "folder" else "does not exist") in done.stderr


def test_demo_argument_errors_are_readable_tool_errors(cli: Cli, tmp_path: Path) -> None:
    add_demo(cli, tmp_path)
    done = cli.run("call", "demo", "import_suppliers")
    assert done.returncode == 4, (done.stdout, done.stderr)
    assert (
        "completed — the tool reported an error: "
        "Invalid arguments for import_suppliers: path (missing)" in done.stdout
    )
    assert "Handler returned an invalid result" not in done.stdout


@pytest.mark.parametrize(
    ("command", "option"),
    [
        (["call", "demo", "list_suppliers", "--args", "{nope"], "--args"),
        (["call", "demo", "list_suppliers", "--args", "[1]"], "--args"),
        (["tasks", "answer", "ID", "--value", "{nope"], "--value"),
    ],
)
def test_malformed_json_options_name_the_option_and_exit_2(
    cli: Cli, tmp_path: Path, command: list[str], option: str
) -> None:
    add_demo(cli, tmp_path)
    if "ID" in command:
        started = cli.run(
            "call", "demo", "import_suppliers", "--args", f'{{"path": "{AMBIGUOUS}"}}'
        )
        assert started.returncode == 9
        [record] = cli.json("tasks", "list", "--active")
        command = [record["id"] if part == "ID" else part for part in command]
    done = cli.run(*command)
    assert done.returncode == 2, done.stderr
    assert f"mooring: {option} " in done.stderr


def test_an_ambiguous_prefix_lists_the_matching_tasks(cli: Cli, tmp_path: Path) -> None:
    add_demo(cli, tmp_path)
    ids = [
        cli.json("call", "demo", "list_suppliers")["id"],
        cli.json("call", "demo", "list_suppliers")["id"],
    ]
    conn = sqlite3.connect(cli.data_dir / "mooring.sqlite3")
    try:  # two operation ids that share a prefix, as random ids eventually do
        for n, old in enumerate(ids):
            conn.execute("UPDATE task_records SET id = ? WHERE id = ?", (f"9abc{n}" + old[5:], old))
        conn.commit()
    finally:
        conn.close()
    done = cli.run("tasks", "show", "9abc")
    assert done.returncode == 1
    assert "'9abc' is ambiguous" in done.stderr
    assert "No task called" not in done.stderr
    assert "9abc0" in done.stderr
    assert "9abc1" in done.stderr
    assert "demo/list_suppliers" in done.stderr
    assert cli.run("tasks", "show", "9abc1").returncode == 0  # a longer prefix picks one


def test_a_delivered_cancel_exits_0_and_says_the_outcome(cli: Cli, tmp_path: Path) -> None:
    add_demo(cli, tmp_path, conformance_fixtures="1")
    shown = cli.json("call", "demo", "slow_compute", "--detach", "--args", '{"seconds": 600}')
    done = cli.run("tasks", "cancel", shown["id"])
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert done.stdout.splitlines()[-1] == f"{shown['id'][:8]}: cancelled."
    again = cli.run("tasks", "cancel", shown["id"])
    assert again.returncode == 0
    assert again.stdout.startswith(f"{shown['id'][:8]} has already ended (cancelled")
    assert again.stdout.strip().endswith("; nothing to cancel.")


def test_cancelling_a_finished_task_does_not_reprint_its_result(cli: Cli, tmp_path: Path) -> None:
    add_demo(cli, tmp_path)
    shown = cli.json("call", "demo", "import_suppliers", "--args", f'{{"path": "{CLEAN}"}}')
    done = cli.run("tasks", "cancel", shown["id"])
    assert done.returncode == 0
    assert "already ended (completed — Imported suppliers_clean.csv" in done.stdout
    assert "Saved ids:" not in done.stdout
    assert len(done.stdout.splitlines()) == 1


# -- following a call ------------------------------------------------------------------------


def test_without_a_terminal_only_changes_are_printed(cli: Cli, tmp_path: Path) -> None:
    add_demo(cli, tmp_path, checkpoint_delay_ms=150, rows_per_checkpoint=2)
    done = cli.run("call", "demo", "import_suppliers", "--args", f'{{"path": "{CLEAN}"}}')
    assert done.returncode == 0, done.stderr
    working = [line for line in done.stdout.splitlines() if ": working" in line]
    assert len(working) == 1, done.stdout  # not one progress line per poll
    assert ": completed — Imported" in done.stdout


def test_resource_links_show_their_uri_and_tasks_show_reads_them(cli: Cli, tmp_path: Path) -> None:
    add_demo(cli, tmp_path)
    done = cli.run("call", "demo", "import_suppliers", "--args", f'{{"path": "{CLEAN}"}}')
    assert done.returncode == 0, done.stderr
    [link] = [line for line in done.stdout.splitlines() if line.startswith("[resource_link]")]
    uri = link.split()[1]
    assert "://" in uri
    [record] = cli.json("tasks", "list")
    shown = cli.run("tasks", "show", record["id"], "--resource")
    assert shown.returncode == 0, shown.stderr
    assert f"resource   {uri}" in shown.stdout
    read = cli.json("tasks", "show", record["id"], "--resource", uri)
    [report] = read["resources"]
    assert report["error"] is None
    assert report["contents"][0]["text"]
    assert report["contents"][0]["text"] in shown.stdout
    wrong = cli.run("tasks", "show", record["id"], "--resource", "file:///etc/passwd")
    assert wrong.returncode == 2
    assert "links to no resource 'file:///etc/passwd'" in wrong.stderr


def test_ctrl_c_while_following_says_the_task_goes_on_and_how_to_follow_it(
    cli: Cli, tmp_path: Path
) -> None:
    add_demo(cli, tmp_path, conformance_fixtures="1")
    follower = cli.start("call", "demo", "slow_compute", "--args", '{"seconds": 600}')
    assert follower.stdout is not None
    operation = None
    for line in follower.stdout:  # bounded by the child's own life
        if line.startswith("operation "):
            operation = line.split()[1]
        if ": working" in line:
            break
    assert operation
    follower.send_signal(signal.SIGINT)
    _out, err = follower.communicate(timeout=60)
    assert follower.returncode == 130
    assert "the task goes on" in err
    assert f"mooring tasks watch {operation}" in err
    [record] = cli.json("tasks", "list", "--active")
    assert record["state"] == "working"
