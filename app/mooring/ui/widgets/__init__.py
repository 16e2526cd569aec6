"""Reusable widgets (forms built from JSON schemas)."""
