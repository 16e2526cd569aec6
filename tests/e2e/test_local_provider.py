"""`mooring providers add NAME --kind local --model-path FILE.gguf` as a real process: no key, no
address; `providers test` runs the real model (SmolLM2-135M) in its own process, which ends
with the command."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.e2e.conftest import Cli
from tests.helpers.local_model import smol_model

pytestmark = pytest.mark.local_model


def test_a_local_model_file_is_a_provider_that_works_with_no_key(cli: Cli) -> None:
    model = smol_model()
    added = cli.run("providers", "add", "smol", "--kind", "local", "--model-path", str(model))
    assert added.returncode == 0, added.stderr
    assert "it is the default" in added.stdout
    [shown] = cli.json("providers", "list")
    assert shown["kind"] == "local"
    assert shown["base_url"] == model.resolve().as_uri()
    assert shown["model"] == model.stem
    assert (shown["api_key"], shown["key"]) == (False, "none")

    tested = cli.json("providers", "test", "smol")
    assert tested["reachable"] is True
    assert tested["model_found"] is True
    assert tested["ok"] is True, tested
    # The model ran in a process of its own, which ended with the command.
    log = (cli.data_dir / "logs" / "mooring.log").read_text()
    [pid] = re.findall(r"local model process (\d+) ended", log)
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid), 0)


def test_what_is_not_a_model_file_is_refused_and_nothing_stored(cli: Cli, tmp_path: Path) -> None:
    text = tmp_path / "notes.gguf"
    text.write_text("not a model")
    for args, words, code in (
        (("--model-path", str(text)), "is not a GGUF model file", 2),
        (("--model-path", str(tmp_path / "missing.gguf")), "There is no model file", 1),
        ((), "--model-path FILE.gguf", 2),
        (("--model-path", str(text), "--base-url", "http://127.0.0.1:1/v1"), "no address", 2),
    ):
        done = cli.run("providers", "add", "smol", "--kind", "local", *args)
        assert done.returncode == code, (args, done.stderr)
        assert words in done.stderr
    assert cli.json("providers", "list") == []
