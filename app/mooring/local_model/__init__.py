"""The local model runner: a separate program (``python -m mooring.local_model``) that hosts one
GGUF model with llama.cpp's server (the ``xllamacpp`` wheel, the ``local`` extra) on 127.0.0.1.

Mooring's engine starts it on first use (``adapters/providers/local.py``) and talks to it with the
OpenAI adapter; a crash of llama.cpp ends this process, never Mooring. It imports nothing else of
Mooring (an import-linter contract).
"""
