"""``mooring providers …``: the model endpoints a conversation can use.

API keys and header values go to the OS keyring and nowhere else (not SQLite, not the log, not
the terminal); with no usable keyring they are kept for this command only, and the user is told.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
from typing import Any

from mooring.cli.context import CliContext
from mooring.cli.exit_codes import ExitCode
from mooring.core.chat import ProviderConfig, ProviderKind
from mooring.core.errors import KnownError
from mooring.core.host_api import ProviderDeskApi
from mooring.core.providers import ProviderDraft


def _desk(ctx: CliContext) -> ProviderDeskApi:
    desk = ctx.host.provider_desk
    if desk is None:
        raise KnownError("Model providers are not available in this build.", code="internal")
    return desk


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


async def _durable(ctx: CliContext) -> tuple[bool, str]:
    """Whether secrets written now outlive this command (the keyring adapter's verdict)."""
    return await ctx.host.secrets_durable()


async def add(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Add a provider; its key and header values go to the keyring."""
    draft = ProviderDraft(
        name=args.name,
        kind=ProviderKind(args.kind),
        model=args.model,
        base_url=args.base_url,
        api_key=_read_key(ctx, args),
        headers=_headers(args.header),
    )
    added = await _desk(ctx).add(draft)
    config = added.config
    durable, detail = await _durable(ctx)
    if (config.has_api_key or config.header_names) and not durable:
        ctx.warn(
            f"mooring: warning: no usable keyring ({detail}): the secrets of {config.name!r} are "
            "kept for this command only and are gone when it ends. Unlock or install a Secret "
            "Service keyring (`mooring doctor` checks), then add the provider again."
        )
    if ctx.as_json:
        ctx.say(json.dumps(provider_json(config, default=added.became_default)))
    else:
        tail = "; it is the default" if added.became_default else ""
        ctx.say(
            f"Added {config.name} ({config.kind.value}: {config.base_url}, model "
            f"{config.model}){tail}."
        )
    return ExitCode.OK


async def _named(ctx: CliContext, name: str | None) -> ProviderConfig:
    return await _desk(ctx).find(name)


async def list_providers(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """List providers, marking the default."""
    views = await _desk(ctx).providers()
    configs = [v.config for v in views]
    default_id = next((v.config.id for v in views if v.default), None)
    if ctx.as_json:
        rows = [provider_json(v.config, default=v.default) for v in views]
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
    successor = await _desk(ctx).remove(config)
    ctx.say(f"Removed {config.name}.")
    if successor is not None:
        ctx.say(f"The default provider is {successor.name}.")
    return ExitCode.OK


async def set_default(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Make a provider the default for new conversations."""
    config = await _named(ctx, args.name)
    await _desk(ctx).set_default(config)
    ctx.say(f"{config.name} is now the default provider.")
    return ExitCode.OK


async def models(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """List the models the endpoint offers."""
    config = await _named(ctx, args.name)
    found = await _desk(ctx).models(config)
    if ctx.as_json:
        ctx.say(json.dumps({"provider": config.name, "model": config.model, "models": found}))
        return ExitCode.OK
    if not found:
        ctx.say(f"{config.name} does not list its models; {config.model} is configured.")
    for model in found:
        ctx.say(f"{model}{'  (configured)' if model == config.model else ''}")
    return ExitCode.OK


def _word(value: bool | None, yes: str, no: str) -> str:
    return "not checked" if value is None else (yes if value else no)


async def test(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Make one tiny request and say, in plain words, what works."""
    config = await _named(ctx, args.name)
    verdict = await _desk(ctx).test(config)
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
