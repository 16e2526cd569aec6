"""``make screenshots``: a conversation with a running task card, for real.

Starts a scripted OpenAI-compatible endpoint on 127.0.0.1, adds it as the provider of the data
folder in ``MOORING_DATA_DIR``, and runs ``window_probe.py chat`` with a shots folder: the
approval dialog and the conversation with its task waiting for input are saved as PNGs; then a
second conversation, a reply with a code block regenerated once, and the composer's prompt
picker (``chat_probe.py shots``).
Usage: ``python tests/ui/chat_shots.py SHOTS_DIR``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.helpers.model_endpoints import ModelEndpoint, Text, ToolCall, ToolCalls
from tests.ui.chat_seed import seed_attachments, seed_versions

HERE = Path(__file__).resolve().parent
SAMPLES = HERE.parents[1] / "resources" / "samples"


def main() -> int:
    shots = sys.argv[1]
    with ModelEndpoint.running() as endpoint:
        endpoint.script(
            ToolCalls(
                [
                    ToolCall(
                        "demo__import_suppliers",
                        {"path": str(SAMPLES / "suppliers_ambiguous_id.csv")},
                    )
                ]
            ),
            Text(
                "I started the import of **suppliers_ambiguous_id.csv**; it will ask you "
                "which column holds the ids."
            ),
        )
        subprocess.run(
            [sys.executable, "-m", "mooring", "providers", "add", "local", "--kind", "openai",
             "--base-url", endpoint.openai_url, "--model", "model-small"],
            check=True, env=os.environ, capture_output=True,
        )  # fmt: skip
        done = subprocess.run(
            [sys.executable, str(HERE / "window_probe.py"), "chat",
             "Import the ambiguous supplier file", shots],
            env=os.environ, capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        if done.returncode:
            sys.stderr.write(done.stderr[-3000:])
            return done.returncode
        # A message with files attached; a reply with a code block, regenerated (two
        # versions); then the prompt picker.
        attached = seed_attachments(mooring, endpoint, Path(tempfile.mkdtemp()))
        seed_versions(mooring, endpoint)
        done = subprocess.run(
            [sys.executable, str(HERE / "chat_probe.py"), "shots", shots, attached],
            env=os.environ, capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        if done.returncode:
            sys.stderr.write(done.stderr[-3000:])
        return done.returncode


def mooring(*args: str) -> str:
    """One ``mooring`` command in the data folder: its output (it must succeed)."""
    done = subprocess.run(
        [sys.executable, "-m", "mooring", *args],
        env=os.environ, capture_output=True, text=True, timeout=180, check=True,
    )  # fmt: skip
    return done.stdout


if __name__ == "__main__":
    raise SystemExit(main())
