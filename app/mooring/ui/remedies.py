"""What the window says a user can do about a problem (:class:`~mooring.core.errors.Remedy`):
where in the window to do it, never a command line (the CLI words the same remedies as
commands: ``cli/remedies.py``)."""

from __future__ import annotations

from mooring.core.errors import Remedy
from mooring.ui.text import inert

PROVIDER_ACTION = "Edit provider…"
"""The action a provider's remedy offers (the Settings view's edit dialog)."""
SETTINGS_ACTION = "Open Settings"


def remedy_words(remedy: Remedy | None, subject: tuple[str, ...] = ()) -> str:
    """The advice for ``remedy`` in the window ("" for none); names are neutralised."""
    name = inert(subject[0], limit=60) if subject and subject[0] else "the provider"
    if remedy is Remedy.ADD_PROVIDER:
        return "Add one in Settings, under Model providers (Add provider…)."
    if remedy is Remedy.PROVIDER_KEY:
        return (
            f"Give {name} a key: in Settings, under Model providers, select it and choose Edit "
            "provider…."
        )
    if remedy is Remedy.PROVIDER_MODEL:
        return (
            f"Choose another model for {name}: in Settings, under Model providers, List models "
            "shows them and Edit provider… changes it."
        )
    if remedy is Remedy.ADD_ACCOUNT:
        server = inert(subject[0], limit=60) if subject else "the server"
        label = inert(subject[1], limit=60) if len(subject) > 1 else "it"
        return f"Add the account {label} to {server} in the Servers view (Add account…)."
    if remedy is Remedy.KEY_FROM_ENV:
        return (
            "Put the key in an environment variable of the session Mooring runs in and give "
            "the variable's name under “Key from variable” instead (Mooring reads it at each "
            "use and stores no secret), or unlock a keyring."
        )
    if remedy is Remedy.ENGINE_LOG:
        return "Its log has the details: Settings names the log file, under Where your data lives."
    if remedy is Remedy.ENGINE_GONE:
        return (
            "Nothing that was stored is lost; Mooring starts its engine again when it is needed. "
            "If it keeps stopping, its log file (named in Settings) says why."
        )
    if remedy is Remedy.ENGINE_STUCK:
        return (
            "It may be stuck: quit Mooring, end Mooring's background program (its engine; a "
            "system monitor shows it), then open Mooring again."
        )
    if remedy is Remedy.OLD_ENGINE:
        pid = inert(subject[0], limit=20) if subject else "?"
        return (
            f"Quit Mooring and end that version's background program (its engine, process "
            f"{pid}), or wait until it ends by itself after 10 idle minutes; then open Mooring "
            "again."
        )
    if remedy is Remedy.UNLOCK_KEYRING:
        return (
            "Unlock or install a keyring (a Secret Service such as GNOME Keyring), then try again."
        )
    if remedy is Remedy.KEEP_SECRETS:
        return (
            "Move values that are not secret to “Environment (not secret)”, or read them from "
            "Mooring's environment under “Environment from variables”; or unlock a keyring."
        )
    return ""


def remedy_action(remedy: Remedy | None) -> str | None:
    """The button that does what ``remedy`` says, where the window has one."""
    if remedy in (Remedy.PROVIDER_KEY, Remedy.PROVIDER_MODEL):
        return PROVIDER_ACTION
    if remedy is Remedy.ADD_PROVIDER:
        return SETTINGS_ACTION
    return None
