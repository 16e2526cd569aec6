"""Model providers as the faces see them: what the user types to add one, how one is listed and
what a test of one found; where a provider's secrets live in the keyring (scope
:data:`PROVIDER_SECRET_SCOPE`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from mooring.core.chat import PROVIDER_SECRET_SCOPE, ProviderConfig, ProviderKind
from mooring.core.errors import KnownError

__all__ = [
    "DEFAULT_URLS",
    "PROVIDER_SECRET_SCOPE",
    "ProviderAdded",
    "ProviderDraft",
    "ProviderView",
    "Verdict",
    "api_key_name",
    "header_name",
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
}
"""Where a provider of each kind lives when no address is given."""


def provider_base_url(kind: ProviderKind, given: str | None) -> str:
    """The endpoint address to store: the kind's default, cleaned; not http(s) is refused."""
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


@dataclass(frozen=True, slots=True)
class ProviderDraft:
    """What the user typed to add a provider (secrets included, kept only until stored)."""

    name: str
    kind: ProviderKind
    model: str
    base_url: str | None = None
    api_key: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


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


@dataclass
class Verdict:
    """What a provider test found; ``None`` where it could not tell."""

    reachable: bool | None = None
    key_accepted: bool | None = None
    model_found: bool | None = None
    tools_supported: bool | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the provider is ready to chat (nothing found wrong)."""
        return not self.problems and all(
            value is not False
            for value in (self.reachable, self.key_accepted, self.model_found, self.tools_supported)
        )
