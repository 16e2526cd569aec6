"""Where a provider's secrets live in the keyring (scope :data:`PROVIDER_SECRET_SCOPE`)."""

from __future__ import annotations

from mooring.core.chat import PROVIDER_SECRET_SCOPE

__all__ = ["PROVIDER_SECRET_SCOPE", "api_key_name", "header_name"]


def api_key_name(provider_id: str) -> str:
    """The keyring name of a provider's API key."""
    return f"{provider_id}:api_key"


def header_name(provider_id: str, header: str) -> str:
    """The keyring name of one custom header's value."""
    return f"{provider_id}:header:{header}"
