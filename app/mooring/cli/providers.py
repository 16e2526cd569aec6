"""``mooring providers …``: the model endpoints a conversation can use.

API keys and header values go to the OS keyring and nowhere else (not SQLite, not the log, not
the terminal). With no usable keyring, a key given with ``--api-key-env VAR`` is remembered by
the variable's *name* and read at each use; other secrets are kept for this command only, and
the user is told.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
from dataclasses import replace
from typing import Any

from mooring.cli.context import CliContext
from mooring.cli.exit_codes import ExitCode
from mooring.cli.remedies import remedy_words
from mooring.core.chat import ProviderConfig, ProviderKind
from mooring.core.errors import KnownError
from mooring.core.host_api import ProviderDeskApi
from mooring.core.providers import KeySource, ProviderDraft, ProviderView


def _desk(ctx: CliContext) -> ProviderDeskApi:
    desk = ctx.host.provider_desk
    if desk is None:
        raise KnownError("Model providers are not available in this build.", code="internal")
    return desk


def provider_json(
    config: ProviderConfig, *, default: bool, key: KeySource | None = None
) -> dict[str, Any]:
    """A provider as shown to scripts (secrets: whether they exist, never their values)."""
    shown: dict[str, Any] = {
        "id": config.id,
        "name": config.name,
        "kind": config.kind.value,
        "base_url": config.base_url,
        "model": config.model,
        "headers": list(config.header_names),
        "api_key": config.key_configured,
        "api_key_env": config.api_key_env,
        "default": default,
    }
    if key is not None:
        shown["key"] = key.value
    return shown


def key_words(view: ProviderView) -> str:
    """Where a provider's key comes from, for ``providers list`` ("" for none needed)."""
    config = view.config
    return {
        KeySource.NONE: "",
        KeySource.KEYRING: "",
        KeySource.SESSION: " [key: kept until Mooring's engine stops; no keyring]",
        KeySource.LOST: " [key: LOST, no keyring kept it]",
        KeySource.ENV: f" [key: from ${config.api_key_env}, set]",
        KeySource.ENV_UNSET: f" [key: from ${config.api_key_env}, NOT SET]",
    }[view.key]


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


def _address(kind: ProviderKind, args: argparse.Namespace) -> str | None:
    """The address to store: ``--base-url``, or a local model's ``--model-path``."""
    adding = getattr(args, "providers_command", "add") == "add"
    if kind is ProviderKind.LOCAL:
        if args.base_url:
            raise KnownError(
                "A local model has no address: give its file with --model-path FILE.gguf.",
                code="usage",
            )
        if not args.model_path and adding:
            raise KnownError(
                "Say which model file to run: --model-path FILE.gguf.",
                hint="docs/local-models.md lists small models that work well.",
                code="usage",
            )
        return args.model_path or None
    if args.model_path:
        raise KnownError("--model-path is for --kind local only.", code="usage")
    if not args.model and adding:
        raise KnownError("Say which model to use: --model MODEL.", code="usage")
    return args.base_url or None


async def _durable(ctx: CliContext) -> tuple[bool, str]:
    """Whether secrets written now outlive this command (the keyring adapter's verdict)."""
    return await ctx.host.secrets_durable()


async def _key_fields(ctx: CliContext, args: argparse.Namespace) -> dict[str, Any]:
    """The draft's key fields: a key read now (to the keyring), or, with no usable keyring
    and ``--api-key-env``, the variable's name (read at each use; no secret stored)."""
    key = _read_key(ctx, args)
    if key is None:
        return {}
    if args.api_key_env:
        durable, _detail = await _durable(ctx)
        if not durable:
            return {"api_key_env": args.api_key_env}
    return {"api_key": key, "keep_for_session": True}


def _say_key(ctx: CliContext, config: ProviderConfig) -> None:
    if config.api_key_env:
        ctx.say(
            f"No usable keyring: its key is read from ${config.api_key_env} each time it is "
            "used (only the variable's name is stored). Keep it set where Mooring runs."
        )


async def add(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Add a provider; its key and header values go to the keyring (with no keyring, a key
    from ``--api-key-env`` is read from that variable at each use)."""
    kind = ProviderKind(args.kind)
    draft = ProviderDraft(
        name=args.name,
        kind=kind,
        model=args.model or "",
        base_url=_address(kind, args),
        headers=_headers(args.header),
        **await _key_fields(ctx, args),
    )
    added = await _desk(ctx).add(draft)
    config = added.config
    durable, detail = await _durable(ctx)
    if (config.has_api_key or config.header_names) and not durable:
        ctx.warn(
            f"mooring: warning: no usable keyring ({detail}): the secrets of {config.name!r} are "
            "kept for this command only and are gone when it ends. Unlock or install a Secret "
            "Service keyring (`mooring doctor` checks), or pass the key with --api-key-env VAR "
            "(read at each use)."
        )
    if ctx.as_json:
        ctx.say(json.dumps(provider_json(config, default=added.became_default)))
    else:
        tail = "; it is the default" if added.became_default else ""
        ctx.say(
            f"Added {config.name} ({config.kind.value}: {config.base_url}, model "
            f"{config.model}){tail}."
        )
        _say_key(ctx, config)
    return ExitCode.OK


async def edit(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """Change a provider's name, kind, address, model or key (what is not given is kept)."""
    config = await _named(ctx, args.name)
    kind = ProviderKind(args.kind) if args.kind else config.kind
    address = _address(kind, args)
    draft = ProviderDraft(
        name=args.rename or config.name,
        kind=kind,
        # A local model given a new file (or newly local) is called by its file's name.
        model=args.model
        or (
            ""
            if kind is ProviderKind.LOCAL and (address or kind is not config.kind)
            else config.model
        ),
        base_url=address or (config.base_url if kind is config.kind else None),
        **await _key_fields(ctx, args),
    )
    if not (draft.api_key or draft.api_key_env) and config.api_key_env:
        draft = replace(draft, api_key_env=config.api_key_env)  # kept as it was
    edited = await _desk(ctx).edit(config, draft)
    if ctx.as_json:
        views = await _desk(ctx).providers()
        default = any(v.default for v in views if v.config.id == edited.id)
        ctx.say(json.dumps(provider_json(edited, default=default)))
        return ExitCode.OK
    ctx.say(f"Saved {edited.name} ({edited.kind.value}: {edited.base_url}, model {edited.model}).")
    if draft.api_key_env != config.api_key_env:
        _say_key(ctx, edited)
    return ExitCode.OK


async def _named(ctx: CliContext, name: str | None) -> ProviderConfig:
    return await _desk(ctx).find(name)


async def list_providers(ctx: CliContext, args: argparse.Namespace) -> ExitCode:
    """List providers, marking the default."""
    views = await _desk(ctx).providers()
    configs = [v.config for v in views]
    default_id = next((v.config.id for v in views if v.default), None)
    if ctx.as_json:
        rows = [provider_json(v.config, default=v.default, key=v.key) for v in views]
        ctx.say(json.dumps(rows, indent=2))
        return ExitCode.OK
    if not configs:
        ctx.say(
            "No model providers. Add one with `mooring providers add NAME --kind openai "
            "--base-url URL --model MODEL`."
        )
    for view in views:
        c = view.config
        marks = " [default]" if c.id == default_id else ""
        marks += " [no key]" if view.key is KeySource.NONE else key_words(view)
        if c.header_names:
            marks += f" [headers: {', '.join(c.header_names)}]"
        ctx.say(f"{c.name:<16} {c.kind.value:<9} {c.model:<24} {c.base_url}{marks}")
    lost = [v.config.name for v in views if not v.key_usable]
    if lost:
        ctx.warn(
            f"mooring: {', '.join(lost)}: requests would go without a key. Give "
            + ("it" if len(lost) == 1 else "each")
            + " one with `mooring providers edit NAME --api-key-env VAR` (or --api-key-stdin), "
            "or set the variable where Mooring runs."
        )
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
    key = (
        "accepted" if config.key_configured else "none configured; the endpoint did not ask for one"
    )
    ctx.say(f"{config.name} ({config.kind.value}, {config.base_url}):")
    ctx.say(f"  reachable:      {_word(verdict.reachable, 'yes', 'no')}")
    ctx.say(f"  API key:        {_word(verdict.key_accepted, key, 'refused')}")
    ctx.say(
        f"  model:          {config.model}: {_word(verdict.model_found, 'available', 'not found')}"
    )
    ctx.say(f"  tool calling:   {_word(verdict.tools_supported, 'supported', 'not supported')}")
    for problem in verdict.problems:
        ctx.say(f"  {problem}")
    advice = remedy_words(verdict.remedy, (config.name,))
    if advice:
        ctx.say(f"  {advice}")
    if verdict.ok:
        ctx.say(f"{config.name} is ready to chat.")
    return ExitCode.OK if verdict.ok else ExitCode.PROBLEM
