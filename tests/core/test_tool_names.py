"""Model-safe tool names: accepted by every provider, unique, mapped back exactly, stable."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from mooring.core.tool_names import MAX_NAME, ToolKey, assign_names, is_model_safe

names = st.text(min_size=1, max_size=90)
entries = st.lists(
    st.tuples(names, st.sampled_from(["s1", "s2", "s3", "s4"]), names),
    max_size=30,
    unique_by=lambda e: (e[1], e[2]),
)


def as_pairs(items: list[tuple[str, str, str]]) -> list[tuple[str, ToolKey]]:
    aliases = {"s1": "", "s2": "", "s3": "", "s4": ""}
    for alias, server_id, _ in items:
        aliases[server_id] = aliases[server_id] or alias  # one alias per server
    return [(aliases[server_id], ToolKey(server_id, tool)) for _, server_id, tool in items]


@given(entries)
def test_every_tool_gets_a_safe_unique_name_that_maps_back_exactly(
    items: list[tuple[str, str, str]],
) -> None:
    pairs = as_pairs(items)
    named = assign_names(pairs)
    assert sorted(named.values()) == sorted(key for _, key in pairs)
    assert all(is_model_safe(name) and len(name) <= MAX_NAME for name in named)


@given(entries, st.randoms())
def test_names_do_not_depend_on_the_order_tools_are_listed_in(
    items: list[tuple[str, str, str]], rng: random.Random
) -> None:
    pairs = as_pairs(items)
    shuffled = list(pairs)
    rng.shuffle(shuffled)
    assert assign_names(pairs) == assign_names(shuffled)


def test_the_same_tool_on_two_servers_gets_two_names() -> None:
    named = assign_names(
        [("files", ToolKey("a", "read")), ("docs", ToolKey("b", "read"))],
    )
    assert named == {"files__read": ToolKey("a", "read"), "docs__read": ToolKey("b", "read")}


def test_names_that_clean_up_alike_are_told_apart() -> None:
    one, two = ToolKey("a", "get.item"), ToolKey("b", "get/item")
    named = assign_names([("my.server", one), ("my server", two)])
    assert sorted(named.values()) == [one, two]
    assert all(name.startswith("my_server__get_item_") for name in named)


def test_a_plain_name_is_kept_readable() -> None:
    key = ToolKey("a", "import_suppliers")
    assert assign_names([("demo", key)]) == {"demo__import_suppliers": key}
