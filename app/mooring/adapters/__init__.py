"""Adapters to the desktop and the outside world: logging, keyring, notifications, telemetry."""
