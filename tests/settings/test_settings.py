"""Settings and paths: declared defaults, overrides, damaged files kept aside."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mooring.settings.paths import resolve_paths
from mooring.settings.schema import SETTINGS
from mooring.settings.store import Settings, load_settings, save_settings


def test_data_dir_argument_puts_everything_in_one_folder(tmp_path: Path) -> None:
    paths = resolve_paths(tmp_path / "elsewhere")
    assert paths.overridden
    for path in (paths.database, paths.settings_file, paths.log_file, paths.traces_dir):
        assert path.is_relative_to(tmp_path / "elsewhere")


def test_environment_variable_overrides_platform_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOORING_DATA_DIR", str(tmp_path / "env"))
    assert resolve_paths().data_dir == tmp_path / "env"
    assert resolve_paths(tmp_path / "flag").data_dir == tmp_path / "flag"


def test_without_overrides_platform_folders_are_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MOORING_DATA_DIR")
    paths = resolve_paths()
    assert not paths.overridden
    assert paths.data_dir.is_relative_to(tmp_path / "home")
    assert "Mooring" in paths.data_dir.parts


def test_every_setting_has_a_default_of_its_type_and_a_description() -> None:
    for setting in SETTINGS:
        assert type(setting.default) is setting.type, setting.key
        assert setting.description


def test_settings_survive_a_save_and_load(tmp_path: Path) -> None:
    settings = Settings()
    settings.set("telemetry.otlp_endpoint", "http://127.0.0.1:4318")
    save_settings(tmp_path / "settings.json", settings)
    loaded = load_settings(tmp_path / "settings.json")
    assert loaded.get("telemetry.otlp_endpoint") == "http://127.0.0.1:4318"
    assert loaded.get("notifications.show_names") is False
    assert json.loads((tmp_path / "settings.json").read_text())["values"] == {
        "telemetry.otlp_endpoint": "http://127.0.0.1:4318"
    }


def test_wrong_types_and_unknown_keys_fall_back_to_defaults_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(
        json.dumps({"version": 2, "values": {"telemetry.otlp_endpoint": 5, "nope": True}})
    )
    loaded = load_settings(path)
    assert loaded.get("telemetry.otlp_endpoint") == ""
    assert len(loaded.problems) == 2


def test_a_damaged_settings_file_is_kept_aside_not_lost(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("{ this is not json")
    loaded = load_settings(path)
    assert loaded.as_dict()["telemetry.otlp_endpoint"] == ""
    [kept] = tmp_path.glob("settings.json.damaged-*")
    assert kept.read_text() == "{ this is not json"
    assert loaded.problems


def test_setting_an_undeclared_key_or_wrong_type_is_refused() -> None:
    settings = Settings()
    with pytest.raises(ValueError, match="invalid"):
        settings.set("telemetry.otlp_endpoint", 3)
    with pytest.raises(ValueError, match="invalid"):
        settings.set("no.such.key", "x")


def test_a_version_1_file_loses_the_model_settings_that_providers_replaced(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(
        json.dumps(
            {"version": 1, "values": {"model.name": "qwen3", "polling.max_interval_ms": 9000}}
        )
    )
    loaded = load_settings(path)
    assert loaded.problems == []
    assert loaded.get("polling.max_interval_ms") == 9000
    assert "model.name" not in loaded.as_dict()
