"""UI tests reuse the end-to-end CLI fixture to prepare real data folders."""

from tests.e2e.conftest import cli  # noqa: F401  # a fixture, used by name
