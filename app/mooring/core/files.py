"""Files the user attaches to a message: text files (UTF-8) and images (PNG, JPEG, GIF, WebP).

Every face reads a file's bytes and hands them to :func:`attach_file`, which refuses what
cannot be sent (too big, not UTF-8 text nor a known image) with a :class:`KnownError` that
states the limit; :func:`check_total` guards one message's files together. Whether a model
takes images is :func:`accepts_images`. Pure: no I/O here.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from mooring.core.errors import KnownError


class FileKind(StrEnum):
    """What an attached file is to the model."""

    TEXT = "text"
    """UTF-8 text: given to the model inside the user's message."""
    IMAGE = "image"
    """An image: given as an image content part (only to a model that takes images)."""


TEXT_LIMIT: Final = 200 * 1024
"""Bytes of one attached text file at most."""
IMAGE_LIMIT: Final = 5 * 1024 * 1024
"""Bytes of one attached image at most."""
TOTAL_LIMIT: Final = 10 * 1024 * 1024
"""Bytes of all the files attached to one message at most."""
MAX_FILES: Final = 10
"""Files attached to one message at most."""

IMAGE_TYPES: Final = ("image/png", "image/jpeg", "image/gif", "image/webp")


def size_words(size: int) -> str:
    """A byte count as people read it: ``812 bytes``, ``200 KB``, ``5 MB``."""
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.3g} KB"
    return f"{size / (1024 * 1024):.3g} MB"


LIMITS_WORDS: Final = (
    f"text files (UTF-8) up to {size_words(TEXT_LIMIT)}, images (PNG, JPEG, GIF, WebP) up to "
    f"{size_words(IMAGE_LIMIT)}; at most {MAX_FILES} files, {size_words(TOTAL_LIMIT)} in all"
)
"""The limits in words, said before sending (the picker, ``--help``) and on a refusal."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FileAttachment:
    """A file attached to a user's message, stored with it (its bytes as they were read)."""

    id: str
    name: str
    """The file's base name (shown, never a path)."""
    kind: FileKind
    mime: str
    size: int
    sha256: str
    data: bytes

    @property
    def text(self) -> str:
        """A text file's content ("" for an image)."""
        return self.data.decode("utf-8") if self.kind is FileKind.TEXT else ""

    def describe(self) -> str:
        """One line for a person: its name, type and size."""
        return f"{self.name} ({self.mime}, {size_words(self.size)})"


def image_type(data: bytes) -> str | None:
    """The image type of these bytes by their signature, or ``None`` when not one we send."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(data) >= 12 and data.startswith(b"RIFF") and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _refused(name: str, why: str) -> KnownError:
    return KnownError(
        f"Cannot attach {name}: {why}.", hint=f"Mooring attaches {LIMITS_WORDS}.", code="file"
    )


def attach_file(file_id: str, name: str, data: bytes) -> FileAttachment:
    """The file ``name`` with these bytes as an attachment, or a :class:`KnownError` saying
    why it cannot be sent (with the limits)."""
    name = name.replace("\\", "/").rsplit("/", 1)[-1] or "file"
    digest = hashlib.sha256(data).hexdigest()
    mime = image_type(data)
    if mime is not None:
        if len(data) > IMAGE_LIMIT:
            raise _refused(
                name, f"the image is {size_words(len(data))}, over {size_words(IMAGE_LIMIT)}"
            )
        return FileAttachment(
            id=file_id,
            name=name,
            kind=FileKind.IMAGE,
            mime=mime,
            size=len(data),
            sha256=digest,
            data=data,
        )
    if len(data) > TEXT_LIMIT:
        raise _refused(name, f"the file is {size_words(len(data))}, over {size_words(TEXT_LIMIT)}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _refused(
            name, "it is neither UTF-8 text nor a PNG, JPEG, GIF or WebP image"
        ) from None
    if "\x00" in text:
        raise _refused(name, "it is a binary file, not text")
    return FileAttachment(
        id=file_id,
        name=name,
        kind=FileKind.TEXT,
        mime="text/plain",
        size=len(data),
        sha256=digest,
        data=data,
    )


def check_total(files: Sequence[FileAttachment]) -> None:
    """Refuse one message's files together when there are too many or too many bytes."""
    if len(files) > MAX_FILES:
        raise KnownError(
            f"Too many files: {len(files)} attached, at most {MAX_FILES} go with one message.",
            hint=f"Mooring attaches {LIMITS_WORDS}.",
            code="file",
        )
    total = sum(f.size for f in files)
    if total > TOTAL_LIMIT:
        raise KnownError(
            f"The attached files are {size_words(total)} in all, over "
            f"{size_words(TOTAL_LIMIT)} for one message.",
            hint=f"Mooring attaches {LIMITS_WORDS}.",
            code="file",
        )


# Model names known to read images: OpenAI's GPT-4o/4.1/5 and o-series, Claude 3 and later,
# Gemini, and the common open vision models (LLaVA, Qwen-VL, Pixtral, Llama 3.2 Vision, …).
_VISION_MODELS: Final = re.compile(
    r"gpt-4o|gpt-4\.1|gpt-4-turbo|gpt-4-vision|gpt-5|chatgpt-4o|(^|[/:])o[134]($|-)"
    r"|claude-3|claude-(opus|sonnet|haiku)-4|claude-(opus|sonnet)-[4-9]|claude-[4-9]"
    r"|gemini|llava|bakllava|vision|-vl|vl-|pixtral|gemma-?3|minicpm-v|moondream|mistral-small-3",
    re.IGNORECASE,
)


def accepts_images(kind: str, model: str) -> bool:
    """Whether the model takes image content: a local model (llama.cpp as Mooring runs it)
    never does; another by its name (the well-known vision models)."""
    if kind == "local":
        return False
    return _VISION_MODELS.search(model) is not None


def images_refused(model: str) -> KnownError:
    """The refusal of images to a model that does not take them (nothing was sent)."""
    return KnownError(
        f"The model {model!r} does not take images; nothing was sent.",
        hint="Remove the image, or choose a model that reads images (e.g. gpt-4o, a Claude "
        "model, llava) for this conversation.",
        code="no_images",
    )
