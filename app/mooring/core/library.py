"""What servers offer besides tools: prompts (``prompts/list``, ``prompts/get``) and resources
(``resources/list``, ``resources/templates/list``, ``resources/read``), as plain values.

Every text here came from a server: faces show it inert (never as rich text or markup).
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

PROMPTS: Final = "prompts"
RESOURCES: Final = "resources"


@dataclass(frozen=True, slots=True)
class PromptArgument:
    """One argument a prompt takes (always a string on the wire)."""

    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True, slots=True)
class PromptInfo:
    """A prompt a server lists."""

    server_id: str
    server_alias: str
    name: str
    title: str = ""
    description: str = ""
    arguments: tuple[PromptArgument, ...] = ()

    @property
    def label(self) -> str:
        """``server/name``: how a person names it."""
        return f"{self.server_alias}/{self.name}"


@dataclass(frozen=True, slots=True)
class PromptMessage:
    """One message of a prompt: its role (``user`` or ``assistant``) and its text (content
    other than text described in words: ``[image: image/png, ~2048 bytes]``)."""

    role: str
    text: str


@dataclass(frozen=True, slots=True)
class PromptText:
    """What ``prompts/get`` returned."""

    prompt: str
    description: str
    messages: tuple[PromptMessage, ...]

    @property
    def text(self) -> str:
        """The messages' text, one after another (what goes in the composer)."""
        return "\n\n".join(m.text for m in self.messages if m.text)


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """A resource a server lists, or a resource template (``template``: ``uri`` is an RFC 6570
    template such as ``mooring-demo://imports/{task_id}/report``)."""

    server_id: str
    server_alias: str
    uri: str
    name: str = ""
    title: str = ""
    description: str = ""
    mime_type: str | None = None
    template: bool = False

    @property
    def label(self) -> str:
        """``server:uri``: how a person names it."""
        return f"{self.server_alias}:{self.uri}"


@dataclass(frozen=True, slots=True)
class Unlisted:
    """A list could not be read from the server; ``reason`` says why, in words."""

    reason: str


@dataclass(frozen=True, slots=True)
class PromptUnavailable:
    """``prompts/get`` failed; ``reason`` says why, in words."""

    reason: str


PromptOutcome = PromptText | PromptUnavailable


def missing_arguments(prompt: PromptInfo, given: dict[str, str]) -> list[str]:
    """The required arguments of ``prompt`` that ``given`` lacks (or leaves empty)."""
    return [a.name for a in prompt.arguments if a.required and not given.get(a.name)]


def arguments_schema(prompt: PromptInfo) -> dict[str, Any]:
    """A JSON schema of a prompt's arguments (all strings), for a form."""
    return {
        "type": "object",
        "properties": {
            a.name: {"type": "string", "title": a.name, "description": a.description}
            for a in prompt.arguments
        },
        "required": [a.name for a in prompt.arguments if a.required],
    }


def content_text(block: dict[str, Any]) -> str:
    """One content block of a prompt message as text: text as it is, anything else described
    (never its raw data)."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text") or "")
    if kind in ("image", "audio"):
        size = len(str(block.get("data") or "")) * 3 // 4
        return f"[{kind}: {block.get('mimeType') or 'unknown type'}, ~{size} bytes]"
    if kind == "resource_link":
        return f"[resource link: {block.get('uri', '')} {block.get('name', '')}]".replace(" ]", "]")
    if kind == "resource":
        resource = block.get("resource")
        if isinstance(resource, dict):
            if isinstance(resource.get("text"), str):
                return f"[resource {resource.get('uri', '')}]\n{resource['text']}"
            return f"[binary resource {resource.get('uri', '')}]"
    return f"[{kind or 'unknown'} content]"


_VARIABLE = re.compile(r"\{([^{}]+)\}")


def template_variables(uri: str) -> list[str]:
    """The variables of a resource template (RFC 6570 simple expressions: ``{task_id}``;
    an operator is dropped, ``{a,b}`` gives both), in order, each once."""
    names: list[str] = []
    for expression in _VARIABLE.findall(uri):
        for name in expression.lstrip("+#./;?&").split(","):
            name = name.strip().rstrip("*").split(":")[0]
            if name and name not in names:
                names.append(name)
    return names


def expand_template(uri: str, values: Mapping[str, str]) -> str:
    """A resource template with its simple variables filled in (each value percent-encoded)."""

    def fill(match: re.Match[str]) -> str:
        names = [n.strip().rstrip("*").split(":")[0] for n in match.group(1).split(",")]
        return ",".join(urllib.parse.quote(values.get(n, ""), safe="") for n in names)

    return _VARIABLE.sub(fill, uri)


def template_schema(resource: ResourceInfo) -> dict[str, Any]:
    """A JSON schema of a resource template's variables (all required strings), for a form."""
    names = template_variables(resource.uri)
    return {
        "type": "object",
        "properties": {name: {"type": "string", "title": name} for name in names},
        "required": names,
    }


@dataclass(frozen=True, slots=True)
class Attachment:
    """A resource attached to a user's message: its text as read when it was attached, at
    most :data:`ATTACHMENT_LIMIT` characters (``truncated``: there was more)."""

    server_alias: str
    uri: str
    text: str
    truncated: bool = False


ATTACHMENT_LIMIT: Final = 32_000
"""At most this many characters of an attached resource go to the model."""


def with_attachments(text: str, attachments: Sequence[Attachment]) -> str:
    """A user's message with the text of the resources attached to it: after the message, each
    marked as a resource (its server and URI, and whether it was cut) so neither the model nor
    a reader takes it for the user's own words."""
    parts = [text] if text else []
    for attached in attachments:
        cut = f", cut at {ATTACHMENT_LIMIT:,} characters" if attached.truncated else ""
        parts.append(
            f"[Attached resource {attached.server_alias}:{attached.uri}{cut}]\n"
            f"{attached.text}\n[End of {attached.uri}]"
        )
    return "\n\n".join(parts)
