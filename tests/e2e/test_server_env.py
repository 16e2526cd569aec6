"""A server's environment without a keyring: values that are not secret are stored as plain
configuration, values read from a variable are stored by the variable's name; secrets still go
to the keyring only (and are refused when none can keep them)."""

from __future__ import annotations

import sys

from tests.e2e.conftest import Cli

NO_KEYRING: dict[str, str | None] = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
TOKEN = "tok-canary-5d1e"
# Says what it was given, then ends: its connection fails with these words as the reason.
SCRIPT = (
    "import os, sys; "
    "print('path=%s token=%s' % (os.environ.get('MEMORY_FILE_PATH'), os.environ.get('TOKEN')), "
    "file=sys.stderr); sys.exit(3)"
)


def test_without_a_keyring_plain_and_variable_values_reach_the_server(cli: Cli) -> None:
    added = cli.run(
        "servers", "add", "mem", "--command", sys.executable, "--arg=-c", f"--arg={SCRIPT}",
        "--env-plain", "MEMORY_FILE_PATH=/srv/notes/memory.json", "--env-from", "TOKEN=MY_TOKEN",
        env=NO_KEYRING,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    [server] = cli.json("servers", "list")
    assert server["env"] == {"MEMORY_FILE_PATH": "/srv/notes/memory.json"}
    assert server["env_from"] == {"TOKEN": "MY_TOKEN"}

    tried = cli.run("tools", "list", "mem", env={**NO_KEYRING, "MY_TOKEN": TOKEN})
    assert tried.returncode == 1
    assert f"path=/srv/notes/memory.json token={TOKEN}" in tried.stderr
    # Stored by name only; the issue the failure raised is redacted like a keyring secret.
    for path in cli.data_dir.glob("*.sqlite3*"):
        assert TOKEN.encode() not in path.read_bytes(), f"the value was written to {path}"
    issues = cli.run("issues", env={**NO_KEYRING, "MY_TOKEN": TOKEN})
    assert "mem cannot be reached" in issues.stdout
    assert TOKEN not in issues.stdout
    assert "token=[redacted]" in issues.stdout


def test_without_a_keyring_a_secret_value_is_refused_with_the_other_choices(cli: Cli) -> None:
    refused = cli.run(
        "servers", "add", "s", "--command", sys.executable, "--env", "API_KEY=sk-1",
        env=NO_KEYRING,
    )  # fmt: skip
    assert refused.returncode == 1
    assert "No usable keyring: a secret environment value would be lost" in refused.stderr
    assert "--env-plain NAME=VALUE" in refused.stderr
    assert "--env-from NAME=VAR" in refused.stderr
    assert cli.json("servers", "list") == []
    twice = cli.run(
        "servers", "add", "s", "--command", sys.executable, "--env-plain", "A=1",
        "--env-from", "A=B",
    )  # fmt: skip
    assert twice.returncode == 2
    assert "'A' is given twice" in twice.stderr
