"""Starting Mooring's own programs again, from Python or from a frozen bundle.

In a PyInstaller bundle ``sys.executable`` is the bundle's ``mooring``, which cannot run
``python -m``: the bundled demo server and the autostart monitor must be entries of the bundle.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import mooring
from mooring.adapters.launcher import (
    demo_server_command,
    local_model_command,
    mooring_command,
    restore_host_environment,
)
from mooring.adapters.providers.local import LocalModelRuntime
from mooring.bootstrap import demo_server_command as configured_demo_server
from mooring.cli.autostart_cmd import monitor_command
from mooring.settings.paths import resolve_paths
from tests.helpers.local_model import smol_model
from tests.helpers.processes import run_mooring

BUNDLE_EXE = "/opt/Mooring Bundle/mooring"


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch) -> str:
    """This process looks like PyInstaller's bundle executable (as ``sys`` says in one)."""
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", BUNDLE_EXE)
    return BUNDLE_EXE


def test_from_python_the_demo_server_runs_as_a_module_of_this_interpreter(tmp_path: Path) -> None:
    store = tmp_path / "demo.sqlite3"
    assert demo_server_command(store, frozen=False) == (
        sys.executable,
        ("-m", "mooring.demo_server", "--store", str(store)),
    )
    assert mooring_command("tasks", frozen=False) == [sys.executable, "-m", "mooring", "tasks"]


def test_in_a_bundle_the_demo_server_is_an_entry_of_the_bundle_never_python(
    tmp_path: Path, frozen: str
) -> None:
    paths = resolve_paths(tmp_path / "data")
    command, args = configured_demo_server(paths)
    assert (command, args) == (frozen, ("demo-server", "--store", str(paths.demo_store)))
    assert "-m" not in args


def test_in_a_bundle_autostart_runs_the_bundle_itself(tmp_path: Path, frozen: str) -> None:
    paths = resolve_paths(tmp_path / "data")
    assert monitor_command(paths) == [
        frozen,
        "agent",
        "run",
        "--data-dir",
        str(paths.data_dir),
    ]


def test_a_fresh_data_folder_in_a_bundle_configures_the_bundle_entry(tmp_path: Path) -> None:
    # The first use of a data folder stores the command line the window and CLI will start.
    script = (
        "import sys; sys.frozen = True; sys.executable = sys.argv[1];"
        "from mooring.bootstrap import main; raise SystemExit(main(sys.argv[2:]))"
    )
    data = tmp_path / "data"
    done = subprocess.run(
        [sys.executable, "-c", script, BUNDLE_EXE, "servers", "list", "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "MOORING_DATA_DIR": str(data)},
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    [server] = json.loads(done.stdout)
    assert (server["name"], server["builtin"], server["command"]) == ("demo", True, BUNDLE_EXE)
    assert server["args"] == ["demo-server", "--store", str(data / "demo-server.sqlite3")]


def test_after_mooring_moved_the_demo_server_starts_from_the_new_place(tmp_path: Path) -> None:
    # First used from a bundle that is gone now (run from dist/, then installed elsewhere):
    # the next launch starts the demo server the way this installation does.
    script = (
        "import sys; sys.frozen = True; sys.executable = sys.argv[1];"
        "from mooring.bootstrap import main; raise SystemExit(main(sys.argv[2:]))"
    )
    data = tmp_path / "data"
    gone = str(tmp_path / "old bundle" / "mooring")
    first = subprocess.run(
        [sys.executable, "-c", script, gone, "servers", "list"],
        capture_output=True,
        text=True,
        env={**os.environ, "MOORING_DATA_DIR": str(data)},
        timeout=60,
        check=False,
    )
    assert first.returncode == 0, first.stderr
    [before] = json.loads(run_mooring("servers", "list", "--json", data_dir=data).stdout)
    assert before["command"] == sys.executable  # this installation, no longer the old bundle
    assert before["args"][:2] == ["-m", "mooring.demo_server"]
    tools = run_mooring("tools", "list", "demo", "--json", data_dir=data, timeout=90)
    assert tools.returncode == 0, tools.stderr
    assert "import_suppliers" in {tool["name"] for tool in json.loads(tools.stdout)}


def test_the_demo_server_entry_serves_mcp(tmp_path: Path) -> None:
    # `mooring demo-server` is the same program as `python -m mooring.demo_server`: a server
    # configured through the entry lists the demo tools.
    data = tmp_path / "data"
    off = run_mooring("settings", "set", "demo_server.enabled", "false", data_dir=data)
    assert off.returncode == 0, off.stderr
    added = run_mooring(
        "servers",
        "add",
        "entry",
        "--command",
        sys.executable,
        "--arg=-m",
        "--arg=mooring",
        "--arg=demo-server",
        f"--arg=--store={tmp_path / 'store.sqlite3'}",
        # `python -m` looks in the working folder first: the sources under test.
        "--cwd",
        str(Path(mooring.__file__).parents[1]),
        data_dir=data,
    )
    assert added.returncode == 0, added.stderr
    tools = run_mooring("tools", "list", "entry", "--json", data_dir=data, timeout=90)
    assert tools.returncode == 0, tools.stderr
    names = {tool["name"] for tool in json.loads(tools.stdout)}
    assert {"import_suppliers", "export_suppliers", "list_suppliers"} <= names


def test_the_demo_server_entry_has_the_demo_servers_own_help(tmp_path: Path) -> None:
    done = run_mooring("demo-server", "--help", data_dir=tmp_path / "data")
    assert done.returncode == 0, done.stderr
    assert "--store" in done.stdout
    assert "--rows-per-checkpoint" in done.stdout
    assert not (tmp_path / "data").exists()  # the entry is the server, not a Mooring command


def test_from_python_a_local_model_runs_as_a_module_of_this_interpreter() -> None:
    assert local_model_command("--model", "m.gguf", frozen=False) == [
        sys.executable,
        "-m",
        "mooring.local_model",
        "--model",
        "m.gguf",
    ]


def test_in_a_bundle_a_local_model_starts_through_the_bundle_never_python(frozen: str) -> None:
    # The runtime the engine builds makes its child's command line the bundle's way.
    runtime = LocalModelRuntime()
    command = runtime.command("--model", "m.gguf")
    assert command == [frozen, "local-model", "--model", "m.gguf"]
    assert "-m" not in command


def test_the_local_model_entry_has_the_runners_own_help(tmp_path: Path) -> None:
    done = run_mooring("local-model", "--help", data_dir=tmp_path / "data")
    assert done.returncode == 0, done.stderr
    assert "--model" in done.stdout
    assert "--ctx" in done.stdout
    assert not (tmp_path / "data").exists()  # the entry is the runner, not a Mooring command


@pytest.mark.local_model
def test_a_local_model_started_through_the_entry_answers(tmp_path: Path) -> None:
    # As in a bundle: the runtime starts `mooring local-model …` (here `python -m mooring
    # local-model …`, the same entry), and the model answers on its address.
    import httpx2

    model = smol_model()

    def through_entry(*args: str) -> list[str]:
        return [sys.executable, "-m", "mooring", "local-model", *args]

    async def ask() -> tuple[int, str, int]:
        runtime = LocalModelRuntime(command=through_entry, context_tokens=512)
        try:
            endpoint = await runtime.acquire(model)
            # It yields the CPU to the window while it generates (a lower priority).
            nice = os.getpriority(os.PRIO_PROCESS, endpoint.pid)
            async with httpx2.AsyncClient(timeout=120) as client:
                reply = await client.post(
                    f"{endpoint.base_url}/chat/completions",
                    headers={"Authorization": f"Bearer {endpoint.api_key}"},
                    json={"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4},
                )
            runtime.release(model)
            return reply.status_code, reply.json()["choices"][0]["message"]["content"], nice
        finally:
            await runtime.aclose()

    status, text, nice = asyncio.run(ask())
    assert status == 200
    assert text
    assert nice == os.getpriority(os.PRIO_PROCESS, 0) + 10


def test_children_of_a_bundle_get_the_users_library_path_back() -> None:
    environ = {"LD_LIBRARY_PATH": "/bundle/_internal", "LD_LIBRARY_PATH_ORIG": "/opt/lib"}
    restore_host_environment(environ)
    assert environ == {"LD_LIBRARY_PATH": "/opt/lib"}

    environ = {"LD_LIBRARY_PATH": "/bundle/_internal", "HOME": "/home/u"}
    restore_host_environment(environ)
    assert environ == {"HOME": "/home/u"}
