"""A conversation worth looking at: a reply with a code block, regenerated once (two versions).

Used by the AT-SPI check of the chat controls and by ``make screenshots``; ``run`` runs one
``mooring`` command in the data folder and returns its standard output (failing if it fails).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from tests.helpers.model_endpoints import ModelEndpoint, Text

FIRST = (
    "Here is one way to add them up:\n\n"
    "```python\n"
    "def total(rows):\n"
    '    """The sum of every row\'s amount."""\n'
    "    return sum(row.amount for row in rows)\n"
    "```\n\n"
    "It reads each row once."
)
SECOND = (
    "A shorter way, with a generator expression:\n\n"
    "```python\n"
    "total = sum(row.amount for row in rows)\n"
    'print(f"{total:.2f} EUR")\n'
    "```\n\n"
    "Both give the same figure; the first is easier to test."
)
QUESTION = "How do I add up the amounts of my supplier rows in Python?"


def seed_versions(run: Callable[..., str], endpoint: ModelEndpoint) -> str:
    """Ask, then regenerate the reply: the conversation's id."""
    endpoint.script(Text(FIRST, chunk=40), Text(SECOND, chunk=40))
    asked = json.loads(run("chat", "--json", QUESTION))
    conversation_id = str(asked["conversation_id"])
    run("conversations", "regenerate", conversation_id)
    return conversation_id
