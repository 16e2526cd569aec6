"""Local model files in the data folder: downloading (resumable, checksum-verified), adding an
existing file, listing and removing them.

A download writes ``NAME.part`` next to where the file goes; an interrupted one is resumed from
there with an HTTP ``Range`` request. The whole file's SHA-256 is checked before it takes its
name: a mismatch removes the partial file and says so. The expected checksum comes from the
catalogue or, for Hugging Face, from the ``x-linked-etag`` header (the LFS object's SHA-256).
A :class:`DownloadStop` stops a download from another thread at once, even while the server
sends nothing; the ``.part`` file stays for the next download to resume.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mooring.core.errors import KnownError

if TYPE_CHECKING:
    import httpx2

log = logging.getLogger("mooring.models")

PART_SUFFIX = ".part"
_SHA256 = re.compile(r"[0-9a-f]{64}\Z")
_CHUNK = 1 << 20

Progress = Callable[[int, int | None], None]
"""Told ``(bytes so far, total bytes or None)`` as a download goes."""


class DownloadStop:
    """Stops a download running on another thread: at once, even while it waits for a server
    that sends nothing (its connection is shut down under it)."""

    def __init__(self) -> None:
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None

    def stopped(self) -> bool:
        """Whether :meth:`stop` was called."""
        return self._stopped.is_set()

    def stop(self) -> None:
        """Stop the download (its ``.part`` file is kept)."""
        self._stopped.set()
        with self._lock:
            sock = self._socket
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)  # wakes a read that waits for the server

    def watch(self, sock: object) -> None:
        """The connection the download reads from now (``None``: none)."""
        with self._lock:
            self._socket = sock if isinstance(sock, socket.socket) else None
        if sock is not None and self.stopped():
            self.stop()


def _stopped(name: str, have: int) -> KnownError:
    return KnownError(
        f"The download of {name!r} was stopped after {have / 1e6:.1f} MB; run it again to "
        "resume where it stopped.",
        code="download_stopped",
    )


@dataclass(frozen=True, slots=True)
class ModelFile:
    """A model file in the models folder."""

    path: Path
    size: int
    linked: bool
    """A link to a file kept elsewhere (``models add``), not a copy."""


def models_dir(data_dir: Path) -> Path:
    """Where local model files are kept."""
    return data_dir / "models"


def installed(folder: Path) -> list[ModelFile]:
    """The GGUF files in ``folder``, by name (partial downloads are not listed)."""
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.glob("*.gguf")):
        if path.is_file():
            found.append(ModelFile(path, path.stat().st_size, path.is_symlink()))
    return found


def add_file(folder: Path, source: Path) -> Path:
    """Make ``source`` (an existing GGUF file) one of the models: linked, not copied."""
    source = source.expanduser().resolve()
    if not source.is_file():
        raise KnownError(f"There is no file at {str(source)!r}.", code="not_found")
    with source.open("rb") as file:
        if file.read(4) != b"GGUF":
            raise KnownError(f"{source.name!r} is not a GGUF model file.", code="usage")
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / source.name
    if target.exists() or target.is_symlink():
        raise KnownError(f"A model called {source.name!r} is there already.", code="exists")
    target.symlink_to(source)
    return target


def remove_file(folder: Path, name: str) -> Path:
    """Remove a model (and any partial download of it); a linked file itself is kept."""
    target = folder / Path(name).name
    if target.suffix != ".gguf":
        target = target.with_name(target.name + ".gguf")
    part = target.with_name(target.name + PART_SUFFIX)
    if not (target.exists() or target.is_symlink() or part.exists()):
        raise KnownError(f"No model called {name!r}.", code="not_found")
    for path in (target, part):
        path.unlink(missing_ok=True)
    return target


@dataclass(frozen=True, slots=True)
class Checksum:
    """The SHA-256 a download is checked against, and where it came from (said to the user:
    the catalogue pins none yet, so it is usually the server's own word)."""

    sha256: str
    source: str
    """``"the catalogue"`` or ``"the server's x-linked-etag header"`` (or ``etag``)."""


def expected_sha256(client: httpx2.Client, url: str) -> Checksum | None:
    """The SHA-256 Hugging Face gives for a file (``x-linked-etag``), or ``None``."""
    reply = client.head(url, follow_redirects=False)
    for header in ("x-linked-etag", "etag"):
        value = reply.headers.get(header, "").strip().strip('"').lower()
        value = value.removeprefix("w/").strip('"')
        if _SHA256.match(value):
            return Checksum(value, f"the server's {header} header")
    return None


def download(
    client: httpx2.Client,
    url: str,
    target: Path,
    *,
    sha256: str | None = None,
    progress: Progress | None = None,
    stop: DownloadStop | None = None,
    checksum: Callable[[Checksum], None] | None = None,
) -> Path:
    """Download ``url`` to ``target``, resuming ``target.part`` if there is one; verify its
    SHA-256 (given, else asked of the server) before it takes its name. ``stop`` ends it early
    (a ``download_stopped`` error; the part is kept). ``checksum`` is told the SHA-256 to
    match and where it came from before anything is fetched."""
    import httpx2

    stop = stop or DownloadStop()
    found = Checksum(sha256.lower(), "the catalogue") if sha256 else expected_sha256(client, url)
    if found is None:
        raise KnownError(
            f"The server gives no checksum for {target.name!r}: it is not downloaded, since it "
            "could not be verified.",
            code="unverifiable",
        )
    expected = found.sha256
    if checksum is not None:
        checksum(found)
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + PART_SUFFIX)
    digest = hashlib.sha256()
    have = 0
    if part.exists():
        with part.open("rb") as file:  # the hash continues from what is already here
            while block := file.read(_CHUNK):
                digest.update(block)
                have += len(block)
    headers = {"Range": f"bytes={have}-"} if have else {}
    try:
        if stop.stopped():
            raise _stopped(target.name, have)
        with client.stream("GET", url, headers=headers, follow_redirects=True) as reply:
            stream = reply.extensions.get("network_stream")
            stop.watch(None if stream is None else stream.get_extra_info("socket"))
            if reply.status_code == 416 and have:
                pass  # nothing left to fetch: the part is whole
            elif reply.status_code not in (200, 206):
                raise KnownError(
                    f"The download of {target.name!r} was refused (HTTP {reply.status_code}).",
                    code="download_failed",
                )
            else:
                if reply.status_code == 200 and have:  # the server does not resume: again
                    digest, have = hashlib.sha256(), 0
                length = reply.headers.get("content-length")
                total = have + int(length) if length and length.isdigit() else None
                with part.open("ab" if have else "wb") as file:
                    for block in reply.iter_bytes():  # as they arrive: kept if it breaks
                        if stop.stopped():
                            break
                        file.write(block)
                        digest.update(block)
                        have += len(block)
                        if progress is not None:
                            progress(have, total)
                if stop.stopped():
                    raise _stopped(target.name, have)
                if total is not None and have < total:
                    raise httpx2.RemoteProtocolError("the body ended early")
    except httpx2.HTTPError as exc:
        if stop.stopped():
            log.info("download of %s stopped after %d bytes", target.name, have)
            raise _stopped(target.name, have) from None
        log.info(
            "download of %s stopped after %d bytes (%s)", target.name, have, type(exc).__name__
        )
        raise KnownError(
            f"The download of {target.name!r} stopped after {have / 1e6:.1f} MB "
            f"({type(exc).__name__}). Run it again to continue where it stopped.",
            code="download_interrupted",
        ) from None
    finally:
        stop.watch(None)
    if digest.hexdigest() != expected:
        part.unlink(missing_ok=True)
        raise KnownError(
            f"The downloaded {target.name!r} does not match its checksum: it was removed. "
            "Try again; if it happens again the file on the server has changed.",
            code="checksum_mismatch",
        )
    os.replace(part, target)
    log.info("downloaded %s (%d bytes, sha256 verified)", target.name, have)
    return target
