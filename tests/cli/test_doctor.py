"""``mooring doctor`` and ``--version`` as a user runs them."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

from mooring import __version__
from mooring.storage.db import head_revision
from tests.helpers.processes import run_mooring


def test_version(tmp_path: Path) -> None:
    done = run_mooring("--version", data_dir=tmp_path)
    assert done.returncode == 0
    assert done.stdout.strip() == f"mooring {__version__}"


def test_doctor_creates_and_migrates_the_database_and_reports(tmp_path: Path) -> None:
    done = run_mooring("doctor", "--json", data_dir=tmp_path / "d")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    checks = {c["name"]: c for c in report["checks"]}
    assert report["ok"] is True
    assert str(tmp_path / "d") in checks["data directory"]["summary"]
    assert checks["schema version"]["summary"].startswith(head_revision())
    assert "MemoryKeyring" in checks["keyring"]["summary"]
    assert checks["notifications"]["level"] == "warn"  # no session bus in this test
    assert checks["qt platform"]["summary"]
    assert (tmp_path / "d" / "mooring.sqlite3").exists()


def test_doctor_without_a_keyring_warns_and_says_what_to_do(tmp_path: Path) -> None:
    done = run_mooring("doctor", data_dir=tmp_path, env={"PYTHON_KEYRING_BACKEND": None})
    assert done.returncode == 0, done.stderr
    [line] = [ln for ln in done.stdout.splitlines() if ln.split()[1:2] == ["keyring"]]
    assert line.startswith("WARN")
    assert "--api-key-env VAR" in done.stdout  # what to do without one


def test_a_broken_keyring_configuration_is_a_warning_not_a_crash(tmp_path: Path) -> None:
    done = run_mooring(
        "doctor", data_dir=tmp_path, env={"PYTHON_KEYRING_BACKEND": "no.such.Backend"}
    )
    assert done.returncode == 0, done.stderr
    assert "could not be loaded" in done.stdout


def test_doctor_fails_with_a_clear_message_on_a_corrupt_database(tmp_path: Path) -> None:
    db = tmp_path / "mooring.sqlite3"
    db.write_bytes(b"this is not a database, it is a shopping list\n" * 200)
    before = hashlib.sha256(db.read_bytes()).hexdigest()

    done = run_mooring("doctor", data_dir=tmp_path)
    assert done.returncode == 1
    assert "damaged" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_doctor_refuses_a_newer_database(tmp_path: Path) -> None:
    assert run_mooring("doctor", data_dir=tmp_path).returncode == 0
    conn = sqlite3.connect(tmp_path / "mooring.sqlite3")
    conn.execute("UPDATE alembic_version SET version_num = 'zz99'")
    conn.commit()
    conn.close()
    done = run_mooring("doctor", "--json", data_dir=tmp_path)
    assert done.returncode == 1
    checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
    assert checks["database"]["level"] == "fail"
    assert "newer Mooring" in checks["database"]["summary"]
    assert "Update Mooring" in checks["database"]["hint"]


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    done = run_mooring("frobnicate", data_dir=tmp_path)
    assert done.returncode == 2
    assert "invalid choice" in done.stderr
