"""Provider configurations in a real SQLite file: names, the default, no secrets."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mooring.core.chat import ProviderConfig, ProviderKind
from mooring.core.clock import SystemClock
from mooring.core.errors import KnownError
from mooring.core.ids import new_id
from mooring.storage.db import Database
from mooring.storage.providers import SqlProviderBook

pytestmark = pytest.mark.anyio


def config(name: str, kind: ProviderKind = ProviderKind.OPENAI) -> ProviderConfig:
    return ProviderConfig(
        id=new_id(),
        name=name,
        kind=kind,
        base_url="http://127.0.0.1:11434/v1",
        model="llama3.2",
        header_names=("X-Team",),
        has_api_key=True,
    )


async def test_a_provider_round_trips_with_header_names_only(db: Database) -> None:
    book = SqlProviderBook(db, SystemClock())
    local = config("local")
    assert await book.add_provider(local) is True
    assert await book.get_provider(local.id) == local
    assert await book.find_provider("local") == local
    assert await book.find_provider("other") is None
    assert await book.list_providers() == [local]


async def test_the_first_provider_is_the_default_and_the_default_can_move(db: Database) -> None:
    book = SqlProviderBook(db, SystemClock())
    first, second = config("first"), config("second", ProviderKind.ANTHROPIC)
    assert await book.add_provider(first) is True
    assert await book.add_provider(second) is False
    assert await book.default_provider() == first
    await book.set_default_provider(second.id)
    assert await book.default_provider() == second


async def test_removing_the_default_hands_it_to_the_oldest_remaining(db: Database) -> None:
    book = SqlProviderBook(db, SystemClock())
    a, b, c = config("c-oldest"), config("b-middle"), config("a-newest")
    for item in (a, b, c):
        await book.add_provider(item)
    await book.remove_provider(a.id)
    assert await book.default_provider() == b
    await book.remove_provider(c.id)
    assert await book.default_provider() == b
    await book.remove_provider(b.id)
    assert await book.default_provider() is None
    assert await book.list_providers() == []


async def test_a_taken_name_is_a_clear_error_and_keeps_the_first(db: Database) -> None:
    book = SqlProviderBook(db, SystemClock())
    original = config("local")
    await book.add_provider(original)
    with pytest.raises(KnownError, match="exists already"):
        await book.add_provider(config("local"))
    assert await book.list_providers() == [original]


async def test_an_edited_provider_keeps_its_id_and_default_and_a_variable_name_only(
    db: Database,
) -> None:
    book = SqlProviderBook(db, SystemClock())
    local, other = config("local"), config("other")
    await book.add_provider(local)
    await book.add_provider(other)
    edited = replace(local, name="hosted", model="gpt-5", has_api_key=False, api_key_env="KEY")
    await book.update_provider(edited)
    assert await book.get_provider(local.id) == edited
    assert await book.default_provider() == edited
    with pytest.raises(KnownError) as taken:
        await book.update_provider(replace(edited, name="other"))
    assert taken.value.code == "exists"
    with pytest.raises(KnownError) as gone:
        await book.update_provider(replace(edited, id=new_id(), name="nobody"))
    assert gone.value.code == "not_found"
