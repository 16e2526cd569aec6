"""Pure parts of the demo server: CSV rules, configuration, wire shapes, the sample generator."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from mooring.demo_server import suppliers
from mooring.demo_server.config import parse_config
from mooring.demo_server.extension import caller_scope
from mooring.demo_server.samples import write_large
from tests.demo_server.helpers import SAMPLES


def test_identifier_detection_is_certain_only_for_a_single_candidate() -> None:
    assert suppliers.identifier_candidates(["supplier_id", "vendor_code", "name"]) == [
        "supplier_id"
    ]
    assert suppliers.identifier_candidates(["Vendor Code", "Name", "Country"]) == ["Vendor Code"]
    with (SAMPLES / "suppliers_ambiguous_id.csv").open() as handle:
        headers = next(csv.reader(handle))
    assert suppliers.identifier_candidates(headers) == ["vendor_code", "erp_id"]
    assert suppliers.identifier_candidates(["name", "country"]) == []


def test_samples_shown_to_the_user_are_short_and_safe() -> None:
    assert suppliers.safe_sample("jane.doe@example.com") == "j***@example.com"
    assert suppliers.safe_sample("bell\x07\x1b[31mred") == "bell  [31mred"
    assert len(suppliers.safe_sample("x" * 200)) == suppliers.SAMPLE_CHARS


def test_flags_override_environment_and_faults_are_off_by_default(tmp_path: Path) -> None:
    env = {
        "MOORING_DEMO_TTL_MS": "5000",
        "MOORING_DEMO_POLL_INTERVAL_MS": "250",
        "XDG_DATA_HOME": str(tmp_path),
    }
    config = parse_config(["--poll-interval-ms", "75"], env)
    assert (config.ttl_ms, config.poll_interval_ms, config.host) == (5000, 75, "127.0.0.1")
    assert config.store == tmp_path / "mooring" / "demo-server.sqlite3"
    assert config.faults.drop_create_reply == 0
    assert config.faults.forget_after_ms is None
    assert config.faults.token_expires_after is None
    assert parse_config(["--ttl-ms", "none"], env).ttl_ms is None
    with pytest.raises(SystemExit):
        parse_config(["--ttl-ms", "-1"], env)


def test_caller_scope_hashes_the_bearer_token() -> None:
    alice = caller_scope({"authorization": "Bearer alice"})
    assert alice.startswith("bearer:")
    assert "alice" not in alice
    assert alice != caller_scope({"authorization": "Bearer bob"})
    assert caller_scope(None) == caller_scope({}) == "anonymous"


def test_generated_large_file_has_every_thousandth_row_invalid(tmp_path: Path) -> None:
    path = write_large(tmp_path / "big.csv", 3000)
    with suppliers.open_csv(path) as handle:
        headers, rows = suppliers.data_rows(handle)
        columns = suppliers.column_map(headers, "supplier_id")
        outcomes = [
            suppliers.validate_row(n, cells, len(headers), columns)
            for n, cells in enumerate(rows, 1)
        ]
    rejected = [o for o in outcomes if isinstance(o, suppliers.RejectedRow)]
    assert [r.row for r in rejected] == [1000, 2000, 3000]
    assert write_large(tmp_path / "again.csv", 3000).read_bytes() == path.read_bytes()
