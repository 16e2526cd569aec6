"""Model providers: the ``core.chat`` port on the official ``openai`` and ``anthropic`` SDKs.

``openai_chat`` speaks the OpenAI chat-completions wire (OpenAI, Ollama, LM Studio, llama.cpp,
vLLM, OpenRouter…), ``anthropic_chat`` the Anthropic Messages wire; ``factory`` builds either from
a stored :class:`~mooring.core.chat.ProviderConfig` with its secrets read from the keyring.
Only this package imports the model SDKs (an import-linter contract), and it imports them lazily,
so commands that never talk to a model do not pay for them.
"""
