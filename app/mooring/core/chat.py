"""Talking to a model: provider-neutral messages, tool offers, streamed replies and failures.

The chat service speaks only these types; ``adapters.providers`` translates them to and from
the OpenAI chat-completions and Anthropic Messages wires through the official SDKs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from mooring.core.conversation import Role
from mooring.core.errors import Remedy
from mooring.core.files import FileAttachment


class ProviderKind(StrEnum):
    """Which wire (and SDK) a provider speaks."""

    OPENAI = "openai"
    """Any OpenAI-compatible chat-completions endpoint: OpenAI, Ollama, LM Studio, vLLM…"""
    ANTHROPIC = "anthropic"
    LOCAL = "local"
    """A GGUF model file run on this machine by Mooring itself (llama.cpp in a child process,
    spoken to on the OpenAI wire); ``base_url`` is the file's ``file://`` address."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderConfig:
    """A configured model endpoint. Secrets (the API key, header values) live in the keyring
    under :data:`PROVIDER_SECRET_SCOPE`; only their names are here."""

    id: str
    name: str
    kind: ProviderKind
    base_url: str
    model: str
    header_names: tuple[str, ...] = ()
    has_api_key: bool = False
    """Whether the keyring holds an API key for it."""
    api_key_env: str | None = None
    """The environment variable its API key is read from at each use (no keyring: only the
    name is stored)."""

    @property
    def key_configured(self) -> bool:
        """Whether requests are meant to carry a key (from the keyring or a variable)."""
        return self.has_api_key or self.api_key_env is not None


PROVIDER_SECRET_SCOPE = "provider"  # noqa: S105 - a keyring scope name, not a secret
"""Keyring scope of provider secrets: names ``"{provider_id}:api_key"`` and
``"{provider_id}:header:{name}"``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolOffer:
    """A tool as offered to the model: a model-safe name (``[a-zA-Z0-9_-]{1,64}``, unique in
    one request) that the chat service maps back to (server, tool) exactly."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallRequest:
    """The model asks for one tool call."""

    id: str
    """The provider's call id; the tool result must quote it."""
    name: str
    """The model-safe name of a :class:`ToolOffer`."""
    arguments: dict[str, Any]
    raw_arguments: str = ""
    """The arguments text as streamed (kept to explain a malformed one)."""
    arguments_error: str = ""
    """Why ``raw_arguments`` is not a JSON object (then ``arguments`` is empty); "" when it is.
    Such a call is not runnable: answer it with an error tool result saying this."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ChatTurnMessage:
    """One message of the context sent to the model.

    ``role`` ``tool`` carries the result text of the call ``tool_call_id``; an assistant
    message may carry the tool calls it made.
    """

    role: Role
    content: str
    tool_calls: tuple[ToolCallRequest, ...] = ()
    tool_call_id: str | None = None
    is_error: bool = False
    """For a tool result: the tool (or the host) reports a failure or a refusal."""
    images: tuple[FileAttachment, ...] = ()
    """For a user message: images attached to it, sent as image parts after its text (text
    files are in ``content``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ChatRequest:
    """Everything one model call needs."""

    model: str
    messages: tuple[ChatTurnMessage, ...]
    tools: tuple[ToolOffer, ...] = ()
    system: str | None = None
    max_tokens: int = 4096


class StopReason(StrEnum):
    """Why the model stopped."""

    END = "end"
    TOOL_CALLS = "tool_calls"
    MAX_TOKENS = "max_tokens"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of reply text, as it streams."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyDone:
    """The reply ended normally: the whole text and any tool calls."""

    text: str
    tool_calls: tuple[ToolCallRequest, ...] = ()
    stop_reason: StopReason = StopReason.END
    usage: Mapping[str, int] = field(default_factory=dict)


ReplyEvent = TextDelta | ReplyDone


class ProviderFailure(StrEnum):
    """What went wrong with a model call, in terms a user can act on."""

    AUTH = "auth"
    """401/403: the key is wrong, expired or lacks access."""
    UNREACHABLE = "unreachable"
    RATE_LIMITED = "rate_limited"
    NO_TOOL_SUPPORT = "no_tool_support"
    CONTEXT_TOO_LONG = "context_too_long"
    MODEL_NOT_FOUND = "model_not_found"
    STREAM_BROKEN = "stream_broken"
    """The stream ended halfway; ``partial_text`` keeps what arrived."""
    BAD_REQUEST = "bad_request"
    SERVER_ERROR = "server_error"


def failure_remedy(kind: str | None) -> Remedy | None:
    """What the user can do about a model-call failure of this kind (a
    :class:`ProviderFailure` value, as stored with a failed message), if anything."""
    if kind == ProviderFailure.AUTH:
        return Remedy.PROVIDER_KEY
    if kind == ProviderFailure.MODEL_NOT_FOUND:
        return Remedy.PROVIDER_MODEL
    return None


class ProviderError(Exception):
    """A classified model-call failure (never a raw SDK exception past the adapter)."""

    def __init__(
        self,
        kind: ProviderFailure,
        message: str,
        *,
        retry_after: float | None = None,
        partial_text: str = "",
        status: int | None = None,
        waited: bool = False,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retry_after = retry_after
        self.partial_text = partial_text
        self.status = status
        self.waited = waited
        """The provider already waited out one rate limit: nobody waits again."""


class ChatProvider(Protocol):
    """One configured model endpoint.

    ``stream`` yields :class:`TextDelta` pieces then exactly one :class:`ReplyDone`, or raises
    :class:`ProviderError`. Cancelling the consuming task closes the HTTP stream promptly.
    """

    def stream(self, request: ChatRequest) -> AsyncIterator[ReplyEvent]: ...

    async def list_models(self) -> list[str]:
        """The endpoint's model ids (``/v1/models``); empty when it has no list."""
        ...

    async def aclose(self) -> None: ...


class ProviderFactory(Protocol):
    """Builds a provider for a configuration, reading its secrets from the keyring."""

    def __call__(self, config: ProviderConfig) -> ChatProvider: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnResult:
    """What one turn did, once everything it wrote is stored."""

    conversation_id: str
    reply: str
    """The text of the turn's last assistant message."""
    reply_message_id: str | None
    round_ids: tuple[str, ...] = ()
    started_tasks: tuple[str, ...] = ()
    """Operation ids of background tasks the turn started."""
    error: str | None = None
    error_kind: str | None = None
    """The stored kind of the failure (a :class:`ProviderFailure` value, or another kind)."""
    provider: str = ""
    """The name of the provider the turn used."""
    interrupted: bool = False
