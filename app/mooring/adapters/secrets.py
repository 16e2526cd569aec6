"""Secrets in the OS keyring — and never anywhere else.

When no usable keyring exists (a headless machine, a locked keyring) secrets are kept in this
process's memory for the session only, and the user is told; there is no plaintext fallback.
The keyring is loaded (and its backend detected) only when a secret is first needed: most
commands never touch one.
"""

from __future__ import annotations

import functools
import logging
import threading

from mooring.core.ports import ProbeResult

log = logging.getLogger("mooring.secrets")
SERVICE_PREFIX = "mooring"


KeyringStatus = ProbeResult
"""What the probe found (one result type for every probe)."""


def _is_plaintext(backend: object) -> bool:
    cls = type(backend)
    return cls.__module__.startswith("keyrings.alt") or "plaintext" in cls.__name__.lower()


def keyring_status() -> KeyringStatus:
    """Describe the active keyring backend; never writes anything."""
    import keyring
    import keyring.errors

    try:
        backend = keyring.get_keyring()
    except Exception as exc:  # noqa: BLE001  # a broken keyring configuration is "unusable"
        return KeyringStatus("none", False, f"the keyring could not be loaded ({exc})")
    name = f"{type(backend).__module__}.{type(backend).__name__}"
    if type(backend).__module__ == "keyring.backends.fail":
        return KeyringStatus(name, False, "no keyring service is available")
    if _is_plaintext(backend):
        return KeyringStatus(name, False, "a plaintext file keyring is not used for secrets")
    try:
        backend.get_password(f"{SERVICE_PREFIX}/probe", "probe")
    except keyring.errors.KeyringError as exc:
        return KeyringStatus(name, False, f"the keyring refused access: {exc}")
    return KeyringStatus(name, True, "secrets are stored in the OS keyring")


class KeyringSecrets:
    """``SecretStore`` on the OS keyring, with a session-only memory when it is unusable."""

    def __init__(self) -> None:
        self._session: dict[tuple[str, str], str] = {}

    @functools.cached_property
    def status(self) -> KeyringStatus:
        """The keyring's state, probed once, on first use."""
        status = keyring_status()
        if not status.usable:
            log.info("keyring unusable (%s): secrets kept for this session only", status.detail)
        return status

    def warm(self) -> None:
        """Probe the keyring on a worker thread now (the window, as it loads): the first
        secret a connection reads then waits for no probe (the keyring's import and backend
        detection, ~40 ms) on the event loop's thread, which in the window paints."""
        threading.Thread(
            target=lambda: self.status, name="mooring-keyring-probe", daemon=True
        ).start()

    @property
    def durable(self) -> bool:
        """Whether secrets reach the OS keyring (else they last for this session only)."""
        return self.status.usable

    def _service(self, scope: str) -> str:
        return f"{SERVICE_PREFIX}/{scope}"

    def get(self, scope: str, name: str) -> str | None:
        if (scope, name) in self._session:
            return self._session[(scope, name)]
        if not self.status.usable:
            return None
        import keyring
        import keyring.errors

        try:
            value: str | None = keyring.get_password(self._service(scope), name)
        except keyring.errors.KeyringError as exc:
            log.warning("keyring read failed for scope %s: %s", scope, type(exc).__name__)
            return None
        return value

    def set(self, scope: str, name: str, value: str) -> None:
        if self.status.usable:
            import keyring
            import keyring.errors

            try:
                keyring.set_password(self._service(scope), name, value)
            except keyring.errors.KeyringError as exc:
                log.warning("keyring write failed (%s): kept for this session only", exc)
            else:
                self._session.pop((scope, name), None)
                return
        log.warning(
            "no usable keyring (%s): this secret is kept for this session only",
            self.status.detail,
        )
        self._session[(scope, name)] = value

    def delete(self, scope: str, name: str) -> None:
        self._session.pop((scope, name), None)
        if not self.status.usable:
            return
        import keyring
        import keyring.errors

        try:
            keyring.delete_password(self._service(scope), name)
        except keyring.errors.PasswordDeleteError:
            pass
        except keyring.errors.KeyringError as exc:
            log.warning("keyring delete failed for scope %s: %s", scope, type(exc).__name__)
