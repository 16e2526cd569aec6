"""The recommended local models: small instruction-tuned GGUF files that can call tools, with
where to download them and under which licence. Pure data."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CATALOGUE", "MIRROR_VARIABLE", "CatalogueModel", "catalogue_model", "download_url"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogueModel:
    """One downloadable model file."""

    key: str
    """What ``mooring models download KEY`` takes."""
    title: str
    file_name: str
    url: str
    approx_bytes: int
    """About how big the file is (the server's own length is what is checked)."""
    licence: str
    licence_url: str
    sha256: str | None = None
    """The file's SHA-256; ``None``: read from Hugging Face's ``x-linked-etag`` (the LFS
    object's SHA-256) before downloading, and the download refused if it cannot be."""
    notes: str = ""


_HF = "https://huggingface.co"
MIRROR_VARIABLE = "HF_ENDPOINT"
"""The environment variable naming a Hugging Face mirror (as Hugging Face's own tools read it)."""


def download_url(model: CatalogueModel, mirror: str | None) -> str:
    """Where ``model`` is downloaded from: its Hugging Face address, or the same path on
    ``mirror`` (e.g. ``https://hf-mirror.example``) when one is given."""
    if mirror and model.url.startswith(_HF + "/"):
        return mirror.rstrip("/") + model.url.removeprefix(_HF)
    return model.url


CATALOGUE: tuple[CatalogueModel, ...] = (
    CatalogueModel(
        key="qwen3-0.6b",
        title="Qwen3 0.6B (Q4_K_M)",
        file_name="Qwen3-0.6B-Q4_K_M.gguf",
        url=f"{_HF}/unsloth/Qwen3-0.6B-GGUF/resolve/main/Qwen3-0.6B-Q4_K_M.gguf",
        approx_bytes=400_000_000,
        licence="Apache-2.0",
        licence_url="https://www.apache.org/licenses/LICENSE-2.0",
        notes="small and quick; calls tools",
    ),
    CatalogueModel(
        key="qwen2.5-1.5b",
        title="Qwen2.5 1.5B Instruct (Q4_K_M)",
        file_name="qwen2.5-1.5b-instruct-q4_k_m.gguf",
        url=f"{_HF}/Qwen/Qwen2.5-1.5B-Instruct-GGUF/resolve/main/qwen2.5-1.5b-instruct-q4_k_m.gguf",
        approx_bytes=1_120_000_000,
        licence="Apache-2.0",
        licence_url="https://www.apache.org/licenses/LICENSE-2.0",
        notes="better answers and tool calls; slower, ~1.5 GB of memory",
    ),
    CatalogueModel(
        key="gemma3-270m",
        title="Gemma 3 270M Instruct (Q4_K_M)",
        file_name="gemma-3-270m-it-Q4_K_M.gguf",
        url=f"{_HF}/unsloth/gemma-3-270m-it-GGUF/resolve/main/gemma-3-270m-it-Q4_K_M.gguf",
        approx_bytes=250_000_000,
        licence="Gemma Terms of Use",
        licence_url="https://ai.google.dev/gemma/terms",
        notes="the smallest; simple tasks only",
    ),
)


def catalogue_model(key: str) -> CatalogueModel | None:
    """The catalogue's model called ``key`` (``None``: no such model)."""
    return next((m for m in CATALOGUE if m.key == key.strip().lower()), None)
