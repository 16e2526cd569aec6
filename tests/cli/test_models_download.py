"""``mooring models download`` as a real process against a file server on 127.0.0.1 (named by
``HF_ENDPOINT``, as a Hugging Face mirror is): Ctrl+C while the server stalls stops it, says how
to resume, exits non-zero and keeps the ``.part`` file, which the next run resumes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

from tests.adapters.test_model_files import PAYLOAD, SHA, FileServer
from tests.adapters.test_model_files import file_server as file_server  # the fixture
from tests.helpers.processes import Lines, run_mooring

KEY = "gemma3-270m"
FILE = "gemma-3-270m-it-Q4_K_M.gguf"


def test_ctrl_c_stops_a_download_keeps_its_part_and_the_next_run_resumes(
    tmp_path: Path, file_server: FileServer
) -> None:
    address = urlsplit(file_server.url)
    env = {
        **os.environ,
        "MOORING_DATA_DIR": str(tmp_path / "data"),
        "HF_ENDPOINT": f"{address.scheme}://{address.netloc}",
    }
    part = tmp_path / "data" / "models" / (FILE + ".part")
    file_server.stall_after = len(PAYLOAD) // 2  # half, then nothing until the test ends
    with subprocess.Popen(
        [sys.executable, "-m", "mooring", "models", "download", KEY],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    ) as child:
        try:
            # A line at every 10 % (standard error is no terminal): 50 % is all that came.
            Lines(child.stderr).until(lambda line: line.strip().startswith("50%"))
            child.send_signal(signal.SIGINT)
            _out, err = child.communicate(timeout=60)
        finally:
            if child.returncode is None:
                child.kill()
    assert child.returncode == 6, err  # cancelled
    assert "Stopped; run again to resume" in err
    assert f"mooring models download {KEY}" in err
    assert "Traceback" not in err
    assert part.read_bytes() == PAYLOAD[: len(PAYLOAD) // 2]
    assert not part.with_suffix("").exists()

    again = run_mooring(
        "models",
        "download",
        KEY,
        data_dir=tmp_path / "data",
        env={"HF_ENDPOINT": env["HF_ENDPOINT"]},
    )
    assert again.returncode == 0, again.stderr
    assert f"Downloaded and verified {FILE}" in again.stdout
    # The catalogue pins no checksum: where the one checked came from is said.
    assert f"SHA-256 {SHA}, from the server's x-linked-etag header" in again.stdout
    assert file_server.ranges == [None, f"bytes={len(PAYLOAD) // 2}-"]
    assert (tmp_path / "data" / "models" / FILE).read_bytes() == PAYLOAD
    assert not part.exists()


def test_a_server_that_gives_no_checksum_is_refused_and_nothing_is_fetched(
    tmp_path: Path, file_server: FileServer
) -> None:
    file_server.etag = None
    address = urlsplit(file_server.url)
    done = run_mooring(
        "models",
        "download",
        KEY,
        data_dir=tmp_path / "data",
        env={"HF_ENDPOINT": f"{address.scheme}://{address.netloc}"},
    )
    assert done.returncode != 0
    assert "gives no checksum" in done.stderr
    assert "could not be verified" in done.stderr
    assert "Traceback" not in done.stderr
    assert file_server.ranges == []  # nothing was fetched
    assert not list((tmp_path / "data" / "models").glob("*"))
