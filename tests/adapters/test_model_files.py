"""Model downloads against a real HTTP server on 127.0.0.1: an interrupted download resumes
from its ``.part`` file with a ``Range`` request, the whole file's SHA-256 is checked (from the
catalogue or the server's ``x-linked-etag``), and a mismatch removes the partial file."""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx2
import pytest

from mooring.adapters.model_files import (
    PART_SUFFIX,
    DownloadStop,
    add_file,
    download,
    installed,
    remove_file,
)
from mooring.core.errors import KnownError
from mooring.core.local_models import CATALOGUE, catalogue_model

PAYLOAD = os.urandom(300_000)
SHA = hashlib.sha256(PAYLOAD).hexdigest()


@dataclass
class FileServer:
    """Serves ``PAYLOAD`` at ``/model.gguf`` with ranges; can cut the next body short."""

    url: str = ""
    cut_after: int | None = None
    """The next GET sends this many bytes of its body, then closes the connection."""
    etag: str | None = SHA
    ranges: list[str | None] = field(default_factory=list)
    stall_after: int | None = None
    """The next GET sends this many bytes of its body, then waits for :attr:`release`."""
    stalled: threading.Event = field(default_factory=threading.Event)
    """Set once a GET sent its first part and waits."""
    release: threading.Event = field(default_factory=threading.Event)
    """Lets a stalled GET send the rest (set when the server stops)."""


@pytest.fixture
def file_server() -> Iterator[FileServer]:
    state = FileServer()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_HEAD(self) -> None:
            self.send_response(200)
            if state.etag:
                self.send_header("x-linked-etag", f'"{state.etag}"')
            self.send_header("content-length", str(len(PAYLOAD)))
            self.end_headers()

        def do_GET(self) -> None:
            wanted = self.headers.get("range")
            state.ranges.append(wanted)
            start = int(wanted.removeprefix("bytes=").rstrip("-")) if wanted else 0
            if start >= len(PAYLOAD):
                self.send_response(416)
                self.end_headers()
                return
            body = PAYLOAD[start:]
            self.send_response(206 if wanted else 200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            cut, state.cut_after = state.cut_after, None
            stall, state.stall_after = state.stall_after, None
            if stall is not None:
                self.wfile.write(body[:stall])
                self.wfile.flush()
                state.stalled.set()
                state.release.wait()
                body = body[stall:]
            self.wfile.write(body if cut is None else body[:cut])
            self.wfile.flush()
            if cut is not None:
                self.close_connection = True

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/model.gguf"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_an_interrupted_download_resumes_where_it_stopped_and_is_verified(
    file_server: FileServer, tmp_path: Path
) -> None:
    target = tmp_path / "models" / "model.gguf"
    part = target.with_name(target.name + PART_SUFFIX)
    file_server.cut_after = 120_000
    with httpx2.Client() as client:
        with pytest.raises(KnownError) as stopped:
            download(client, file_server.url, target, sha256=SHA)
        assert stopped.value.code == "download_interrupted"
        assert "Run it again" in stopped.value.message
        assert not target.exists()
        assert part.read_bytes() == PAYLOAD[:120_000]

        seen: list[tuple[int, int | None]] = []
        download(
            client, file_server.url, target, sha256=SHA, progress=lambda d, t: seen.append((d, t))
        )
    assert file_server.ranges == [None, "bytes=120000-"]  # only the rest was fetched again
    assert target.read_bytes() == PAYLOAD
    assert not part.exists()
    assert seen[-1] == (len(PAYLOAD), len(PAYLOAD))
    assert [f.path for f in installed(target.parent)] == [target]  # a part is never listed


def test_the_checksum_comes_from_the_server_when_the_catalogue_has_none(
    file_server: FileServer, tmp_path: Path
) -> None:
    target = tmp_path / "model.gguf"
    with httpx2.Client() as client:
        download(client, file_server.url, target)
    assert target.read_bytes() == PAYLOAD


def test_a_file_that_cannot_be_verified_is_not_downloaded(
    file_server: FileServer, tmp_path: Path
) -> None:
    file_server.etag = None
    target = tmp_path / "model.gguf"
    with httpx2.Client() as client, pytest.raises(KnownError) as refused:
        download(client, file_server.url, target)
    assert refused.value.code == "unverifiable"
    assert file_server.ranges == []  # nothing was fetched
    assert list(tmp_path.iterdir()) == []


def test_a_checksum_mismatch_is_refused_and_the_partial_file_removed(
    file_server: FileServer, tmp_path: Path
) -> None:
    target = tmp_path / "model.gguf"
    part = target.with_name(target.name + PART_SUFFIX)
    part.write_bytes(b"X" * 1000)  # a part from before the file changed on the server
    with httpx2.Client() as client, pytest.raises(KnownError) as refused:
        download(client, file_server.url, target, sha256=SHA)
    assert refused.value.code == "checksum_mismatch"
    assert file_server.ranges == ["bytes=1000-"]
    assert not part.exists()
    assert not target.exists()


def test_a_model_file_can_be_added_by_link_and_removed(tmp_path: Path) -> None:
    source = tmp_path / "mine.gguf"
    source.write_bytes(b"GGUF" + b"\0" * 60)
    folder = tmp_path / "models"
    linked = add_file(folder, source)
    [listed] = installed(folder)
    assert (listed.path, listed.linked, listed.size) == (linked, True, 64)
    with pytest.raises(KnownError, match="there already"):
        add_file(folder, source)
    not_model = tmp_path / "notes.gguf"
    not_model.write_text("hello")
    with pytest.raises(KnownError, match="not a GGUF"):
        add_file(folder, not_model)
    remove_file(folder, "mine")
    assert installed(folder) == []
    assert source.exists()  # the user's own file is kept


def test_the_catalogue_names_https_files_with_a_licence() -> None:
    assert len({m.key for m in CATALOGUE}) == len(CATALOGUE) >= 3
    for model in CATALOGUE:
        assert model.url.startswith("https://huggingface.co/")
        assert model.url.endswith("/" + model.file_name)
        assert model.file_name.endswith(".gguf")
        assert model.licence
        assert model.licence_url.startswith("https://")
        assert catalogue_model(model.key.upper()) is model


def test_a_stopped_download_ends_at_once_while_the_server_stalls_and_resumes_later(
    file_server: FileServer, tmp_path: Path
) -> None:
    target = tmp_path / "models" / "model.gguf"
    part = target.with_name(target.name + PART_SUFFIX)
    file_server.stall_after = 100_000
    stop = DownloadStop()
    came: list[int] = []

    def progress(done: int, _total: int | None) -> None:
        came.append(done)
        if done >= 100_000:  # all the server sends before it stalls
            stop.stop()

    with httpx2.Client() as client:
        with pytest.raises(KnownError) as stopped:
            download(client, file_server.url, target, sha256=SHA, progress=progress, stop=stop)
        assert stopped.value.code == "download_stopped"
        assert "run it again to resume" in stopped.value.message
        assert not target.exists()
        assert part.read_bytes() == PAYLOAD[:100_000]  # the part is kept
        download(client, file_server.url, target, sha256=SHA)
    assert file_server.ranges == [None, "bytes=100000-"]
    assert target.read_bytes() == PAYLOAD


def test_a_download_stopped_while_it_waits_for_the_server_ends_without_more_data(
    file_server: FileServer, tmp_path: Path
) -> None:
    # Stopped from another thread while the read waits for a server that sends nothing more.
    target = tmp_path / "model.gguf"
    file_server.stall_after = 50_000
    stop = DownloadStop()
    outcome: list[BaseException] = []
    all_sent = threading.Event()

    def progress(done: int, _total: int | None) -> None:
        if done >= 50_000:  # what the server sent: the next read waits
            all_sent.set()

    def run() -> None:
        with httpx2.Client(timeout=None) as client:  # only the stop can end the wait
            try:
                download(client, file_server.url, target, sha256=SHA, stop=stop, progress=progress)
            except KnownError as exc:
                outcome.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    assert all_sent.wait(30)
    stop.stop()
    worker.join(30)
    assert not worker.is_alive()  # ended with the server still stalled
    assert not file_server.release.is_set()
    [error] = outcome
    assert isinstance(error, KnownError)
    assert error.code == "download_stopped"
    assert not target.exists()
