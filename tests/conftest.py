"""Suite-wide fixtures: isolation from the user's profile, keyring and display."""

from __future__ import annotations

import compileall
import os
from collections.abc import Iterator

# Before anything imports Qt or keyring: headless Qt and an in-memory keyring for every test.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["PYTHON_KEYRING_BACKEND"] = "tests.helpers.memkeyring.MemoryKeyring"

from pathlib import Path

import pytest
from hypothesis import settings

# Scripted model endpoints (OpenAI / Anthropic wires) for any test: the ``model_endpoint`` fixture.
from tests.helpers.model_endpoints import model_endpoint  # noqa: F401
from tests.helpers.processes import stop_engines_under
from tests.helpers.scripted_model import ScriptedModel

# Timing belongs in bench/: no per-example deadline (a slow CI core is not a failure).
settings.register_profile("mooring", deadline=None, print_blob=True)
settings.load_profile("mooring")


REPO = Path(__file__).resolve().parents[1]


def pytest_configure(config: pytest.Config) -> None:
    """Compile the sources once, in the controlling process, before any test starts a Mooring
    or demo server process. ``make`` sets ``PYTHONDONTWRITEBYTECODE`` (no stray bytecode next to
    the sources), so on a fresh clone every one of the suite's hundreds of child processes
    compiled its modules anew: about a sixth of the end-to-end tests' time."""
    if not hasattr(config, "workerinput"):  # xdist's workers share the controller's files
        for folder in ("app/mooring", "tests", "bench"):
            compileall.compile_dir(REPO / folder, quiet=1)


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


@pytest.fixture(autouse=True)
def no_engine_left(request: pytest.FixtureRequest) -> Iterator[None]:
    """End the engines (``mooring agent run``) a test's commands started in its folders: an
    engine outlives the command that started it, as it does for users."""
    yield
    if "tmp_path" in request.fixturenames:
        stop_engines_under(request.getfixturevalue("tmp_path"))


@pytest.fixture
def chat_model() -> ScriptedModel:
    """The model, scripted: the one thing the chat tests fake. Tests script it (``reply``,
    ``call``, ``fail``, ``hang``) and read ``requests``; the service gets its ``resolve`` and
    ``factory``. The end-to-end tests through the openai/anthropic SDKs swap this fixture for
    scripted HTTP endpoints with the same script API."""
    return ScriptedModel()
