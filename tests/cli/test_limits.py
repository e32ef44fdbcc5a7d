"""Limits a user can rely on (docs/limits.md): the largest cell accepted, a
table spread over 200 files, 10,000 small files in one folder."""

from __future__ import annotations

import base64
import json
import random

import pyarrow.parquet as pq
import pytest
from builder import report_provenance
from builder import run_cli as run
from test_fuzz import apply_row_op, session_rows, write_form

from auditor.logs.raw import MAX_CELL_BYTES
from auditor.logs.schema import COLUMN_NAMES

# --- the largest cell --------------------------------------------------------------------

@pytest.mark.parametrize("form", ["csv", "jsonl", "parquet", "csv.gz"])
def test_a_cell_over_one_mib_quarantines_its_row(tmp_path, form):
    rows = session_rows((21, 1, 2))
    rows = apply_row_op(("set", 5, "actor_id", "é" * (MAX_CELL_BYTES // 2) + "x"), rows)
    rows = apply_row_op(("set", 7, "player_id", "p" * MAX_CELL_BYTES), rows)  # exactly 1 MiB
    path = write_form(rows, form, tmp_path)
    res = run("check", path, "-r", "nz-table-games", "--out", tmp_path / "out")
    assert res.exit_code == 1, res.output
    md = report_provenance(tmp_path / "out")
    assert md["rows"] == {"read": len(rows), "replayed": len(rows) - 1, "quarantined": 1}
    q = pq.read_table(tmp_path / "out" / "quarantine.parquet").to_pylist()
    assert len(q) == 1
    line = 7 if form.startswith("csv") else 6  # the CSV header is line 1; Parquet: row 6
    assert q[0]["source_line"] == line and q[0]["seq"] == rows[5]["seq"]
    assert q[0]["reason"] == (f"actor_id is {MAX_CELL_BYTES + 1} bytes; a cell may hold at "
                              f"most {MAX_CELL_BYTES}")
    raw = json.loads(q[0]["raw"])
    assert raw["actor_id"].endswith(f"… [{MAX_CELL_BYTES + 1} bytes, truncated]")
    assert len(q[0]["raw"]) < 4096  # the quarantine keeps the start of the cell only


def test_huge_cells_in_every_row_do_not_blow_up(tmp_path):
    """Every row holding a 2 MiB cell (a 24 MiB file): each row quarantined,
    the quarantine holding only the start of each cell."""
    rows = session_rows((22, 1, 1))[:12]
    # (sizes differ a little: one same reason on every row would stop the run)
    rows = [dict(r, note="n" * (2 * MAX_CELL_BYTES + i)) for i, r in enumerate(rows)]
    path = write_form(rows, "csv", tmp_path)
    res = run("check", path, "-r", "nz-table-games", "--out", tmp_path / "out")
    assert res.exit_code == 1, res.output
    md = report_provenance(tmp_path / "out")
    assert md["rows"] == {"read": len(rows), "replayed": 0, "quarantined": len(rows)}
    size = (tmp_path / "out" / "quarantine.parquet").stat().st_size
    assert size < 200_000


@pytest.mark.parametrize("form", ["csv", "csv.gz"])
def test_a_csv_row_of_20_mib_reads(tmp_path, form):
    """A row far longer than the block Arrow parses a CSV file in (4 MiB):
    twenty cells of 1 MiB each read, and the row is replayed."""
    rows = session_rows((21, 1, 2))
    for k in range(20):
        # text as varied as a real note's (one letter repeated would gzip a
        # thousandfold, past the decompression-bomb ratio: *Limits*)
        note = base64.b64encode(random.Random(k).randbytes(MAX_CELL_BYTES * 3 // 4)).decode()
        rows = apply_row_op(("set", 5, f"note{k}", note), rows)
    path = write_form(rows, form, tmp_path)
    res = run("check", path, "-r", "nz-table-games", "--out", tmp_path / "out")
    assert res.exit_code == 0, res.output
    md = report_provenance(tmp_path / "out")
    assert md["rows"] == {"read": len(rows), "replayed": len(rows), "quarantined": 0}


@pytest.mark.parametrize("where", [5, -1])
def test_a_csv_cell_of_9_mib_quarantines_its_row_only(tmp_path, where):
    """One 9 MiB cell (a record longer than two blocks), early or last in
    the file: that row is quarantined for its cell, every other row read."""
    rows = session_rows((21, 1, 2))
    rows = apply_row_op(("set", where % len(rows), "note", "n" * (9 << 20)), rows)
    path = write_form(rows, "csv", tmp_path)
    res = run("validate", path)
    assert res.exit_code == 1, res.output
    assert f"note is {9 << 20} bytes; a cell may hold at most {MAX_CELL_BYTES}" in res.output
    assert f"{len(rows)} row(s) read, 1 quarantined" in res.output


# --- many files --------------------------------------------------------------------------

def test_a_table_spread_over_200_files(tmp_path):
    rows = session_rows((23, 1, 40))
    assert len(rows) >= 400
    forms = ("csv", "jsonl", "parquet", "csv.gz")
    folder = tmp_path / "night"
    for i in range(200):
        part = rows[i::200]  # every file holds every 200th event: seq rises in each file
        sub = folder / f"f{i:03d}"
        sub.mkdir(parents=True)
        write_form(part, forms[i % len(forms)], sub, columns=list(COLUMN_NAMES))
    res = run("check", folder, "-r", "nz-table-games", "--out", tmp_path / "out")
    assert res.exit_code == 0, res.output
    assert "Audited 200 file(s), 1 table(s)" in res.output
    md = report_provenance(tmp_path / "out")
    assert len(md["inputs"]) == 200
    assert md["rows"] == {"read": len(rows), "replayed": len(rows), "quarantined": 0}
    assert md["findings"]["total"] == 0
    assert all(i["rows_read"] == i["rows_replayed"] for i in md["inputs"])


@pytest.fixture(scope="module")
def ten_thousand_files(tmp_path_factory):
    """10,000 tiny logs in one folder, each a table opened and closed."""
    folder = tmp_path_factory.mktemp("many") / "logs"
    folder.mkdir()
    head = "table_id,seq,ts,event,actor_role\n"
    for i in range(10_000):
        (folder / f"t{i:05d}.csv").write_text(
            f"{head}T{i:05d},1,2026-03-01T20:00:00+00:00,table_open,game_supervisor\n"
            f"T{i:05d},2,2026-03-01T20:00:05+00:00,table_close,game_supervisor\n")
    return folder


def test_ten_thousand_small_files_in_one_folder(tmp_path, ten_thousand_files):
    res = run("check", ten_thousand_files, "-r", "nz-table-games", "--out", tmp_path / "out")
    assert res.exit_code == 0, res.output
    assert "Audited 10000 file(s), 10000 table(s), 20000 event(s) replayed of 20000" in res.output
    md = report_provenance(tmp_path / "out")
    assert len(md["inputs"]) == 10_000 and md["findings"]["total"] == 0
    assert all(i["rows_read"] == 2 == i["rows_replayed"] for i in md["inputs"])


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_two_thousand_files_of_four_rows_under_a_memory_cap(tmp_path, jobs):
    """Issue 28: 20,000 files of 4 rows died under a 2 GiB cap, each
    file's typed table holding ~32 KB however few its rows. 2,000 of them,
    in a real process under that cap: audited, every row accounted for."""
    import subprocess
    import sys

    if not sys.platform.startswith("linux"):
        pytest.skip("caps memory with RLIMIT_AS")
    folder = tmp_path / "logs"
    folder.mkdir()
    head = ",".join(COLUMN_NAMES)
    pad = "," * (len(COLUMN_NAMES) - 6)
    for i in range(2_000):
        rows = [f"T{i:04d},{k + 1},2026-03-01T20:00:0{k}+00:00,{event},game_supervisor,S1{pad}"
                for k, event in enumerate(("table_open", "staff_on", "staff_off",
                                           "table_close"))]
        if i % 100 == 7:
            rows[2] = rows[2].replace("2026-03-01T20:00:02", "not a time")
        (folder / f"t{i:04d}.csv").write_text("\n".join([head, *rows]) + "\n")
    cap = 2 << 30
    args = ["check", str(folder), "-r", "nz-table-games", "--out", str(tmp_path / "out"),
            "--format", "parquet", "--jobs", jobs]
    code = (f"import resource, sys; resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap})); "
            f"from auditor.__main__ import run; sys.argv = ['auditor'] + {args!r}; run()")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600, check=False)
    assert res.returncode == 1, res.stderr  # (the quarantined rows fail the audit)
    assert "Audited 2000 file(s), 2000 table(s), 7980 event(s) replayed of 8000" in res.stdout
    md = report_provenance(tmp_path / "out")
    assert md["rows"] == {"read": 8000, "replayed": 7980, "quarantined": 20}
    assert all(i["rows_read"] == 4 == i["rows_replayed"] + i["rows_quarantined"]
               for i in md["inputs"])
