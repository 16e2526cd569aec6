"""What a built wheel ships: an installed Mooring has its demo samples, not only a checkout."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_a_built_wheel_contains_the_sample_csvs_the_migrations_and_the_icon(tmp_path: Path) -> None:
    source = tmp_path / "src"
    shutil.copytree(
        REPO,
        source,
        symlinks=True,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__"
        ),
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--quiet",
            "--wheel-dir",
            str(tmp_path / "dist"),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    [wheel] = (tmp_path / "dist").glob("mooring-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    samples = {n.rsplit("/", 1)[-1] for n in names if n.startswith("mooring/demo_server/sample")}
    assert {
        "suppliers_clean.csv",
        "suppliers_ambiguous_id.csv",
        "suppliers_bad_rows.csv",
        "README.md",
    } <= samples
    assert any(n.startswith("mooring/storage/migrations/versions/0001") for n in names)
    assert not any("generated" in n for n in names)  # the large generated file stays out
    # The window's icon (resources/icons, linked into mooring/ui).
    assert "mooring/ui/icons/io.mooring.Mooring.svg" in names
    assert "mooring/ui/icons/hicolor/48x48/apps/io.mooring.Mooring.png" in names
