"""Notification settings: declared once, checked, and upgraded from the first version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mooring.settings.store import Settings, load_settings
from tests.helpers.processes import run_mooring


def test_an_old_settings_file_keeps_the_users_choices(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(
        json.dumps(
            {
                "version": 1,
                "values": {"notifications.enabled": False, "notifications.show_details": True},
            }
        )
    )
    loaded = load_settings(path)
    assert loaded.problems == []
    assert loaded.get("notifications.when") == "never"
    assert loaded.get("notifications.show_names") is True


def test_the_defaults_are_private_and_only_when_the_window_is_not_active() -> None:
    settings = Settings()
    assert settings.get("notifications.when") == "when_inactive"
    assert settings.get("notifications.show_names") is False
    assert settings.get("notifications.muted_conversations") == []


def test_only_the_declared_choices_are_accepted() -> None:
    settings = Settings({"notifications.when": "sometimes"})
    assert settings.get("notifications.when") == "when_inactive"
    assert "always or when_inactive or never" in settings.problems[0]
    with pytest.raises(ValueError, match="invalid"):
        settings.set("notifications.when", "loudly")
    with pytest.raises(ValueError, match="invalid"):
        settings.set("notifications.muted_conversations", [1, 2])


def test_the_cli_sets_when_and_mutes(tmp_path: Path) -> None:
    done = run_mooring("settings", "set", "notifications.when", "loudly", data_dir=tmp_path)
    assert done.returncode == 1
    assert "takes always or when_inactive or never" in done.stderr
    assert "Traceback" not in done.stderr
    ok = run_mooring("settings", "set", "notifications.when", "always", data_dir=tmp_path)
    assert ok.returncode == 0, ok.stderr
    muted = run_mooring(
        "settings", "set", "notifications.muted_conversations", "c-1, c-2", data_dir=tmp_path
    )
    assert muted.returncode == 0, muted.stderr
    loaded = load_settings(tmp_path / "config" / "settings.json")
    assert loaded.get("notifications.when") == "always"
    assert loaded.get("notifications.muted_conversations") == ["c-1", "c-2"]


@pytest.mark.parametrize(("allowed", "when"), [(True, "when_inactive"), (False, "never")])
def test_the_first_time_answer_is_remembered_without_losing_other_changes(
    tmp_path: Path, allowed: bool, when: str
) -> None:
    from mooring.bootstrap import remember_settings
    from mooring.core.notifications import consent_changes
    from mooring.settings.paths import resolve_paths
    from mooring.settings.store import save_settings

    paths = resolve_paths(tmp_path)
    in_memory = Settings()
    meanwhile = Settings({"notifications.show_names": True})  # `mooring settings set` elsewhere
    save_settings(paths.settings_file, meanwhile)
    remember_settings(paths, in_memory, consent_changes(allowed))
    saved = load_settings(paths.settings_file)
    assert saved.get("notifications.asked") is True
    assert saved.get("notifications.when") == when
    assert saved.get("notifications.show_names") is True
    assert in_memory.get("notifications.when") == when
