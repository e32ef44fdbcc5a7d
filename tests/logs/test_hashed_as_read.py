"""The bytes hashed are the bytes read (issue 28): a log renamed over while
it is read (what an exporter does when it replaces a file) never pairs one
file's SHA-256 with another file's rows. The replacement is made the moment
the auditor first opens the log; the report must then hold the first
file's hash and rows, or the second's, never a mix."""

from __future__ import annotations

import builtins
import gzip
import hashlib
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest
from builder import lawful_table, report_findings, report_provenance
from builder import run_cli as run


def two_logs(tmp_path: Path, suffix: str) -> tuple[Path, Path]:
    """A: a lawful table with one stick breach; B: the same table, lawful."""
    csvs = []
    for name, flags in (("a", "no_stick"), ("b", "stick")):
        b = lawful_table()
        b.play(2, 4, 2)
        b.pass_back(2, flags=flags)
        csvs.append(b.write_csv(tmp_path / f"{name}.csv"))
    out = []
    for src in csvs:
        path = src.with_name(src.stem + "-log" + suffix)
        if suffix == ".parquet":
            pq.write_table(pa_csv.read_csv(src, convert_options=pa_csv.ConvertOptions(
                column_types={c: pa.string() for c in ("seat", "die1", "die2", "total",
                                                        "amount", "seq")})), path)
        elif suffix == ".csv.gz":
            path.write_bytes(gzip.compress(src.read_bytes(), mtime=0))
        else:
            path.write_bytes(src.read_bytes())
        out.append(path)
    return out[0], out[1]


def swapped_on_first_open(monkeypatch, log: Path, other: Path, nth: int = 1) -> None:
    """`other` renamed over `log` just after the auditor first (`nth`) opens `log`."""
    real_open = builtins.open
    done = []

    def opening(file, *args, **kwargs):
        fh = real_open(file, *args, **kwargs)
        if len(done) < nth and isinstance(file, (str, Path)) and Path(file) == log:
            done.append(True)
            if len(done) == nth:
                os.replace(other, log)
        return fh

    monkeypatch.setattr(builtins, "open", opening)


@pytest.mark.parametrize(("suffix", "planned"), [(".parquet", False), (".csv.gz", False),
                                               (".csv", False), (".csv", True)])
@pytest.mark.parametrize("swap", [True, False])
def test_the_hash_and_the_rows_come_from_one_opened_file(tmp_path, monkeypatch, suffix, swap,
                                                         planned):
    """A plain CSV file is first opened by the plan (its first and last lines:
    where it could be cut), then read: replaced at the read's open, the
    report holds the first file's hash and rows; at the plan's (`planned`),
    the second's."""
    a, b = two_logs(tmp_path, suffix)
    hash_a, hash_b = (hashlib.sha256(p.read_bytes()).hexdigest() for p in (a, b))
    if swap:  # (the lawful twin: nothing replaces the file)
        swapped_on_first_open(monkeypatch, a, b, 2 if suffix == ".csv" and not planned else 1)
    result = run("check", a, "--ruleset", "nz-table-games", "--out", tmp_path / "out",
                 "--format", "parquet")
    monkeypatch.undo()
    assert result.exit_code == 0, result.output  # (a minor finding, or none)
    prov = report_provenance(tmp_path / "out")
    found = report_findings(tmp_path / "out")
    if swap and planned:
        assert prov["inputs"][0]["sha256"] == hash_b and list(found["code"]) == []
    else:
        assert prov["inputs"][0]["sha256"] == hash_a
        assert list(found["code"]) == ["dice.stick_not_used"]
