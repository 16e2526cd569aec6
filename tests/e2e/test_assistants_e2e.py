"""`mooring assistants` and `mooring chat --assistant` end to end: real processes, the demo
server as the engine's child, the real OpenAI SDK talking to a scripted streaming endpoint.
What the model was offered is read from the requests the endpoint recorded; what the server
ran, from its own request log."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.test_chat_e2e import Chat, offered, system_of, tool_result
from tests.e2e.test_chat_e2e import chat as chat  # the fixture: demo server + OpenAI provider
from tests.e2e.test_chat_e2e import kind as kind  # its wire
from tests.helpers.model_endpoints import Text, ToolCall, ToolCalls


def test_a_conversation_from_an_assistant_carries_its_prompt_and_offers_only_its_tools(
    chat: Chat, tmp_path: Path
) -> None:
    prompt = tmp_path / "librarian.txt"
    prompt.write_text("Answer like a librarian.\nNever import anything.", encoding="utf-8")
    added = chat.cli.json(
        "assistants", "add", "Librarian", "--system-prompt-file", str(prompt),
        "--provider", "openai", "--tools", "demo:list_suppliers",
    )  # fmt: skip
    assert (added["name"], added["provider"], added["tools"]) == (
        "Librarian", "openai", ["demo:list_suppliers"],
    )  # fmt: skip
    listed = chat.cli.run("assistants", "list")
    assert listed.returncode == 0, listed.stderr
    assert "Librarian  [openai; tools: demo:list_suppliers]" in listed.stdout

    # The model names a tool the assistant does not offer: told it is unknown, never run.
    chat.endpoint.script(
        ToolCalls([ToolCall("demo__import_suppliers", {"path": "suppliers_clean.csv"})]),
        Text("I may not import files."),
    )
    reply = chat.send("--assistant", "librarian", "Import the clean suppliers file")
    assert reply["reply"] == "I may not import files."
    first, second = chat.endpoint.model_requests
    assert system_of(first).endswith("Answer like a librarian.\nNever import anything.")
    assert offered(first) == ["demo__list_suppliers"]
    assert "There is no tool called 'demo__import_suppliers'" in tool_result(second)
    assert chat.demo.count("tools/call") == 0
    assert reply["tool_rounds"] == []
    shown = chat.shown(reply["conversation_id"])["conversation"]
    assert shown["assistant_id"] == added["id"]
    assert [tool for _server, tool in shown["offered_tools"]["tools"]] == ["list_suppliers"]

    # Editing the assistant does not rewrite the conversation it started.
    edited = chat.cli.json("assistants", "edit", "Librarian", "--all-tools", "--system-prompt", "")
    assert edited["tools"] is None
    chat.endpoint.script(Text("Still a librarian."))
    chat.send("--conversation", reply["conversation_id"], "And now?")
    assert offered(chat.endpoint.last) == ["demo__list_suppliers"]
    assert "Answer like a librarian." in system_of(chat.endpoint.last)


def test_assistant_mistakes_are_clear_errors_and_change_nothing(chat: Chat) -> None:
    assert chat.cli.run("assistants", "add", "Helper").returncode == 0
    for args, words in (
        (("assistants", "add", "helper"), "An assistant called 'helper' exists already."),
        (("assistants", "add", "X", "--servers", "nowhere"), "No server called 'nowhere'."),
        (("assistants", "add", "Y", "--tools", "list_suppliers"), "server:tool"),
        (("assistants", "remove", "Nobody"), "No assistant called 'Nobody'."),
        (("chat", "--assistant", "Nobody", "hi"), "No assistant called 'Nobody'."),
    ):
        done = chat.cli.run(*args)
        assert done.returncode != 0, args
        assert words in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr
    assert [a["name"] for a in chat.cli.json("assistants", "list")] == ["Helper"]
    assert chat.endpoint.model_requests == []
    removed = chat.cli.run("assistants", "remove", "helper")
    assert (removed.returncode, removed.stdout.strip()) == (0, "Removed assistant 'Helper'.")
    assert chat.cli.json("assistants", "list") == []
