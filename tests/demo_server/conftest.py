"""Fixtures for driving the demo server as a real subprocess (stdio and Streamable HTTP)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.demo_server.helpers import HttpServer, Servers, write_large_csv


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[Servers]:
    """Starts HTTP demo servers on loopback; stops each by pid at teardown."""
    started = Servers(tmp_path)
    try:
        yield started
    finally:
        started.stop_all()


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    """A fresh SQLite store file for the server under test."""
    return tmp_path / "store.sqlite3"


@pytest.fixture(scope="session")
def medium_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated 6,000-row supplier file (every 1000th row invalid): big enough to interrupt."""
    return write_large_csv(tmp_path_factory.mktemp("samples") / "suppliers_medium.csv", 6000)


@pytest.fixture(scope="module")
def shared_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """One HTTP server (with the conformance fixtures) shared by a module's read-mostly tests."""
    started = Servers(tmp_path_factory.mktemp("shared-http"))
    try:
        yield started.http("--conformance-fixtures")
    finally:
        started.stop_all()
