"""Suite-wide fixtures: isolation from the user's profile, keyring and display."""

from __future__ import annotations

import os

# Before anything imports Qt or keyring: headless Qt and an in-memory keyring for every test.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["PYTHON_KEYRING_BACKEND"] = "tests.helpers.memkeyring.MemoryKeyring"

from pathlib import Path

import pytest
from hypothesis import settings

# Scripted model endpoints (OpenAI / Anthropic wires) for any test: the ``model_endpoint`` fixture.
from tests.helpers.model_endpoints import model_endpoint  # noqa: F401
from tests.helpers.scripted_model import ScriptedModel

# Timing belongs in bench/: no per-example deadline (a slow CI core is not a failure).
settings.register_profile("mooring", deadline=None, print_blob=True)
settings.load_profile("mooring")


@pytest.fixture
def anyio_backend() -> str:
    """Async tests run on asyncio (the loop qasync drives in the app)."""
    return "asyncio"


@pytest.fixture(autouse=True)
def isolated_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own data directory; none touches the real user profile."""
    data = tmp_path / "mooring-data"
    monkeypatch.setenv("MOORING_DATA_DIR", str(data))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "home" / ".local" / "share"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "home" / ".local" / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home" / ".cache"))
    return data


@pytest.fixture
def chat_model() -> ScriptedModel:
    """The model, scripted: the one thing the chat tests fake. Tests script it (``reply``,
    ``call``, ``fail``, ``hang``) and read ``requests``; the service gets its ``resolve`` and
    ``factory``. The end-to-end tests through the openai/anthropic SDKs swap this fixture for
    scripted HTTP endpoints with the same script API."""
    return ScriptedModel()
