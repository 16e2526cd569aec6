"""The guards on files attached to a user's message, applied before anything is stored or
sent (the chat service's turns call them)."""

from __future__ import annotations

from collections.abc import Sequence

from mooring.core.chat import ProviderConfig
from mooring.core.files import FileAttachment, FileKind, accepts_images, images_refused


def guard_images(files: Sequence[FileAttachment], config: ProviderConfig, model: str) -> None:
    """Refuse (a :class:`~mooring.core.errors.KnownError`, nothing stored) images for a model
    that does not take them."""
    if any(f.kind is FileKind.IMAGE for f in files) and not accepts_images(config.kind, model):
        raise images_refused(model)
