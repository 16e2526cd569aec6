"""Files attached to a message: text files inside the user's text, images as image parts on
the OpenAI and Anthropic wires, refused before any request for a model that reads no images,
stored with the message (a real SQLite file, read again after a reopen), sent again by a
regenerated or edited turn, and exported. A host built by the composition root; the models
are the scripted loopback endpoints."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio
import pytest

from mooring.bootstrap import build_host
from mooring.core.chat import ProviderConfig, ProviderKind
from mooring.core.errors import KnownError
from mooring.core.files import TEXT_LIMIT, FileAttachment, FileKind, attach_file
from mooring.core.ids import new_id
from mooring.services.host import Host
from mooring.settings.paths import Paths
from mooring.settings.store import Settings
from mooring.storage.db import Database
from tests.helpers.model_endpoints import ModelEndpoint, Text
from tests.helpers.tiny_png import tiny_png

pytestmark = pytest.mark.anyio

NOTES = "Suppliers: 40\nFiles: 3\n"
PNG = tiny_png()
PNG_URL = "data:image/png;base64," + base64.b64encode(PNG).decode("ascii")


class Hosts:
    """Opens a host on one data folder; closing it and opening again reads the same file."""

    def __init__(self, root: Path, logs: Path) -> None:
        self.paths = Paths(data_dir=root, config_dir=root / "config", log_dir=logs)
        self.open: list[tuple[Host, Database]] = []

    def __call__(self) -> Host:
        db = Database.open(self.paths.data_dir / "mooring.sqlite3")
        host = build_host(self.paths, Settings({"demo_server.enabled": False}), db)
        self.open.append((host, db))
        return host

    async def close(self) -> None:
        while self.open:
            host, db = self.open.pop()
            with anyio.fail_after(30):
                await host.stop()
            db.close()


@pytest.fixture
async def hosts(tmp_path: Path) -> AsyncIterator[Hosts]:
    made = Hosts(tmp_path / "data", tmp_path / "logs")
    try:
        yield made
    finally:
        await made.close()


async def with_provider(
    host: Host, endpoint: ModelEndpoint, kind: ProviderKind, model: str
) -> None:
    assert host.providers is not None
    url = endpoint.openai_url if kind is ProviderKind.OPENAI else endpoint.anthropic_url
    await host.providers.add_provider(
        ProviderConfig(id=new_id(), name="scripted", kind=kind, base_url=url, model=model)
    )


def files() -> tuple[FileAttachment, ...]:
    return (
        attach_file(new_id(), "notes.txt", NOTES.encode()),
        attach_file(new_id(), "red.png", PNG),
    )


NOTES_PART = (
    f"[Attached file notes.txt (text/plain, {len(NOTES)} bytes)]\n{NOTES}\n[End of notes.txt]"
)

WIRE_PARTS: dict[ProviderKind, Callable[[], list[dict[str, object]]]] = {
    ProviderKind.OPENAI: lambda: [
        {"type": "text", "text": "What is in these?\n\n" + NOTES_PART},
        {"type": "image_url", "image_url": {"url": PNG_URL}},
    ],
    ProviderKind.ANTHROPIC: lambda: [
        {"type": "text", "text": "What is in these?\n\n" + NOTES_PART},
        {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": "image/png",
                "data": base64.b64encode(PNG).decode("ascii"),
            },
        },
    ],
}


def last_user_content(endpoint: ModelEndpoint) -> object:
    body = endpoint.last.body
    return [m for m in body["messages"] if m["role"] == "user"][-1]["content"]


@pytest.mark.parametrize(
    ("kind", "model"),
    [(ProviderKind.OPENAI, "gpt-4o-mini"), (ProviderKind.ANTHROPIC, "claude-sonnet-4-5")],
)
async def test_a_text_file_and_an_image_reach_the_model_as_its_wire_parts_and_are_kept(
    hosts: Hosts, model_endpoint: ModelEndpoint, kind: ProviderKind, model: str
) -> None:
    host = hosts()
    await with_provider(host, model_endpoint, kind, model)
    chat = host.chat
    assert chat is not None
    model_endpoint.script(Text("A red square and two numbers."), Text("Again: a red square."))
    conversation = await chat.create()
    sent = files()

    result = await chat.send(conversation.id, "What is in these?", files=sent)
    assert result.error is None
    assert last_user_content(model_endpoint) == WIRE_PARTS[kind]()

    # Regenerating sends the user's message with its files again.
    assert result.reply_message_id is not None
    await chat.regenerate(conversation.id, result.reply_message_id)
    assert len(model_endpoint.model_requests) == 2
    assert last_user_content(model_endpoint) == WIRE_PARTS[kind]()

    # Stored with the message: read back from the SQLite file by a host opened again.
    await hosts.close()
    again = hosts()
    assert again.chat is not None
    [user, _reply] = await again.chat.messages(conversation.id)
    assert [(f.name, f.kind, f.mime, f.size, f.data) for f in user.files] == [
        ("notes.txt", FileKind.TEXT, "text/plain", len(NOTES), NOTES.encode()),
        ("red.png", FileKind.IMAGE, "image/png", len(PNG), PNG),
    ]

    markdown = await again.chat.export(conversation.id, "md")
    assert f"Attached file `notes.txt` (text/plain, {len(NOTES)} bytes)" in markdown
    assert f"```text\n{NOTES}\n```" in markdown
    assert f"Attached image `red.png` (image/png, {len(PNG)} bytes)" in markdown
    exported = json.loads(await again.chat.export(conversation.id, "json"))
    [text_file, image] = exported["messages"][0]["attachments"]
    assert (text_file["name"], text_file["text"]) == ("notes.txt", NOTES)
    assert (image["name"], image["mime"]) == ("red.png", "image/png")
    assert base64.b64decode(image["base64"]) == PNG


async def test_an_edited_message_keeps_its_files(
    hosts: Hosts, model_endpoint: ModelEndpoint
) -> None:
    host = hosts()
    await with_provider(host, model_endpoint, ProviderKind.OPENAI, "gpt-4o")
    chat = host.chat
    assert chat is not None
    model_endpoint.script(Text("One."), Text("Two."))
    conversation = await chat.create()
    await chat.send(conversation.id, "Look", files=files())
    [user, _reply] = await chat.messages(conversation.id)

    await chat.edit(conversation.id, user.id, "What is in these?")
    assert last_user_content(model_endpoint) == WIRE_PARTS[ProviderKind.OPENAI]()
    [edited, _] = await chat.messages(conversation.id)
    assert [f.name for f in edited.files] == ["notes.txt", "red.png"]


async def test_an_image_for_a_model_that_reads_none_is_refused_before_any_request(
    hosts: Hosts, model_endpoint: ModelEndpoint
) -> None:
    host = hosts()
    await with_provider(host, model_endpoint, ProviderKind.OPENAI, "model-small")
    chat = host.chat
    assert chat is not None
    conversation = await chat.create()

    with pytest.raises(KnownError, match="'model-small' does not take images; nothing was sent"):
        await chat.send(conversation.id, "What is this?", files=files())
    assert model_endpoint.model_requests == []
    assert await chat.messages(conversation.id) == []

    # A text file alone goes to the same model.
    model_endpoint.script(Text("Forty suppliers."))
    await chat.send(conversation.id, "Sum up", files=[attach_file(new_id(), "n.txt", b"40")])
    assert last_user_content(model_endpoint) == (
        "Sum up\n\n[Attached file n.txt (text/plain, 2 bytes)]\n40\n[End of n.txt]"
    )


def test_a_file_over_the_limit_or_not_text_is_refused_saying_the_limit() -> None:
    with pytest.raises(KnownError, match=r"over 200 KB") as too_big:
        attach_file(new_id(), "big.log", b"a" * (TEXT_LIMIT + 1))
    assert "up to 200 KB" in too_big.value.hint
    with pytest.raises(KnownError, match="neither UTF-8 text nor a PNG"):
        attach_file(new_id(), "blob.bin", b"\xff\xfe\x00\x81")
    with pytest.raises(KnownError, match="binary file"):
        attach_file(new_id(), "nul.dat", b"abc\x00def")
