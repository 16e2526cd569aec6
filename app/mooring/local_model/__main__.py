"""``python -m mooring.local_model --model FILE.gguf``: serve one model until standard input ends.

The API key requests must carry comes in the environment (:data:`KEY_VARIABLE`), never on the
command line (other users can read that). Once the model is loaded, one JSON line is written to
standard output: ``{"url": "http://127.0.0.1:PORT"}`` (or ``{"error": "…"}`` before exiting 1);
llama.cpp's own log goes to standard error. The process ends when its standard input reaches
its end: when Mooring closes it, or when Mooring itself ends, however it ends.

It runs at a lower CPU priority (``--nice``, 10 by default): generating keeps every core busy,
and the window's thread, waiting for a core behind llama.cpp's threads, would miss frames while
a reply streams (``gui_stall_local`` in ``bench/``). Nothing else competes with it for long.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

KEY_VARIABLE = "MOORING_LOCAL_MODEL_KEY"


def _say(value: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


def build_parser() -> argparse.ArgumentParser:
    """The runner's command line (``mooring local-model`` takes the same)."""
    parser = argparse.ArgumentParser(prog="python -m mooring.local_model")
    parser.add_argument("--model", required=True, help="the GGUF model file")
    parser.add_argument("--ctx", type=int, default=4096, help="context size in tokens")
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0: llama.cpp's)")
    parser.add_argument(
        "--nice", type=int, default=10, help="how much to lower its CPU priority (0: not)"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.nice > 0 and hasattr(os, "nice"):
        with contextlib.suppress(OSError):  # a lower priority is a courtesy, not a need
            os.nice(args.nice)  # before llama.cpp starts its threads: they inherit it
    key = os.environ.pop(KEY_VARIABLE, "")
    if not key:
        _say({"error": f"no API key in ${KEY_VARIABLE}"})
        return 2
    try:
        import xllamacpp
    except ImportError:
        _say({"error": "llama.cpp is not installed: pip install 'mooring[local]'"})
        return 1
    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.n_ctx = args.ctx
    if args.threads > 0:
        params.cpuparams.n_threads = args.threads
        params.cpuparams_batch.n_threads = args.threads
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # a free port, chosen by the system
    params.api_keys = [key]
    params.cors_origins = ""  # no browser page may call it
    params.use_jinja = True  # the model's own chat template: parses its tool calls
    params.ui = False  # no web page
    params.n_parallel = 1
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:  # noqa: BLE001 - any load failure is said to Mooring, then exit
        _say({"error": f"{type(exc).__name__}: {exc}"})
        return 1
    address = str(server.listening_address)
    url = address if address.startswith("http") else f"http://{address}"
    _say({"url": url})
    try:
        while sys.stdin.buffer.read(4096):
            pass
    except KeyboardInterrupt:
        pass
    sys.stdout.flush()
    os._exit(0)  # not the server's destructor: it may wait for a reply in flight


if __name__ == "__main__":
    raise SystemExit(main())
