"""``mooring providers …``: the model endpoints a conversation can use.

API keys and header values go to the OS keyring and nowhere else (not SQLite, not the log, not
the terminal); with no usable keyring they are kept for this command only, and the user is told.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import os
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mooring.cli.context import CliContext
from mooring.cli.exit_codes import ExitCode
from mooring.core.chat import (
    PROVIDER_SECRET_SCOPE,
    ChatProvider,
    ChatRequest,
    ChatTurnMessage,
    ProviderConfig,
    ProviderError,
    ProviderFactory,
    ProviderFailure,
    ProviderKind,
    ToolOffer,
)
from mooring.core.conversation import Role
from mooring.core.errors import KnownError
from mooring.core.ids import new_id
from mooring.core.ports import ProviderBook
from mooring.core.providers import api_key_name, header_name

DEFAULT_URLS = {
    ProviderKind.OPENAI: "https://api.openai.com/v1",
    ProviderKind.ANTHROPIC: "https://api.anthropic.com",
}


def _book(ctx: CliContext) -> ProviderBook:
    if ctx.providers is None:
        raise KnownError("Model providers are not available in this build.", code="internal")
    return ctx.providers


def _factory(ctx: CliContext) -> ProviderFactory:
    if ctx.provider_factory is None:
        raise KnownError("Model providers are not available in this build.", code="internal")
    return ctx.provider_factory


def provider_json(config: ProviderConfig, *, default: bool) -> dict[str, Any]:
    """A provider as shown to scripts (secrets: whether they exist, never their values)."""
    return {
        "id": config.id,
        "name": config.name,
        "kind": config.kind.value,
        "base_url": config.base_url,
        "model": config.model,
        "headers": list(config.header_names),
        "api_key": config.has_api_key,
        "default": default,
    }


def _base_url(kind: ProviderKind, given: str | None) -> str:
    url = (given or DEFAULT_URLS[kind]).strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise KnownError(
            f"{given!r} is not an http(s) address.",
            hint="For example --base-url http://127.0.0.1:11434/v1 (Ollama).",
            code="usage",
        )
    if kind is ProviderKind.ANTHROPIC and url.endswith("/v1"):
        url = url[: -len("/v1")]  # the SDK adds /v1/messages itself
    return url


def _headers(values: list[str] | None) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in values or []:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key or any(c.isspace() or c == ":" for c in key):
            raise KnownError(
                "A header should look like NAME=VALUE (e.g. --header HTTP-Referer=https://…).",
                code="usage",
            )
        pairs[key] = value
    return pairs


def _read_key(ctx: CliContext, args: argparse.Namespace) -> str | None:
    if args.api_key_env:
        value = os.environ.get(args.api_key_env, "").strip()
        if not value:
            raise KnownError(
                f"The environment variable {args.api_key_env} is not set or empty.",
                hint="Export the key first, or use --api-key-stdin.",
                code="usage",
            )
        return value
    if args.api_key_stdin:
        if ctx.stdin.isatty():
            value = getpass.getpass("API key (not shown): ", stream=ctx.err).strip()
        else:
            value = ctx.stdin.readline().strip()
        if not value:
            raise KnownError("No API key arrived on standard input.", code="usage")
        return value
    return None


def _durable(ctx: CliContext) -> tuple[bool, str]:
    """Whether secrets written now outlive this command (the keyring adapter's verdict)."""
    status = getattr(ctx.secrets, "status", None)
    return bool(getattr(status, "usable", True)), str(getattr(status, "detail", ""))


async def add(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Add a provider; its key and header values go to the keyring."""
    book = _book(ctx)
    name = args.name.strip()
    if not name:
        raise KnownError("A provider needs a name.", code="usage")
    if await book.find_provider(name) is not None:
        raise KnownError(f"A provider called {name!r} exists already.", code="exists")
    kind = ProviderKind(args.kind)
    model = args.model.strip()
    if not model:
        raise KnownError("Say which model to use with --model.", code="usage")
    headers = _headers(args.header)
    key = _read_key(ctx, args)
    config = ProviderConfig(
        id=new_id(),
        name=name,
        kind=kind,
        base_url=_base_url(kind, args.base_url),
        model=model,
        header_names=tuple(headers),
        has_api_key=key is not None,
    )

    def store_secrets() -> None:
        if key is not None:
            ctx.secrets.set(PROVIDER_SECRET_SCOPE, api_key_name(config.id), key)
        for header, value in headers.items():
            ctx.secrets.set(PROVIDER_SECRET_SCOPE, header_name(config.id, header), value)

    await asyncio.to_thread(store_secrets)
    try:
        became_default = await book.add_provider(config)
    except BaseException:
        await asyncio.to_thread(_forget_secrets, ctx, config)
        raise
    durable, detail = _durable(ctx)
    if (key is not None or headers) and not durable:
        ctx.warn(
            f"mooring: warning: no usable keyring ({detail}): the secrets of {name!r} are kept "
            "for this command only and are gone when it ends. Unlock or install a Secret "
            "Service keyring (`mooring doctor` checks), then add the provider again."
        )
    if ctx.as_json:
        ctx.say(json.dumps(provider_json(config, default=became_default)))
    else:
        tail = "; it is the default" if became_default else ""
        ctx.say(f"Added {name} ({kind.value}: {config.base_url}, model {model}){tail}.")
    return ExitCode.OK


def _forget_secrets(ctx: CliContext, config: ProviderConfig) -> None:
    ctx.secrets.delete(PROVIDER_SECRET_SCOPE, api_key_name(config.id))
    for header in config.header_names:
        ctx.secrets.delete(PROVIDER_SECRET_SCOPE, header_name(config.id, header))


async def _named(ctx: CliContext, name: str | None) -> ProviderConfig:
    book = _book(ctx)
    if name is None:
        config = await book.default_provider()
        if config is None:
            raise KnownError(
                "No model provider is configured.",
                hint="Add one with `mooring providers add NAME --kind openai --base-url URL "
                "--model MODEL`.",
                code="not_found",
            )
        return config
    config = await book.find_provider(name)
    if config is None:
        raise KnownError(f"No provider called {name!r}.", code="not_found")
    return config


async def list_providers(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """List providers, marking the default."""
    book = _book(ctx)
    configs = await book.list_providers()
    default = await book.default_provider()
    default_id = default.id if default else None
    if ctx.as_json:
        rows = [provider_json(c, default=c.id == default_id) for c in configs]
        ctx.say(json.dumps(rows, indent=2))
        return ExitCode.OK
    if not configs:
        ctx.say(
            "No model providers. Add one with `mooring providers add NAME --kind openai "
            "--base-url URL --model MODEL`."
        )
    for c in configs:
        marks = " [default]" if c.id == default_id else ""
        marks += "" if c.has_api_key else " [no key]"
        if c.header_names:
            marks += f" [headers: {', '.join(c.header_names)}]"
        ctx.say(f"{c.name:<16} {c.kind.value:<9} {c.model:<24} {c.base_url}{marks}")
    return ExitCode.OK


async def remove(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Remove a provider and its secrets."""
    config = await _named(ctx, args.name)
    book = _book(ctx)
    await book.remove_provider(config.id)
    await asyncio.to_thread(_forget_secrets, ctx, config)
    successor = await book.default_provider()
    ctx.say(f"Removed {config.name}.")
    if successor is not None:
        ctx.say(f"The default provider is {successor.name}.")
    return ExitCode.OK


async def set_default(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Make a provider the default for new conversations."""
    config = await _named(ctx, args.name)
    await _book(ctx).set_default_provider(config.id)
    ctx.say(f"{config.name} is now the default provider.")
    return ExitCode.OK


async def _build(ctx: CliContext, config: ProviderConfig) -> ChatProvider:
    # Reading the keyring may block (D-Bus): off the event loop.
    return await asyncio.to_thread(_factory(ctx), config)


async def models(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """List the models the endpoint offers."""
    config = await _named(ctx, args.name)
    provider = await _build(ctx, config)
    try:
        found = await provider.list_models()
    except ProviderError as exc:
        raise KnownError(exc.message, code=exc.kind.value) from None
    finally:
        await provider.aclose()
    if ctx.as_json:
        ctx.say(json.dumps({"provider": config.name, "model": config.model, "models": found}))
        return ExitCode.OK
    if not found:
        ctx.say(f"{config.name} does not list its models; {config.model} is configured.")
    for model in found:
        ctx.say(f"{model}{'  (configured)' if model == config.model else ''}")
    return ExitCode.OK


PING = ToolOffer(
    name="mooring_connection_check",
    description="Checks the connection. Do not call it unless asked to.",
    input_schema={"type": "object", "properties": {}},
)


@dataclass
class Verdict:
    """What ``providers test`` found; ``None`` where it could not tell."""

    reachable: bool | None = None
    key_accepted: bool | None = None
    model_found: bool | None = None
    tools_supported: bool | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and all(
            value is not False
            for value in (self.reachable, self.key_accepted, self.model_found, self.tools_supported)
        )


async def _check(config: ProviderConfig, provider: ChatProvider) -> Verdict:
    verdict = Verdict()
    try:
        listed = await provider.list_models()
    except ProviderError as exc:
        if exc.kind is ProviderFailure.UNREACHABLE:
            verdict.reachable = False
            verdict.problems.append(exc.message)
            return verdict
        verdict.reachable = True
        if exc.kind is ProviderFailure.AUTH:
            verdict.key_accepted = False
            verdict.problems.append(exc.message)
            return verdict
    else:
        verdict.reachable = verdict.key_accepted = True
        if listed:
            verdict.model_found = config.model in listed
    request = ChatRequest(
        model=config.model,
        messages=(ChatTurnMessage(role=Role.USER, content="Reply with the single word OK."),),
        tools=(PING,),
        max_tokens=16,
    )
    try:
        async for _event in provider.stream(request):
            pass  # the reply's words do not matter: that it arrived does
    except ProviderError as exc:
        kind = exc.kind
        if kind is ProviderFailure.UNREACHABLE:
            verdict.reachable = False
        elif kind is ProviderFailure.AUTH:
            verdict.key_accepted = False
        elif kind is ProviderFailure.MODEL_NOT_FOUND:
            verdict.model_found = False
        elif kind is ProviderFailure.NO_TOOL_SUPPORT:
            verdict.key_accepted = verdict.key_accepted is not False
            verdict.model_found = True
            verdict.tools_supported = False
        verdict.problems.append(exc.message)
        return verdict
    verdict.reachable = verdict.key_accepted = verdict.model_found = True
    verdict.tools_supported = True
    return verdict


def _word(value: bool | None, yes: str, no: str) -> str:
    return "not checked" if value is None else (yes if value else no)


async def test(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Make one tiny request and say, in plain words, what works."""
    config = await _named(ctx, args.name)
    provider = await _build(ctx, config)
    try:
        verdict = await _check(config, provider)
    finally:
        await provider.aclose()
    if ctx.as_json:
        ctx.say(
            json.dumps(
                {
                    "provider": config.name,
                    "reachable": verdict.reachable,
                    "key_accepted": verdict.key_accepted,
                    "model_found": verdict.model_found,
                    "tools_supported": verdict.tools_supported,
                    "ok": verdict.ok,
                    "error": verdict.problems[0] if verdict.problems else None,
                }
            )
        )
        return ExitCode.OK if verdict.ok else ExitCode.PROBLEM
    key = "accepted" if config.has_api_key else "none configured; the endpoint did not ask for one"
    ctx.say(f"{config.name} ({config.kind.value}, {config.base_url}):")
    ctx.say(f"  reachable:      {_word(verdict.reachable, 'yes', 'no')}")
    ctx.say(f"  API key:        {_word(verdict.key_accepted, key, 'refused')}")
    ctx.say(
        f"  model:          {config.model}: {_word(verdict.model_found, 'available', 'not found')}"
    )
    ctx.say(f"  tool calling:   {_word(verdict.tools_supported, 'supported', 'not supported')}")
    for problem in verdict.problems:
        ctx.say(f"  {problem}")
    if verdict.ok:
        ctx.say(f"{config.name} is ready to chat.")
    return ExitCode.OK if verdict.ok else ExitCode.PROBLEM
