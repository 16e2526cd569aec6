"""Model providers as the faces see them: what the user types to add one, how one is listed and
what a test of one found; where a provider's secrets live in the keyring (scope
:data:`PROVIDER_SECRET_SCOPE`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from urllib.parse import unquote, urlsplit

from mooring.core.chat import PROVIDER_SECRET_SCOPE, ProviderConfig, ProviderKind
from mooring.core.errors import KnownError, Remedy

__all__ = [
    "DEFAULT_URLS",
    "ENV_NAME",
    "PROVIDER_SECRET_SCOPE",
    "KeySource",
    "ProviderAdded",
    "ProviderDraft",
    "ProviderView",
    "Verdict",
    "api_key_name",
    "check_env_name",
    "header_name",
    "local_model_name",
    "local_model_path",
    "local_model_url",
    "provider_base_url",
]


def api_key_name(provider_id: str) -> str:
    """The keyring name of a provider's API key."""
    return f"{provider_id}:api_key"


def header_name(provider_id: str, header: str) -> str:
    """The keyring name of one custom header's value."""
    return f"{provider_id}:header:{header}"


DEFAULT_URLS = {
    ProviderKind.OPENAI: "https://api.openai.com/v1",
    ProviderKind.ANTHROPIC: "https://api.anthropic.com",
    ProviderKind.LOCAL: "",
}
"""Where a provider of each kind lives when no address is given."""


def local_model_url(given: str | None) -> str:
    """The ``file://`` address to store for a local model: an existing GGUF file (a path or a
    ``file://`` address), made absolute."""
    text = (given or "").strip()
    if not text:
        raise KnownError(
            "Say which model file to use.",
            hint="A GGUF file, e.g. --model-path ~/models/Qwen3-0.6B-Q4_K_M.gguf.",
            code="usage",
        )
    path = Path(unquote(urlsplit(text).path)) if text.startswith("file:") else Path(text)
    path = path.expanduser().resolve()
    if not path.is_file():
        raise KnownError(f"There is no model file at {str(path)!r}.", code="not_found")
    with path.open("rb") as file:
        if file.read(4) != b"GGUF":
            raise KnownError(
                f"{path.name!r} is not a GGUF model file.",
                hint="Local models are GGUF files (llama.cpp's format), e.g. from Hugging Face.",
                code="usage",
            )
    return path.as_uri()


def local_model_path(config: ProviderConfig) -> Path:
    """Where a local provider's model file is (its ``base_url`` is the file's address)."""
    return Path(unquote(urlsplit(config.base_url).path))


def local_model_name(url: str) -> str:
    """The name a local model is called by when none is given: its file's name, no suffix."""
    return Path(unquote(urlsplit(url).path)).stem


def provider_base_url(kind: ProviderKind, given: str | None) -> str:
    """The endpoint address to store: the kind's default, cleaned; not http(s) is refused (a
    local model's: its file's ``file://`` address)."""
    if kind is ProviderKind.LOCAL:
        return local_model_url(given)
    url = (given or DEFAULT_URLS[kind]).strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise KnownError(
            f"{given!r} is not an http(s) address.",
            hint="For example http://127.0.0.1:11434/v1 (Ollama).",
            code="usage",
        )
    if kind is ProviderKind.ANTHROPIC and url.endswith("/v1"):
        url = url[: -len("/v1")]  # the SDK adds /v1/messages itself
    return url


ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
"""What an environment variable's name may be."""


def check_env_name(name: str) -> str:
    """``name`` stripped, or a :class:`KnownError` when it cannot name a variable."""
    name = name.strip()
    if not ENV_NAME.match(name):
        raise KnownError(
            f"{name!r} is not an environment variable name.",
            hint="Letters, digits and _, not starting with a digit (e.g. OPENAI_API_KEY).",
            code="usage",
        )
    return name


@dataclass(frozen=True, slots=True)
class ProviderDraft:
    """What the user typed to add (or edit) a provider (secrets included, kept only until
    stored)."""

    name: str
    kind: ProviderKind
    model: str
    base_url: str | None = None
    api_key: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    api_key_env: str | None = None
    """Read the key from this environment variable at each use (only the name is stored)."""
    keep_for_session: bool = False
    """With no usable keyring, keep ``api_key`` until this process ends (else it is refused:
    it would be lost)."""


class KeySource(StrEnum):
    """Where a provider's API key comes from, as things are now."""

    NONE = "none"
    """No key is configured (a local server needs none)."""
    KEYRING = "keyring"
    SESSION = "session"
    """Kept in memory until Mooring's engine stops (no usable keyring)."""
    LOST = "lost"
    """A key was given, but nothing holds it now (no keyring kept it)."""
    ENV = "env"
    """Read from its environment variable, which is set."""
    ENV_UNSET = "env_unset"
    """Read from its environment variable, which is not set where Mooring runs."""


@dataclass(frozen=True, slots=True)
class ProviderAdded:
    """A stored provider: whether it became the default, and whether its secrets last."""

    config: ProviderConfig
    became_default: bool
    secrets_durable: bool


@dataclass(frozen=True, slots=True)
class ProviderView:
    """A provider as listed (never its secrets: only whether they exist)."""

    config: ProviderConfig
    default: bool
    key: KeySource = KeySource.NONE

    @property
    def key_usable(self) -> bool:
        """Whether a request made now would carry the key configured (or none is)."""
        return self.key not in (KeySource.LOST, KeySource.ENV_UNSET)


@dataclass
class Verdict:
    """What a provider test found; ``None`` where it could not tell."""

    reachable: bool | None = None
    key_accepted: bool | None = None
    model_found: bool | None = None
    tools_supported: bool | None = None
    problems: list[str] = field(default_factory=list)
    remedy: Remedy | None = None
    """What the user can do about the first problem that has a remedy (each face words it)."""

    @property
    def ok(self) -> bool:
        """Whether the provider is ready to chat (nothing found wrong)."""
        return not self.problems and all(
            value is not False
            for value in (self.reachable, self.key_accepted, self.model_found, self.tools_supported)
        )
