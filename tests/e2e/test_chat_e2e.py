"""`mooring chat` end to end: real processes, the real provider SDKs, a scripted model.

Every `mooring` command is its own process; the demo server runs as its child over stdio; the
model is a scripted OpenAI / Anthropic streaming endpoint in this test process, so the official
`openai` and `anthropic` SDKs are what talk to it. What the model was told is read from the
requests the endpoint recorded.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mooring.core.tool_names import ToolKey, assign_names
from tests.e2e.conftest import Cli, DemoServer, add_demo
from tests.helpers.model_endpoints import (
    Broken,
    HttpError,
    ModelEndpoint,
    RecordedRequest,
    StreamError,
    Text,
    ToolCall,
    ToolCalls,
)

CANARY_KEY = "sk-canary-CHAT-5d1e9a37"
QUESTION = "Which column is the supplier identifier?"


@dataclass
class Chat:
    """One data folder with a demo server and a provider on the scripted endpoint."""

    cli: Cli
    endpoint: ModelEndpoint
    demo: DemoServer
    tmp: Path

    def send(self, *args: str, expect: int = 0) -> dict[str, Any]:
        """``mooring chat --json ARGS``: its one object; never a traceback."""
        done = self.cli.run("chat", "--json", *args)
        assert "Traceback" not in done.stderr, done.stderr
        assert done.returncode == expect, (done.returncode, done.stdout, done.stderr)
        reply: dict[str, Any] = json.loads(done.stdout)
        return reply

    def shown(self, conversation_id: str) -> dict[str, Any]:
        """``conversations show --json``: the stored conversation."""
        shown: dict[str, Any] = self.cli.json("conversations", "show", conversation_id)
        return shown


def add_provider(cli: Cli, endpoint: ModelEndpoint, kind: str, *extra: str, **env: str) -> None:
    url = endpoint.openai_url if kind == "openai" else endpoint.anthropic_url
    done = cli.run(
        "providers", "add", kind, "--kind", kind, "--base-url", url, "--model", "model-small",
        *extra, env=dict(env),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


@pytest.fixture(params=["openai"])
def kind(request: pytest.FixtureRequest) -> str:
    """The wire a test speaks (OpenAI unless a test asks for both)."""
    value: str = request.param
    return value


@pytest.fixture
def chat(cli: Cli, tmp_path: Path, model_endpoint: ModelEndpoint, kind: str) -> Chat:
    demo = add_demo(cli, tmp_path)
    add_provider(cli, model_endpoint, kind)
    return Chat(cli, model_endpoint, demo, tmp_path)


both_wires = pytest.mark.parametrize("kind", ["openai", "anthropic"], indirect=True)


def said(request: RecordedRequest) -> list[dict[str, Any]]:
    """The conversation a request carried, without the system prompt."""
    messages: list[dict[str, Any]] = request.body["messages"]
    return [m for m in messages if m["role"] != "system"]


def text_of(message: dict[str, Any]) -> str:
    """A message's text on either wire (string content, or text / tool_result blocks)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or []:
        if block.get("type") == "text":
            parts.append(block["text"])
        elif block.get("type") == "tool_result":
            inner = block.get("content")
            parts.append(inner if isinstance(inner, str) else "".join(b["text"] for b in inner))
    return "\n".join(parts)


def tool_result(request: RecordedRequest) -> str:
    """The text of the last tool result a request gave the model (either wire)."""
    for message in reversed(said(request)):
        if message["role"] == "tool":
            return text_of(message)
        content = message.get("content")
        if isinstance(content, list) and any(b.get("type") == "tool_result" for b in content):
            return text_of(message)
    raise AssertionError("the request carried no tool result")


def offered(request: RecordedRequest) -> list[str]:
    """The tool names a request offered (either wire)."""
    return [(t.get("function") or t)["name"] for t in request.body.get("tools", [])]


# -- replies and tool rounds ---------------------------------------------------------------------


@both_wires
def test_a_plain_reply_is_printed_and_stored(chat: Chat, kind: str) -> None:
    chat.endpoint.script(Text("Hello! I can import supplier files for you."))
    reply = chat.send("hi there")
    assert reply["reply"] == "Hello! I can import supplier files for you."
    assert reply["error"] is None
    assert reply["tool_rounds"] == []
    assert [text_of(m) for m in said(chat.endpoint.last)] == ["hi there"]
    assert "demo__import_suppliers" in offered(chat.endpoint.last)
    stored = chat.shown(reply["conversation_id"])
    assert [(m["role"], m["content"], m["status"]) for m in stored["messages"]] == [
        ("user", "hi there", "complete"),
        ("assistant", "Hello! I can import supplier files for you.", "complete"),
    ]
    assert stored["conversation"]["title"] == "hi there"


@both_wires
def test_a_tool_with_an_immediate_result_goes_back_to_the_model(chat: Chat, kind: str) -> None:
    chat.endpoint.script(
        ToolCalls([ToolCall("demo__list_suppliers", {"limit": 3})]),
        Text("You have no suppliers yet."),
    )
    reply = chat.send("who are my suppliers?")
    assert reply["reply"] == "You have no suppliers yet."
    rounds = [(r["server"], r["tool"], r["approval"], r["task_id"], r["state"])
              for r in reply["tool_rounds"]]  # fmt: skip
    assert rounds == [("demo", "list_suppliers", "auto_allowed", None, "completed")]
    _first, second = chat.endpoint.model_requests
    assert tool_result(second) == "0 of 0 suppliers"
    assert chat.demo.count("tools/call", "list_suppliers") == 1


@both_wires
def test_a_task_is_reported_started_and_wait_continues_with_its_result(
    chat: Chat, kind: str
) -> None:
    chat.endpoint.script(
        ToolCalls([ToolCall("demo__import_suppliers", {"path": "suppliers_clean.csv"})]),
        Text("The import is running."),
        Text("All 12 suppliers were imported."),
    )
    reply = chat.send("--wait", "import suppliers_clean.csv")
    assert reply["error"] is None
    assert reply["reply"] == "All 12 suppliers were imported."
    [made] = reply["tool_rounds"]
    assert (made["tool"], made["state"]) == ("import_suppliers", "completed")
    task_id = made["task_id"]
    assert task_id

    _, told_started, follow_up = chat.endpoint.model_requests
    started = tool_result(told_started)
    assert "started as a background task" in started
    assert task_id in started
    assert "state: working" in started
    assert "12 suppliers saved" not in started  # the turn did not wait for the result
    last = said(follow_up)[-1]
    assert last["role"] == "user"
    assert "Background task result" in text_of(last)
    assert f"{task_id} (server 'demo', tool 'import_suppliers') ended: completed" in text_of(last)
    assert "12 suppliers saved" in text_of(last)
    assert chat.demo.count("tools/call", "import_suppliers") == 1  # never re-sent


def test_a_question_from_a_task_waits_for_the_user_never_the_model(chat: Chat) -> None:
    chat.endpoint.script(
        ToolCalls([ToolCall("demo__import_suppliers", {"path": "suppliers_ambiguous_id.csv"})]),
        Text("The import is running."),
    )
    waited = chat.send("--wait", "import suppliers_ambiguous_id.csv", expect=9)
    [made] = waited["tool_rounds"]
    assert made["state"] == "input_required"
    assert waited["reply"] == "The import is running."
    assert len(chat.endpoint.model_requests) == 2  # the turn ended; nobody asked the model
    assert chat.endpoint.pending == 0

    [task] = chat.cli.json("tasks", "list")
    [question] = task["inputs"]
    assert QUESTION in question["message"]
    answered = chat.cli.run(
        "tasks", "answer", task["id"], question["key"], "--value", '{"column": "vendor_code"}'
    )
    assert answered.returncode == 0, answered.stderr
    watched = chat.cli.json("tasks", "watch", task["id"])
    assert watched["state"] == "completed"

    chat.endpoint.script(Text("8 suppliers were imported, keyed by vendor_code."))
    went_on = chat.send("--conversation", waited["conversation_id"], "how did it go?")
    assert went_on["reply"] == "8 suppliers were imported, keyed by vendor_code."
    last = text_of(said(chat.endpoint.last)[-1])
    assert "ended: completed" in last
    assert "8 suppliers saved" in last
    assert last.endswith("how did it go?")
    for request in chat.endpoint.model_requests:
        assert QUESTION not in json.dumps(request.body), "the model was shown the question"
    assert chat.demo.count("tasks/update") == 1  # the user's answer, once


def test_a_denied_tool_is_a_refusal_the_model_can_explain(
    cli: Cli, tmp_path: Path, model_endpoint: ModelEndpoint
) -> None:
    demo = add_demo(cli, tmp_path, allow=False)
    assert cli.run("rules", "add", "demo", "delete_supplier", "deny").returncode == 0
    add_provider(cli, model_endpoint, "openai")
    model_endpoint.script(
        ToolCalls([ToolCall("demo__delete_supplier", {"supplier_id": "SUP-0001"})]),
        Text("I am not allowed to delete suppliers here."),
    )
    chat = Chat(cli, model_endpoint, demo, tmp_path)
    reply = chat.send("delete SUP-0001")
    assert reply["reply"] == "I am not allowed to delete suppliers here."
    [made] = reply["tool_rounds"]
    assert (made["tool"], made["approval"], made["task_id"]) == (
        "delete_supplier",
        "auto_denied",
        None,
    )
    refusal = tool_result(model_endpoint.last)
    assert "not run" in refusal.lower() or "denied" in refusal.lower(), refusal
    assert demo.count("tools/call") == 0  # nothing was sent to the server


def test_two_servers_with_the_same_tool_names_are_both_usable(
    cli: Cli, tmp_path: Path, model_endpoint: ModelEndpoint
) -> None:
    # "ops.eu" and "ops_eu" clean to the same prefix: every tool name collides.
    eu = add_demo(cli, tmp_path, name="ops.eu")
    other = add_demo(cli, tmp_path, name="ops_eu")
    add_provider(cli, model_endpoint, "openai")
    servers = {s["name"]: s["id"] for s in cli.json("servers", "list")}
    tools = ("list_suppliers", "import_suppliers", "export_suppliers", "delete_supplier",
             "list_sample_files")  # fmt: skip
    names = assign_names(
        (alias, ToolKey(servers[alias], tool)) for alias in servers for tool in tools
    )
    by_key = {(key.server_id, key.tool): name for name, key in names.items()}
    eu_list = by_key[(servers["ops.eu"], "list_suppliers")]
    other_list = by_key[(servers["ops_eu"], "list_suppliers")]
    assert eu_list != other_list

    model_endpoint.script(
        ToolCalls([ToolCall(eu_list, {"limit": 1}), ToolCall(other_list, {"limit": 2})]),
        Text("Both are empty."),
    )
    chat = Chat(cli, model_endpoint, eu, tmp_path)
    reply = chat.send("list suppliers on both")
    assert sorted(offered(model_endpoint.model_requests[0])) == sorted(names)
    assert [(r["server"], r["tool"], r["state"]) for r in reply["tool_rounds"]] == [
        ("ops.eu", "list_suppliers", "completed"),
        ("ops_eu", "list_suppliers", "completed"),
    ]
    assert eu.count("tools/call", "list_suppliers") == 1
    assert other.count("tools/call", "list_suppliers") == 1
    calls = {r["tool"]: r for r in eu.requests() + other.requests() if r["method"] == "tools/call"}
    assert set(calls) == {"list_suppliers"}


# -- provider failures ---------------------------------------------------------------------------


FAILURES: dict[str, list[tuple[Any, str, str]]] = {
    # (scripted reply, stored error kind, words in the error)
    "openai": [
        (HttpError(401, "Incorrect API key provided"), "auth", "refused"),
        (
            HttpError(429, "Slow down", headers={"retry-after": "0"}),
            "rate_limited",
            "rate",
        ),
        (HttpError(400, "gemma:2b does not support tools"), "no_tool_support", "cannot call tools"),
        (
            HttpError(
                400,
                "This model's maximum context length is 8192 tokens",
                code="context_length_exceeded",
            ),
            "context_too_long",
            "context",
        ),
        (Broken("The import went wel"), "stream_broken", "stopped halfway"),
    ],
    "anthropic": [
        (HttpError(403, "Your key cannot use this model"), "auth", ""),
        (StreamError("Half a rep", message="Overloaded"), "stream_broken", "stopped halfway"),
        (Broken("The import went wel"), "stream_broken", "stopped halfway"),
    ],
}


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_each_provider_failure_is_a_clear_error_stored_in_the_conversation(
    cli: Cli, tmp_path: Path, model_endpoint: ModelEndpoint, kind: str
) -> None:
    # No MCP server: what is checked is what the model endpoint answers (and it is faster).
    add_provider(cli, model_endpoint, kind)
    chat = Chat(cli, model_endpoint, DemoServer("none", tmp_path / "x", tmp_path / "y"), tmp_path)
    with ModelEndpoint.running() as gone:
        url = gone.openai_url if kind == "openai" else gone.anthropic_url
    done = chat.cli.run(
        "providers", "add", "gone", "--kind", kind, "--base-url", url, "--model", "m"
    )
    assert done.returncode == 0
    conversation: str | None = None
    seen: list[tuple[str, dict[str, Any], Any]] = []
    for reply, error_kind, words in FAILURES[kind]:
        asked = len(chat.endpoint.model_requests)
        tries = 2 if error_kind == "rate_limited" else 1  # retry-after honoured once, then said
        chat.endpoint.script(*[reply] * tries)
        where = ["--conversation", conversation] if conversation else []
        failed = chat.send(*where, f"try {error_kind}", expect=1)
        conversation = failed["conversation_id"]
        assert failed["error"], (error_kind, failed)
        assert words.lower() in failed["error"].lower(), (error_kind, failed["error"])
        assert len(chat.endpoint.model_requests) == asked + tries, error_kind
        seen.append((error_kind, failed, reply))
    assert conversation is not None
    unreachable = chat.send(
        "--conversation", conversation, "--provider", "gone", "hello?", expect=1
    )
    assert "reach" in unreachable["error"].lower()
    seen.append(("unreachable", unreachable, None))

    stored = [m for m in chat.shown(conversation)["messages"] if m["role"] == "assistant"]
    assert len(stored) == len(seen)
    for message, (error_kind, failed, reply) in zip(stored, seen, strict=True):
        assert (message["status"], message["error_kind"]) == ("error", error_kind), message
        assert message["error"] == failed["error"]
        if isinstance(reply, Broken | StreamError):  # the partial reply is kept with it
            assert message["content"] == reply.text
            assert failed["reply"] == reply.text


# -- secrets, search and export ----------------------------------------------------------------


def test_a_canary_key_never_reaches_sqlite_logs_or_traces(
    cli: Cli, tmp_path: Path, model_endpoint: ModelEndpoint
) -> None:
    demo = add_demo(cli, tmp_path)
    model_endpoint.api_key = CANARY_KEY
    add_provider(cli, model_endpoint, "openai", "--api-key-env", "CANARY", CANARY=CANARY_KEY)
    model_endpoint.script(
        ToolCalls([ToolCall("demo__list_suppliers", {})]),
        ToolCalls([ToolCall("demo__import_suppliers", {"path": "suppliers_clean.csv"})]),
        Text("Imported."),
        Text("Done: 12 suppliers."),
        # an endpoint that echoes the key in an error must not get it stored or logged
        HttpError(400, f"invalid request for key {CANARY_KEY}"),
    )
    chat = Chat(cli, model_endpoint, demo, tmp_path)
    done = cli.run("chat", "--wait", "--log-json", "import the clean file")
    assert done.returncode == 0, done.stdout + done.stderr
    conversation = chat.cli.json("conversations", "list")[0]["id"]
    failed = cli.run("chat", "--conversation", conversation, "--log-json", "again")
    assert failed.returncode == 1
    exported = cli.run("traces", "export", "-o", str(cli.data_dir / "traces-export.jsonl"))
    assert exported.returncode == 0, exported.stderr

    assert all(r.headers["authorization"] == f"Bearer {CANARY_KEY}"
               for r in model_endpoint.model_requests)  # fmt: skip
    assert demo.count("tools/call") == 2
    files = {p: p.read_bytes() for p in cli.data_dir.rglob("*") if p.is_file()}
    assert any(p.name.startswith("mooring.sqlite3") for p in files)
    assert any("logs" in p.parts for p in files)
    traces = b"".join(data for p, data in files.items() if "traces" in p.parts)
    assert b"mooring.chat.model_call" in traces  # the chat's spans were written, and scanned
    assert b"tools/call" in traces or b"import_suppliers" in traces
    for path, data in files.items():
        assert CANARY_KEY.encode() not in data, f"the key leaked into {path}"
    for output in (done, failed, exported):
        assert CANARY_KEY not in output.stdout + output.stderr


def test_search_and_export_round_trip_through_the_cli(chat: Chat, tmp_path: Path) -> None:
    chat.endpoint.script(
        ToolCalls([ToolCall("demo__list_suppliers", {"query": "Zürich"})]),
        Text("No supplier in Zürich yet."),
        Text("Timber prices rose."),
    )
    first = chat.send("suppliers in Zürich?")
    second = chat.send("what about timber?")
    found = chat.cli.json("conversations", "search", "zurich")
    assert [c["conversation_id"] for c in found] == [first["conversation_id"]]
    found = chat.cli.json("conversations", "search", "TIMB")
    assert [c["conversation_id"] for c in found] == [second["conversation_id"]]
    renamed = chat.cli.run("conversations", "rename", second["conversation_id"], "Wood notes")
    assert renamed.returncode == 0, renamed.stderr
    assert [c["conversation_id"] for c in chat.cli.json("conversations", "search", "wood")] == [
        second["conversation_id"]
    ]

    as_json, as_md = tmp_path / "out.json", tmp_path / "out.md"
    for fmt, path in (("json", as_json), ("md", as_md)):
        done = chat.cli.run(
            "conversations", "export", first["conversation_id"], "--format", fmt, "-o", str(path)
        )
        assert done.returncode == 0, done.stderr
    record = json.loads(as_json.read_text())
    assert record == chat.shown(first["conversation_id"]) | {"exported_at": record["exported_at"]}
    assert [m["role"] for m in record["messages"]] == ["user", "assistant", "tool", "assistant"]
    [made] = record["tool_rounds"]
    assert (made["server"], made["tool"], made["approval"]) == ("demo", "list_suppliers",
                                                                "auto_allowed")  # fmt: skip
    assert made["arguments"] == {"query": "Zürich"}
    markdown = as_md.read_text()
    assert "suppliers in Zürich?" in markdown
    assert "No supplier in Zürich yet." in markdown
    assert "| `demo` | `list_suppliers` | `auto_allowed` |" in markdown  # names as code


def system_of(request: RecordedRequest) -> str:
    """The system prompt a request carried (either wire)."""
    body = request.body
    if "system" in body:  # Anthropic: a string or text blocks
        system = body["system"]
        return system if isinstance(system, str) else "".join(b["text"] for b in system)
    return "".join(text_of(m) for m in body["messages"] if m["role"] == "system")


def test_a_system_prompt_of_settings_or_of_the_conversation_follows_mooring_guidance(
    chat: Chat, tmp_path: Path
) -> None:
    guidance = "Never answer a task's questions yourself"
    chat.endpoint.script(*[Text("D'accord.") for _ in range(5)])
    assert (
        chat.cli.run("settings", "set", "chat.system_prompt", "Answer in French.").returncode == 0
    )

    first = chat.send("hi")
    conversation_id = first["conversation_id"]
    system = system_of(chat.endpoint.last)
    assert guidance in system
    assert system.index(guidance) < system.index("Answer in French.")

    # Its own instructions replace the default (Mooring's guidance stays first).
    prompt_file = tmp_path / "prompt.txt"
    prompt_file.write_text("Be brief.\nUse bullet points.", encoding="utf-8")
    shown = chat.cli.json(
        "conversations", "set", conversation_id, "--system-prompt-file", str(prompt_file)
    )
    assert shown["system_prompt"] == "Be brief.\nUse bullet points."
    chat.send("again", "--conversation", conversation_id)
    system = system_of(chat.endpoint.last)
    assert guidance in system
    assert "Be brief.\nUse bullet points." in system
    assert "French" not in system

    # None at all, then the default again.
    chat.cli.json("conversations", "set", conversation_id, "--system-prompt", "")
    chat.send("once more", "--conversation", conversation_id)
    assert "instructions" not in system_of(chat.endpoint.last).split(guidance)[1]
    assert "Be brief" not in system_of(chat.endpoint.last)
    chat.cli.json("conversations", "set", conversation_id, "--default-system-prompt")
    chat.send("last", "--conversation", conversation_id)
    assert "Answer in French." in system_of(chat.endpoint.last)

    # Its own prompt is kept with the conversation and exported with it.
    chat.cli.json("conversations", "set", conversation_id, "--system-prompt", "Be <b>brief</b>.")
    exported = chat.cli.run("conversations", "export", conversation_id, "--format", "md")
    assert "## System prompt" in exported.stdout
    assert "Be <b>brief</b>." in exported.stdout

    refused = chat.cli.run(
        "conversations", "set", conversation_id, "--system-prompt-file", str(tmp_path / "none")
    )
    assert refused.returncode == 2  # a usage error: nothing changed
    assert "cannot be read" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_regenerate_and_edit_keep_every_version_and_show_any_of_them(chat: Chat) -> None:
    chat.endpoint.script(Text("Bonjour."), Text("Hello."), Text("Guten Tag."))
    first = chat.send("Greet me")
    conversation_id = first["conversation_id"]

    again = chat.cli.run("conversations", "regenerate", conversation_id)
    assert again.returncode == 0, again.stderr
    assert [text_of(m) for m in said(chat.endpoint.last)] == ["Greet me"]  # no old reply
    shown = chat.shown(conversation_id)["messages"]
    assert [m["content"] for m in shown] == ["Greet me", "Hello."]
    [point] = chat.cli.json("conversations", "versions", conversation_id)
    assert (point["versions"], point["shown"]) == (2, 2)

    back = chat.cli.run(
        "conversations", "show-version", conversation_id,
        "--after", point["after_message_id"][:8], "1",
    )  # fmt: skip
    assert back.returncode == 0, back.stderr
    assert [m["content"] for m in chat.shown(conversation_id)["messages"]] == [
        "Greet me",
        "Bonjour.",
    ]

    mine = shown[0]["id"]
    edited = chat.cli.run(
        "conversations", "edit", conversation_id, mine[:10], "Greet", "me", "in", "German"
    )
    assert edited.returncode == 0, edited.stderr
    assert [m["content"] for m in chat.shown(conversation_id)["messages"]] == [
        "Greet me in German",
        "Guten Tag.",
    ]
    points = chat.cli.json("conversations", "versions", conversation_id)
    assert [(p["after_message_id"], p["versions"], p["shown"]) for p in points] == [(None, 2, 2)]
    assert (
        chat.cli.run("conversations", "show-version", conversation_id, "--start", "1").returncode
        == 0
    )
    assert [m["content"] for m in chat.shown(conversation_id)["messages"]] == [
        "Greet me",
        "Bonjour.",
    ]


def test_branch_copies_a_conversation_up_to_a_message_and_runs_no_tool_again(chat: Chat) -> None:
    chat.endpoint.script(
        ToolCalls([ToolCall("demo__list_suppliers", {"limit": 3})]),
        Text("You have no suppliers yet."),
        Text("Bonjour."),
        Text("Hello."),
        Text("Branch reply."),
    )
    first = chat.send("who are my suppliers?")
    conversation_id = first["conversation_id"]
    chat.send("--conversation", conversation_id, "greet me")
    assert chat.cli.run("conversations", "regenerate", conversation_id).returncode == 0
    original = chat.shown(conversation_id)
    reply = original["messages"][3]
    assert reply["content"] == "You have no suppliers yet."
    # The first greeting sits only in a hidden version now: search does not find it.
    assert chat.cli.json("conversations", "search", "bonjour") == []

    made = chat.cli.json("conversations", "branch", conversation_id[:8], "--from", reply["id"][:10])
    assert made["title"] == "who are my suppliers? (branch)"
    assert made["branched_from"] == {"conversation_id": conversation_id, "message_id": reply["id"]}
    assert made["messages_copied"] == 4
    branch = chat.shown(made["id"])
    assert [(m["role"], m["content"]) for m in branch["messages"][1:]] == [
        (m["role"], m["content"]) for m in original["messages"][:4]
    ]
    assert branch["messages"][0]["role"] == "system"
    assert conversation_id in branch["messages"][0]["content"]
    assert [r["tool"] for r in branch["tool_rounds"]] == ["list_suppliers"]  # the same round
    again = chat.shown(conversation_id)
    assert again == original | {"exported_at": again["exported_at"]}  # untouched
    listed = chat.cli.run("conversations", "branch", conversation_id, "--from", reply["id"][:10])
    assert listed.returncode == 0, listed.stderr
    assert "4 messages copied" in listed.stdout

    went_on = chat.send("--conversation", made["id"], "and now?")
    assert went_on["reply"] == "Branch reply."
    assert [text_of(m) for m in said(chat.endpoint.last)] == [
        "who are my suppliers?",
        "",
        "0 of 0 suppliers",
        "You have no suppliers yet.",
        "and now?",
    ]
    assert chat.demo.count("tools/call", "list_suppliers") == 1

    wrong = chat.cli.run("conversations", "branch", conversation_id, "--from", "zzzz")
    assert wrong.returncode != 0
    assert "No single message shown" in wrong.stderr
    assert "Traceback" not in wrong.stderr
