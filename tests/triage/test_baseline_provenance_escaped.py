"""`auditor baseline create --from` a received findings.parquet prints its
provenance's ruleset id on one escaped line (issue 28): OSC 0 (window
title) and OSC 8 (hyperlink) sequences never reach the terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from builder import run_cli as run

ROOT = Path(__file__).resolve().parents[2]
NIGHT = ROOT / "sample_logs" / "nz-1996" / "night-planted.jsonl"
FORGED = "nz-1996\x1b]0;pwned\x07\x1b]8;;http://evil/\x07click\x1b]8;;\x07\n::error ::x"


@pytest.mark.parametrize("ruleset_id", [FORGED, "nz-1996"])
def test_the_ruleset_id_of_a_received_report_is_printed_escaped(tmp_path, ruleset_id):
    res = run("check", NIGHT, "--ruleset", "nz-1996", "--out", tmp_path / "out",
              "--format", "parquet")
    assert res.exit_code == 1, res.output
    source = tmp_path / "out" / "findings.parquet"
    table = pq.read_table(source)
    meta = json.loads(table.schema.metadata[b"auditor"])
    meta["ruleset"]["id"] = ruleset_id
    received = tmp_path / "received.parquet"
    pq.write_table(table.replace_schema_metadata({b"auditor": json.dumps(meta).encode()}),
                   received)
    made = run("baseline", "create", "--from", received, "--out", tmp_path / "b.json")
    assert made.exit_code == 0, made.output
    assert "\x1b" not in made.output and "\x07" not in made.output
    assert len(made.output.strip().splitlines()) == 1
    shown = "nz-1996\\x1b]0;pwned\\x07" if ruleset_id == FORGED else "nz-1996 to"
    assert shown in made.output
