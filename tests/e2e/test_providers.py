"""`mooring providers …` as a real process against scripted model endpoints.

The endpoint runs in this test process; each `mooring` command is a separate process sharing a
(test) file keyring, as a real keyring is shared.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import Cli
from tests.helpers.model_endpoints import HttpError, ModelEndpoint, Text

CANARY_KEY = "sk-canary-KEY-8e41d07c"
CANARY_HEADER = "canary-HEADER-2b9f"


def add(cli: Cli, endpoint: ModelEndpoint, name: str, kind: str = "openai", *extra: str) -> None:
    url = endpoint.openai_url if kind == "openai" else endpoint.anthropic_url
    done = cli.run(
        "providers", "add", name, "--kind", kind, "--base-url", url, "--model", "model-small",
        *extra,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_providers_round_trip_through_the_cli(cli: Cli, model_endpoint: ModelEndpoint) -> None:
    assert cli.json("providers", "list") == []
    first = cli.run(
        "providers", "add", "local", "--kind", "openai", "--base-url", model_endpoint.openai_url,
        "--model", "model-small", "--header", "X-Team=blue",
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert "it is the default" in first.stdout
    add(cli, model_endpoint, "claude", "anthropic")

    listed = {p["name"]: p for p in cli.json("providers", "list")}
    assert set(listed) == {"local", "claude"}
    assert listed["local"]["default"] is True
    assert listed["claude"]["default"] is False
    assert listed["local"]["headers"] == ["X-Team"]
    assert listed["local"]["api_key"] is False
    assert listed["claude"]["base_url"] == model_endpoint.anthropic_url
    assert "blue" not in str(listed)  # header values are secrets

    assert cli.run("providers", "default", "claude").returncode == 0
    assert [p["name"] for p in cli.json("providers", "list") if p["default"]] == ["claude"]

    models = cli.json("providers", "models", "claude")
    assert models == {
        "provider": "claude",
        "model": "model-small",
        "models": ["model-small", "model-large"],
    }
    shown = cli.run("providers", "models", "local")
    assert "model-small  (configured)" in shown.stdout

    removed = cli.run("providers", "remove", "claude")
    assert removed.returncode == 0
    assert "The default provider is local." in removed.stdout
    assert [(p["name"], p["default"]) for p in cli.json("providers", "list")] == [("local", True)]


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_providers_test_passes_with_a_good_key_and_tools(
    cli: Cli, model_endpoint: ModelEndpoint, kind: str
) -> None:
    model_endpoint.api_key = CANARY_KEY
    url = model_endpoint.openai_url if kind == "openai" else model_endpoint.anthropic_url
    added = cli.run(
        "providers", "add", "p", "--kind", kind, "--base-url", url,
        "--model", "model-small", "--api-key-env", "THE_KEY",
        env={"THE_KEY": CANARY_KEY},
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    model_endpoint.script(Text("OK"))
    done = cli.run("providers", "test")  # the default provider
    assert done.returncode == 0, done.stdout + done.stderr
    assert "reachable:      yes" in done.stdout
    assert "API key:        accepted" in done.stdout
    assert "model-small: available" in done.stdout
    assert "tool calling:   supported" in done.stdout
    assert "p is ready to chat." in done.stdout
    sent = model_endpoint.last
    offered = sent.body["tools"][0]
    assert (offered.get("function") or offered)["name"] == "mooring_connection_check"
    assert sent.headers["authorization"] == f"Bearer {CANARY_KEY}"


def test_providers_test_reports_a_refused_key_and_a_toolless_model(
    cli: Cli, model_endpoint: ModelEndpoint
) -> None:
    model_endpoint.api_key = "sk-the-right-one"
    added = cli.run(
        "providers", "add", "wrongkey", "--kind", "anthropic", "--base-url",
        model_endpoint.anthropic_url, "--model", "model-small", "--api-key-env", "K",
        env={"K": "sk-wrong"},
    )  # fmt: skip
    assert added.returncode == 0
    refused = cli.json("providers", "test", "wrongkey", expect=1)
    assert refused["reachable"] is True
    assert refused["key_accepted"] is False
    assert "refused the API key" in refused["error"]

    model_endpoint.api_key = None
    model_endpoint.script(
        HttpError(400, "registry.ollama.ai/library/gemma:2b does not support tools")
    )
    toolless = cli.run("providers", "test", "wrongkey")
    assert toolless.returncode == 1
    assert "tool calling:   not supported" in toolless.stdout
    assert "cannot call tools" in toolless.stdout


def test_providers_test_reports_an_unreachable_endpoint(cli: Cli) -> None:
    with ModelEndpoint.running() as gone:
        url = gone.openai_url
    added = cli.run(
        "providers", "add", "gone", "--kind", "openai", "--base-url", url, "--model", "m"
    )
    assert added.returncode == 0
    verdict = cli.json("providers", "test", "gone", expect=1)
    assert verdict["reachable"] is False
    assert "connection was refused" in verdict["error"]
    models = cli.run("providers", "models", "gone")
    assert models.returncode == 1
    assert "Traceback" not in models.stderr
    assert "Cannot reach the model endpoint 'gone'" in models.stderr


def test_bad_input_is_a_clear_error_and_stores_nothing(
    cli: Cli, model_endpoint: ModelEndpoint
) -> None:
    for args, message in [
        (("--api-key-env", "NOT_SET_ANYWHERE"), "NOT_SET_ANYWHERE is not set"),
        (("--header", "no-equals-sign"), "NAME=VALUE"),
        (("--base-url", "ftp://example.org"), "not an http(s) address"),
    ]:
        done = cli.run("providers", "add", "p", "--kind", "openai", "--model", "m", *args)
        assert done.returncode == 2, args  # the command line was wrong
        assert message in done.stderr
        assert "Traceback" not in done.stderr
    assert cli.json("providers", "list") == []
    missing = cli.run("providers", "test", "nobody")
    assert missing.returncode == 1
    assert "No provider called 'nobody'" in missing.stderr
    none = cli.run("providers", "models")
    assert "No model provider is configured" in none.stderr


def test_the_key_can_come_from_stdin(cli: Cli, model_endpoint: ModelEndpoint) -> None:
    model_endpoint.api_key = CANARY_KEY
    env = {**os.environ, "MOORING_DATA_DIR": str(cli.data_dir)}
    env.update({k: v for k, v in cli.env.items() if v is not None})
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    done = subprocess.run(
        [sys.executable, "-m", "mooring", "providers", "add", "p", "--kind", "openai",
         "--base-url", model_endpoint.openai_url, "--model", "model-small", "--api-key-stdin"],
        input=CANARY_KEY + "\n", capture_output=True, text=True, timeout=90, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert CANARY_KEY not in done.stdout + done.stderr
    # The endpoint refuses any other key: listing its models proves the stored one is used.
    assert cli.json("providers", "models")["models"] == ["model-small", "model-large"]


def everything_under(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_canary_key_never_reaches_sqlite_logs_or_traces(
    cli: Cli, model_endpoint: ModelEndpoint
) -> None:
    model_endpoint.api_key = CANARY_KEY
    added = cli.run(
        "providers", "add", "canary", "--kind", "openai", "--base-url", model_endpoint.openai_url,
        "--model", "model-small", "--api-key-env", "CANARY",
        "--header", f"X-Secret={CANARY_HEADER}", "--log-json", env={"CANARY": CANARY_KEY},
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    model_endpoint.script(
        Text("OK"),
        # an endpoint that echoes the key back in an error must not get it written anywhere
        HttpError(400, f"invalid request for key {CANARY_KEY}"),
    )
    outputs = [
        cli.run("providers", "test", "canary"),
        cli.run("providers", "models", "canary"),
        cli.run("providers", "list", "--json"),
        cli.run("providers", "test", "canary", "--json"),
    ]
    assert outputs[0].returncode == 0, outputs[0].stdout + outputs[0].stderr
    # The key and header did go where they belong: to the endpoint, and into the keyring.
    assert model_endpoint.requests[-1].headers["authorization"] == f"Bearer {CANARY_KEY}"
    assert model_endpoint.requests[-1].headers["x-secret"] == CANARY_HEADER
    keyring_file = (cli.data_dir.parent / "keyring.json").read_text()
    assert CANARY_KEY in keyring_file
    assert CANARY_HEADER in keyring_file

    files = everything_under(cli.data_dir)
    assert any("mooring.sqlite3" in p.name for p in files)
    assert any("logs" in p.parts for p in files)
    for path, data in files.items():
        assert CANARY_KEY.encode() not in data, f"the key leaked into {path}"
        assert CANARY_HEADER.encode() not in data, f"the header value leaked into {path}"
    for done in outputs:
        assert CANARY_KEY not in done.stdout + done.stderr
        assert CANARY_HEADER not in done.stdout + done.stderr


NO_KEYRING = "keyring.backends.fail.Keyring"


def test_without_a_keyring_a_key_from_a_variable_is_read_at_each_use(
    cli: Cli, model_endpoint: ModelEndpoint
) -> None:
    model_endpoint.api_key = CANARY_KEY
    with_key: dict[str, str | None] = {"CANARY": CANARY_KEY, "PYTHON_KEYRING_BACKEND": NO_KEYRING}
    done = cli.run(
        "providers", "add", "p", "--kind", "openai", "--base-url", model_endpoint.openai_url,
        "--model", "model-small", "--api-key-env", "CANARY", env=with_key,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "read from $CANARY each time it is used" in done.stdout
    assert "kept for this command only" not in done.stderr
    for path, data in everything_under(cli.data_dir.parent).items():
        assert CANARY_KEY.encode() not in data, f"the key was written to {path}"

    listed = cli.run("providers", "list", env=with_key)
    assert "[key: from $CANARY, set]" in listed.stdout
    unset = cli.run("providers", "list", env={"CANARY": None, "PYTHON_KEYRING_BACKEND": NO_KEYRING})
    assert "[key: from $CANARY, NOT SET]" in unset.stdout
    assert "p: requests would go without a key" in unset.stderr
    assert cli.json("providers", "list")[0]["api_key_env"] == "CANARY"

    # Later commands, and the engine a chat starts, read the variable: no 401.
    model_endpoint.script(Text("OK"))
    tested = cli.run("providers", "test", "p", env=with_key)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert model_endpoint.last.headers["authorization"] == f"Bearer {CANARY_KEY}"
    model_endpoint.script(Text("Hello from the model."))
    chatted = cli.run("chat", "hello", env=with_key)
    assert chatted.returncode == 0, chatted.stdout + chatted.stderr
    assert "Hello from the model." in chatted.stdout
    assert model_endpoint.last.headers["authorization"] == f"Bearer {CANARY_KEY}"
    for path, data in everything_under(cli.data_dir.parent).items():
        assert CANARY_KEY.encode() not in data, f"the key was written to {path}"


def test_without_a_keyring_a_key_kept_for_one_command_is_flagged_as_lost(
    cli: Cli, model_endpoint: ModelEndpoint
) -> None:
    env = {**os.environ, "MOORING_DATA_DIR": str(cli.data_dir)}
    env["PYTHON_KEYRING_BACKEND"] = NO_KEYRING
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    done = subprocess.run(
        [sys.executable, "-m", "mooring", "providers", "add", "p", "--kind", "openai",
         "--base-url", model_endpoint.openai_url, "--model", "model-small", "--api-key-stdin"],
        input=CANARY_KEY + "\n", capture_output=True, text=True, timeout=90, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "kept for this command only" in done.stderr
    assert "--api-key-env VAR" in done.stderr

    listed = cli.run("providers", "list", env={"PYTHON_KEYRING_BACKEND": NO_KEYRING})
    assert "[key: LOST, no keyring kept it]" in listed.stdout
    assert "mooring providers edit NAME --api-key-env VAR" in listed.stderr
    assert cli.json("providers", "list")[0]["key"] == "lost"


def test_a_provider_is_edited_from_the_command_line(
    cli: Cli, model_endpoint: ModelEndpoint
) -> None:
    model_endpoint.api_key = CANARY_KEY
    add(cli, model_endpoint, "local")
    refused = cli.json("providers", "test", "local", expect=1)
    assert refused["key_accepted"] is False
    shown = cli.run("providers", "test", "local")
    assert "mooring providers edit local --api-key-env VAR" in shown.stdout + shown.stderr
    chatted = cli.run("chat", "hello")  # the endpoint refuses a request without its key
    assert chatted.returncode == 1
    assert "refused the API key (HTTP 401). No API key is configured" in chatted.stderr
    assert "mooring providers edit local --api-key-env VAR" in chatted.stderr

    edited = cli.run(
        "providers", "edit", "local", "--rename", "hosted", "--model", "model-large",
        "--api-key-env", "CANARY", env={"CANARY": CANARY_KEY},
    )  # fmt: skip
    assert edited.returncode == 0, edited.stderr
    assert "Saved hosted" in edited.stdout
    [row] = cli.json("providers", "list")
    assert (row["name"], row["model"], row["api_key"], row["default"]) == (
        "hosted",
        "model-large",
        True,
        True,
    )
    model_endpoint.script(Text("OK"))
    final = cli.run("providers", "test", "hosted")
    assert final.returncode == 0, final.stdout  # the keyring has it now
