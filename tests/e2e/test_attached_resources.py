"""``mooring chat --attach SERVER:URI``: a real server's resource reaches the model's request
on the scripted OpenAI endpoint, as part of the user's message, and stays with it."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import Cli, add_demo
from tests.e2e.test_chat_e2e import Chat, add_provider, said, text_of
from tests.helpers.model_endpoints import ModelEndpoint, Text
from tests.helpers.node_peers import everything_server, node


def test_an_attached_demo_resource_reaches_the_model_with_the_message_and_stays_stored(
    cli: Cli, tmp_path: Path, model_endpoint: ModelEndpoint
) -> None:
    chat = Chat(cli, model_endpoint, add_demo(cli, tmp_path), tmp_path)
    add_provider(cli, model_endpoint, "openai")
    model_endpoint.script(Text("There are three sample files."))

    reply = chat.send("Which sample files are there?", "--attach", "demo:mooring-demo://samples")
    assert reply["reply"] == "There are three sample files."
    [user] = said(model_endpoint.last)
    sent = text_of(user)
    first, attached = sent.split("\n\n", 1)
    assert first == "Which sample files are there?"
    assert attached.startswith("[Attached resource demo:mooring-demo://samples]\n")
    assert "suppliers_clean.csv (" in attached  # the text the demo server gave
    assert attached.endswith("[End of mooring-demo://samples]")

    stored = chat.shown(reply["conversation_id"])
    assert stored["messages"][0]["content"] == sent  # read back as the model got it


def test_an_everything_document_is_attached_whole_and_a_missing_resource_sends_nothing(
    cli: Cli, tmp_path: Path, model_endpoint: ModelEndpoint
) -> None:
    entry = everything_server()
    args = ["servers", "add", "everything", "--command", node(), f"--arg={entry}", "--arg=stdio"]
    assert cli.run(*args).returncode == 0
    chat = Chat(cli, model_endpoint, add_demo(cli, tmp_path), tmp_path)
    add_provider(cli, model_endpoint, "openai")
    uri = "demo://resource/static/document/architecture.md"
    listed = cli.json("resources", "list", "everything")
    assert uri in [r["uri"] for r in listed if not r["template"]]

    model_endpoint.script(Text("Noted."))
    reply = chat.send("Read this", "--attach", f"everything:{uri}")
    assert reply["error"] is None
    [user] = said(model_endpoint.last)
    document = (entry.parent / "docs" / "architecture.md").read_text()
    assert text_of(user) == (
        f"Read this\n\n[Attached resource everything:{uri}]\n{document}\n[End of {uri}]"
    )

    before = len(model_endpoint.model_requests)
    missing = cli.run("chat", "hello", "--attach", "demo:mooring-demo://no-such-thing")
    assert missing.returncode != 0
    assert "could not give mooring-demo://no-such-thing" in missing.stderr
    assert len(model_endpoint.model_requests) == before  # nothing went to the model
