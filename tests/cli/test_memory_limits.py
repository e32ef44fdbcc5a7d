"""Memory follows the input's size (issue 28): a log file with more columns
than a log has (MAX_COLUMNS) stops the run before any row is parsed, exit 2
and one line naming the file and the limit, under a 2 GiB address-space
cap (`resource.setrlimit`) where Arrow's CSV parser aborted the process;
running out of memory while reading a readable file is said as such, never
as unreadable evidence. Each beside its lawful twin."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from builder import run_cli as run

from auditor.logs.raw import MAX_COLUMNS

ROOT = Path(__file__).resolve().parents[2]
CLEAN = ROOT / "sample_logs" / "nz-table-games" / "night-clean.csv"
PLANTED = ROOT / "sample_logs" / "nz-table-games" / "night-planted.csv"
CAP = 2 << 30

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="caps memory with RLIMIT_AS")


def capped(tmp_path: Path, log: Path, *extra: str) -> subprocess.CompletedProcess:
    args = ["check", str(log), "--ruleset", "nz-table-games", "--out", str(tmp_path / "out"),
            "--format", "parquet", *extra]
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, "
            f"({CAP}, {CAP})); from auditor.__main__ import run; "
            f"sys.argv = ['auditor'] + {args!r}; run()")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, check=False)


def clean_rows(n: int = 300, source: Path = CLEAN) -> tuple[list[str], list[list[str]]]:
    with open(source, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1:n + 1]


def wide_csv(path: Path, extra: int, source: Path = CLEAN) -> Path:
    header, rows = clean_rows(source=source)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header + [f"x{i}" for i in range(extra)])
        writer.writerows(r + [""] * extra for r in rows)
    return path


def one_line_refusal(res: subprocess.CompletedProcess, *parts: str) -> None:
    assert res.returncode == 2, res.stdout + res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    for part in parts:
        assert part in lines[0], (part, lines[0])


def test_a_csv_with_50000_empty_extra_columns_stops_naming_the_file_and_limit(tmp_path):
    log = wide_csv(tmp_path / "wide.csv", 50_000)
    one_line_refusal(capped(tmp_path, log), f"{log}:1: the header has 50,017 columns; a log "
                                            f"may have at most {MAX_COLUMNS:,}")


def test_a_csv_one_column_over_the_limit_stops_saying_how_to_raise_it(tmp_path):
    log = wide_csv(tmp_path / "wide.csv", MAX_COLUMNS + 1 - 17)
    one_line_refusal(capped(tmp_path, log), f"{log}:1: the header has 1,025 columns; a log "
                                            f"may have at most 1,024",
                     "--max-columns raises the limit")


def test_max_columns_raises_the_limit_and_the_same_file_is_audited(tmp_path):
    """The 1,025-column file audited under --max-columns 2000 finds what
    the same rows without the extra columns find."""
    wide = wide_csv(tmp_path / "wide.csv", MAX_COLUMNS + 1 - 17, PLANTED)
    res = capped(tmp_path, wide, "--max-columns", "2000")
    assert res.returncode == 1, res.stderr
    narrow = run("check", wide_csv(tmp_path / "narrow.csv", 0, PLANTED), "--ruleset",
                 "nz-table-games", "--out", tmp_path / "narrow", "--format", "parquet")
    assert narrow.exit_code == res.returncode
    keep = ["code", "table_id", "seq"]
    found = [pq.read_table(tmp_path / d / "findings.parquet").select(keep).to_pylist()
             for d in ("out", "narrow")]
    assert found[0] == found[1] and found[0]


@pytest.mark.parametrize("command", ["validate", "verify"])
def test_validate_and_verify_take_max_columns(tmp_path, command):
    log = wide_csv(tmp_path / "wide.csv", MAX_COLUMNS + 1 - 17)
    if command == "validate":
        refused, raised = (run("validate", log, *extra) for extra in
                           ((), ("--max-columns", "1025")))
    else:
        out = tmp_path / "out"
        assert capped(tmp_path, log, "--max-columns", "1025").returncode in (0, 1)
        refused, raised = (run("verify", out, *extra) for extra in
                           ((), ("--max-columns", "1025")))
    assert "1,025 columns; a log may have at most 1,024" in refused.output, refused.output
    assert "--max-columns raises the limit" in refused.output
    assert "columns; a log may have at most" not in raised.output, raised.output
    assert raised.exit_code == 0, raised.output


def test_a_csv_with_a_few_columns_of_the_exporters_own_is_audited(tmp_path):
    log = wide_csv(tmp_path / "extra.csv", 3)
    res = capped(tmp_path, log)
    assert res.returncode in (0, 1), res.stderr
    assert (tmp_path / "out" / "findings.parquet").is_file()


def jsonl(path: Path, extra: int) -> Path:
    header, rows = clean_rows(50)
    with open(path, "w", encoding="utf-8") as fh:
        for r in rows:
            obj = {k: v for k, v in zip(header, r) if v}
            obj.update({f"x{i}": 1 for i in range(extra)})
            fh.write(json.dumps(obj) + "\n")
    return path


@pytest.mark.parametrize("extra", [MAX_COLUMNS + 1, 2])
def test_a_json_lines_file_naming_too_many_columns_stops(tmp_path, extra):
    log = jsonl(tmp_path / "wide.jsonl", extra)
    res = capped(tmp_path, log)
    if extra > MAX_COLUMNS:
        one_line_refusal(res, f"{log}:1: the lines up to here name")
    else:
        assert res.returncode in (0, 1), res.stderr


@pytest.mark.parametrize("extra", [2_000, 2])
def test_a_parquet_file_of_too_many_columns_stops_from_its_footer(tmp_path, extra):
    header, rows = clean_rows(50)
    columns = {name: pa.array([r[i] for r in rows]) for i, name in enumerate(header)}
    columns.update({f"x{i}": pa.nulls(len(rows), pa.string()) for i in range(extra)})
    log = tmp_path / "wide.parquet"
    pq.write_table(pa.table(columns), log)
    res = capped(tmp_path, log)
    if extra > MAX_COLUMNS:
        one_line_refusal(res, f"{log}: the file has 2,017 columns")
    else:
        assert res.returncode in (0, 1), res.stderr


def test_running_out_of_memory_reading_a_parquet_file_is_not_unreadable(tmp_path,
                                                                        monkeypatch):
    """Arrow's allocator failing (ArrowMemoryError) while the file's
    columns are read: the run stops naming the file and the cause."""
    header, rows = clean_rows(50)
    log = tmp_path / "night.parquet"
    pq.write_table(pa.table({n: pa.array([r[i] for r in rows]) for i, n in enumerate(header)}),
                   log)
    from auditor.logs import parquet_format

    def out_of_memory(*args, **kwargs):
        raise pa.ArrowMemoryError("malloc of size 4800000000 failed")

    monkeypatch.setattr(parquet_format, "_parquet_columns", out_of_memory)
    res = run("check", log, "--ruleset", "nz-table-games", "--out", tmp_path / "out")
    assert res.exit_code == 2
    assert res.output.strip() == (f"error: {log}: ran out of memory while reading it (the file "
                                  "may be sound: give the audit more memory, or split the "
                                  "file)")
    assert "not a readable Parquet file" not in res.output
    monkeypatch.undo()
    assert run("check", log, "--ruleset", "nz-table-games", "--out",
               tmp_path / "o2").exit_code in (0, 1)


def dictionary_parquet(path: Path, copies: int, value: str | None = None,
                       rows: int | None = None) -> Path:
    """The clean night `copies` times over (tables T01b, T01c, ...), every
    text column dictionary-encoded (pyarrow's default); `value`: one
    actor_id for every row (one dictionary entry)."""
    header, body = clean_rows(rows or 10_000)
    every = [[r[0] + ("" if k == 0 else chr(ord("a") + k))] + r[1:]
             for k in range(copies) for r in body]
    columns = {n: pa.array([r[i] for r in every]) for i, n in enumerate(header)}
    if value is not None:
        columns["actor_id"] = pa.DictionaryArray.from_arrays(  # (never decoded here)
            pa.array([0] * len(every), pa.int32()), pa.array([value]))
    pq.write_table(pa.table(columns), path, use_dictionary=True)
    return path


def test_a_small_parquet_whose_dictionary_decodes_to_gigabytes_stops(tmp_path):
    """94 KB on disk, one 900 KB actor_id used by 6,987 rows: 6.3 GB
    decoded (Arrow asked for 4.8 GB and died). Refused from the dictionary,
    before any row is decoded."""
    log = dictionary_parquet(tmp_path / "night.parquet", 3, "A" * 900_000)
    assert log.stat().st_size < 200_000
    assert pq.ParquetFile(log).metadata.num_rows == 6_987
    one_line_refusal(capped(tmp_path, log),
                     f"{log}: its columns decode to more than 100 times its "
                     f"{log.stat().st_size:,} bytes (a decompression bomb?); "
                     f"--max-inflate-ratio raises the limit")


def test_a_large_dictionary_value_in_a_few_rows_is_audited(tmp_path):
    """The same value in 15 rows decodes to 13.5 MB, within the 16 MiB a
    file may always decode to: audited, every row replayed."""
    log = dictionary_parquet(tmp_path / "night.parquet", 1, "A" * 900_000, rows=15)
    res = capped(tmp_path, log)
    assert res.returncode in (0, 1), res.stderr
    md = json.loads((tmp_path / "out" / "manifest.json").read_text())["provenance"]
    assert md["rows"] == {"read": 15, "replayed": 15, "quarantined": 0}


@pytest.mark.parametrize("rows, refused", [(200, True), (15, False)])
def test_a_damaged_parquet_read_plain_is_held_to_the_same_cap(tmp_path, monkeypatch, rows,
                                                              refused):
    """A file the dictionary reader cannot read is read again as the plain
    reader reads it: 200 rows of one 900 KB actor_id (180 MB decoded from a
    few KB) are refused there as by the dictionary reader; 15 rows (13.5 MB,
    within the 16 MiB always allowed) are read."""
    from auditor.errors import LogFileError
    from auditor.logs import parquet_format

    log = dictionary_parquet(tmp_path / "night.parquet", 1, "A" * 900_000, rows=rows)

    def damaged(footer):
        raise pa.ArrowInvalid("a dictionary page the reader cannot read")
    monkeypatch.setattr(parquet_format, "_text_columns", damaged)
    if refused:
        with pytest.raises(LogFileError, match="its columns decode to more than 100 times"):
            parquet_format.read_parquet(log)
    else:
        table, lines, _ = parquet_format.read_parquet(log)
        assert table.num_rows == len(lines) == 15


def test_a_dictionary_encoded_parquet_finds_what_the_same_csv_finds(tmp_path):
    header, body = clean_rows(10_000, PLANTED)
    csv_log = tmp_path / "night.csv"
    with open(csv_log, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([header] + body)
    log = tmp_path / "night.parquet"
    pq.write_table(pa.table({n: pa.array([r[i] or None for r in body])
                             for i, n in enumerate(header)}), log, use_dictionary=True)
    assert "RLE_DICTIONARY" in pq.ParquetFile(log).metadata.row_group(0).column(5).encodings
    res = capped(tmp_path, log)
    assert res.returncode == 1, res.stderr
    plain = run("check", csv_log, "--ruleset", "nz-table-games", "--out", tmp_path / "plain",
                "--format", "parquet")
    assert plain.exit_code == 1
    found = [pq.read_table(tmp_path / d / "findings.parquet") for d in ("out", "plain")]
    assert found[0].num_rows > 0
    # (a Parquet row is located by its number, a CSV row by its line: the header is line 1)
    assert [n + 1 for n in found[0]["source_line"].to_pylist()] == \
        found[1]["source_line"].to_pylist()
    located = ["source_file", "source_line"]
    assert found[0].drop_columns(located).equals(found[1].drop_columns(located))
