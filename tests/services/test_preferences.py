"""The preference desks every face shares: providers, rules, settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from mooring.core.approval.rules import Decision, Scope
from mooring.core.chat import PROVIDER_SECRET_SCOPE, ProviderKind
from mooring.core.errors import KnownError
from mooring.core.providers import KeySource, ProviderDraft, api_key_name
from mooring.settings.editor import SettingsEditor, parse_setting
from mooring.settings.store import Settings, load_settings, save_settings
from tests.helpers.model_endpoints import ModelEndpoint
from tests.services.conftest import HostFactory, demo_definition

pytestmark = pytest.mark.anyio


async def test_a_provider_with_a_bad_address_is_refused_and_nothing_is_stored(
    hosts: HostFactory,
) -> None:
    host = await hosts()
    desk = host.host.provider_desk
    assert desk is not None
    draft = ProviderDraft("p", ProviderKind.OPENAI, "m", base_url="ftp://x", api_key="sk-secret")
    with pytest.raises(KnownError, match="is not an http"):
        await desk.add(draft)
    assert await desk.providers() == []


async def test_removing_a_provider_deletes_its_key_and_names_the_next_default(
    hosts: HostFactory, model_endpoint: ModelEndpoint
) -> None:
    host = await hosts()
    desk = host.host.provider_desk
    assert desk is not None
    url = model_endpoint.openai_url
    first = await desk.add(ProviderDraft("first", ProviderKind.OPENAI, "m", url, "sk-1"))
    second = await desk.add(ProviderDraft("second", ProviderKind.OPENAI, "m", url, "sk-2"))
    assert first.became_default
    assert not second.became_default
    with pytest.raises(KnownError, match="exists already"):
        await desk.add(ProviderDraft("first", ProviderKind.OPENAI, "m", url))
    successor = await desk.remove(first.config)
    assert successor is not None
    assert successor.name == "second"
    secrets = host.host.secrets
    assert secrets.get(PROVIDER_SECRET_SCOPE, api_key_name(first.config.id)) is None
    assert secrets.get(PROVIDER_SECRET_SCOPE, api_key_name(second.config.id)) == "sk-2"


async def test_a_conversation_rule_is_refused_outside_a_conversation(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    server = demo_definition(tmp_path / "store", tmp_path / "log")
    await host.store.add_server(server)
    with pytest.raises(KnownError, match="from a conversation"):
        await host.host.rule_desk.add(server, "*", Decision.ALLOW, Scope.CONVERSATION)
    with pytest.raises(KnownError, match="Say which tool"):
        await host.host.rule_desk.add(server, "  ", Decision.ALLOW, Scope.ALWAYS)
    assert await host.host.rule_desk.rules() == []


def test_a_typed_value_is_checked_against_its_declaration() -> None:
    assert parse_setting("notifications.show_names", "yes") is True
    assert parse_setting("notifications.when", "never") == "never"
    with pytest.raises(KnownError, match="takes always or when_inactive or never, not 'soon'"):
        parse_setting("notifications.when", "soon")
    with pytest.raises(KnownError, match="No setting called"):
        parse_setting("no.such", "1")


async def test_a_setting_saved_keeps_a_change_made_meanwhile_elsewhere(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    live = Settings()
    editor = SettingsEditor(path, live)
    elsewhere = Settings()
    elsewhere.set("chat.continue_automatically", True)
    save_settings(path, elsewhere)  # `mooring settings set` in another process

    await editor.set("notifications.when", "always")
    stored = load_settings(path)
    assert stored.get("notifications.when") == "always"
    assert stored.get("chat.continue_automatically") is True
    assert live.get("notifications.when") == "always"
    with pytest.raises(KnownError):
        await editor.set("notifications.when", "soon")
    assert load_settings(path).get("notifications.when") == "always"


async def test_editing_a_providers_key_moves_it_between_the_keyring_and_a_variable(
    hosts: HostFactory, model_endpoint: ModelEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = await hosts()
    desk = host.host.provider_desk
    assert desk is not None
    url = model_endpoint.openai_url
    added = await desk.add(ProviderDraft("p", ProviderKind.OPENAI, "m", url, "sk-kept"))
    secrets = host.host.secrets
    key = api_key_name(added.config.id)
    [view] = await desk.providers()
    assert view.key is KeySource.KEYRING

    kept = await desk.edit(added.config, ProviderDraft("p", ProviderKind.OPENAI, "m2", url))
    assert (kept.model, kept.has_api_key) == ("m2", True)
    assert secrets.get(PROVIDER_SECRET_SCOPE, key) == "sk-kept"

    monkeypatch.delenv("MOORING_TEST_P_KEY", raising=False)
    by_name = await desk.edit(
        kept, ProviderDraft("p", ProviderKind.OPENAI, "m2", url, api_key_env="MOORING_TEST_P_KEY")
    )
    assert (by_name.has_api_key, by_name.api_key_env) == (False, "MOORING_TEST_P_KEY")
    assert secrets.get(PROVIDER_SECRET_SCOPE, key) is None  # no copy left behind
    [view] = await desk.providers()
    assert view.key is KeySource.ENV_UNSET
    assert not view.key_usable
    monkeypatch.setenv("MOORING_TEST_P_KEY", "sk-from-env")
    [view] = await desk.providers()
    assert view.key is KeySource.ENV

    with pytest.raises(KnownError, match="not an environment variable name"):
        await desk.edit(
            by_name, ProviderDraft("p", ProviderKind.OPENAI, "m2", url, api_key_env="1 bad")
        )
