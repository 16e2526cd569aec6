"""What the command line says a user can do about a problem (:class:`~mooring.core.errors.Remedy`):
the commands that do it. The window says the same in its own terms (``ui/remedies.py``)."""

from __future__ import annotations

from mooring.core.errors import KnownError, Remedy


def remedy_words(remedy: Remedy | None, subject: tuple[str, ...] = ()) -> str:
    """The advice for ``remedy`` on the command line ("" for none)."""
    name = subject[0] if subject else "NAME"
    if remedy is Remedy.ADD_PROVIDER:
        return (
            "Add one with: mooring providers add NAME --kind openai|anthropic --base-url URL "
            "--model MODEL"
        )
    if remedy is Remedy.PROVIDER_KEY:
        return (
            f"Give it a key with `mooring providers edit {name} --api-key-env VAR` (or "
            f"--api-key-stdin); `mooring providers test {name}` checks it."
        )
    if remedy is Remedy.PROVIDER_MODEL:
        return (
            f"`mooring providers models {name}` lists the models it offers; choose one with "
            f"`mooring providers edit {name} --model MODEL`."
        )
    if remedy is Remedy.ADD_ACCOUNT:
        server, label = (*subject, "SERVER", "LABEL")[:2]
        return f"Add it with: mooring accounts add {server} {label}"
    if remedy is Remedy.KEY_FROM_ENV:
        return (
            "Put the key in an environment variable and pass --api-key-env VAR (Mooring reads "
            "it at each use), or unlock a keyring (`mooring doctor` checks)."
        )
    if remedy is Remedy.ENGINE_LOG:
        return "Its log has the details (`mooring doctor` names the log file)."
    if remedy is Remedy.ENGINE_GONE:
        return (
            "Nothing that was stored is lost; run the command again (the engine starts again by "
            "itself), and see `mooring doctor` if it keeps stopping."
        )
    if remedy is Remedy.ENGINE_STUCK:
        return (
            "It may be stuck: `mooring agent stop` ends it, and the next command starts a new one."
        )
    if remedy is Remedy.OLD_ENGINE:
        return (
            "Stop it with `mooring agent stop` (its tasks are followed again by the next one), "
            "then try again."
        )
    if remedy is Remedy.UNLOCK_KEYRING:
        return (
            "Unlock or install a Secret Service keyring (`mooring doctor` checks), then try again."
        )
    if remedy is Remedy.KEEP_SECRETS:
        return (
            "Pass values that are not secret with --env-plain NAME=VALUE, or read them from an "
            "environment variable with --env-from NAME=VAR; or unlock a keyring (`mooring "
            "doctor` checks)."
        )
    return ""


def hint_of(exc: KnownError) -> str:
    """The hint a command shows for ``exc``: its own, then what its remedy says."""
    return " ".join(part for part in (exc.hint, remedy_words(exc.remedy, exc.subject)) if part)
