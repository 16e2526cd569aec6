"""The benchmark suite runs end to end and reports every figure (no timing is asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from bench.__main__ import ALL_IDS, parse
from bench.suite import measured, table, unmeasured

REPO = Path(__file__).resolve().parents[2]
ISSUE_IDS = {
    "reconcile_1000",
    "wait_cpu_1000",
    "poll_discipline",
    "poll_cpu_per_get",
    "rss_1000",
    "cli_start",
    "tracing_overhead",
    "gui_stall_reconcile",
    "first_paint_big",
    "notify_latency_subscribed",
    "first_token",
    "import_200k",
    "gui_stall_cards",
    "gui_stall_big_result",
    "gui_stall_local",
}
KEYS = {"id", "what", "value", "baseline", "ratio", "unit", "target", "met"}


def test_every_figure_the_issues_ask_for_has_a_benchmark() -> None:
    assert set(ALL_IDS) >= ISSUE_IDS
    assert len(ALL_IDS) == len(set(ALL_IDS))


def test_an_unknown_id_is_refused_with_the_known_ones_named(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        parse(["--only", "cli_start,warp_speed"])
    err = capsys.readouterr().err
    assert "unknown id(s): warp_speed" in err


def test_the_table_shows_each_figure_and_why_one_is_missing() -> None:
    rows = [
        measured(
            "cli_start", "start", value=120.0, baseline=40.0, unit="ms", target="<= 5x", met=True
        ),
        unmeasured("first_paint_big", "paint", unit="ms", target="<= 1.5x", reason="no display"),
    ]
    assert rows[0]["ratio"] == 3.0
    text = table(rows)
    assert "cli_start" in text
    assert "3x" in text
    assert "first_paint_big: not measured: no display" in text


@pytest.mark.gui
@pytest.mark.timeout(1200)
def test_a_small_run_reports_every_id_with_a_value_or_a_reason(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--size", "small", "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1100,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    assert {"cpu_model", "cores", "python", "os", "mooring_commit"} <= set(report["machine"])
    results = report["results"]
    assert [r["id"] for r in results] == list(ALL_IDS)
    for row in results:
        assert set(row) >= KEYS, row
        if row["value"] is None:
            assert row["met"] is None, row
            assert row["reason"], row
        else:
            assert isinstance(row["value"], int | float), row
            assert row["met"] in (True, False, None), row
    assert "reconcile_1000" in done.stdout  # the table was printed
