"""Storage fixtures: a real SQLite file in the test's own folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mooring.storage.db import Database


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "mooring.sqlite3"


@pytest.fixture
def db(db_path: Path) -> Iterator[Database]:
    database = Database.open(db_path)
    yield database
    database.close()
