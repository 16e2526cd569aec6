"""A keyring backend for end-to-end tests that several processes share: a JSON file.

Test-only. Mooring never ships or selects a plaintext keyring (it treats one as unusable); the
tests select this one explicitly so secrets set by one ``mooring`` process are there for the
next, as a real keyring's would be.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend

ENV_FILE = "MOORING_TEST_KEYRING_FILE"


class FileKeyring(KeyringBackend):
    """Secrets in the JSON file named by ``MOORING_TEST_KEYRING_FILE``."""

    priority = 1

    @property
    def _path(self) -> Path:
        return Path(os.environ[ENV_FILE])

    def _load(self) -> dict[str, str]:
        try:
            data: dict[str, str] = json.loads(self._path.read_text())
        except FileNotFoundError:
            return {}
        return data

    def get_password(self, service: str, username: str) -> str | None:
        return self._load().get(f"{service}\x1f{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        data = self._load()
        data[f"{service}\x1f{username}"] = password
        self._path.write_text(json.dumps(data))

    def delete_password(self, service: str, username: str) -> None:
        data = self._load()
        data.pop(f"{service}\x1f{username}", None)
        self._path.write_text(json.dumps(data))
