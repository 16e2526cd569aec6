"""Alembic migrations for Mooring's database.

``REVISIONS`` lists every revision in order, so opening an up-to-date database needs no Alembic
import; a test checks it against the scripts.
"""

REVISIONS: tuple[str, ...] = (
    "0001",
    "0002",
    "0003",
    "0004",
    "0005",
    "0006",
    "0007",
    "0008",
    "0009",
    "0010",
    "0011",
    "0012",
    "0013",
    "0014",
    "0015",
    "0016",
    "0017",
    "0018",
)
HEAD = REVISIONS[-1]
