"""adapters/providers."""
