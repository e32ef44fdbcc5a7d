"""Damaged inputs audited every way give one audit: a night changed at
random (bytes inserted, deleted, repeated, lines relabelled to other tables,
cells of other types) is read whole and in pieces (JSON Lines, CSV, Parquet), and a month cut into files
of mixed formats is audited by one process and by workers; the reports, the
quarantine and the provenance are the same bytes, or the run stops with the
same error. The months of seeds 7, 17 and 31 lost caveats before
2026-12-06 (`auditor.audit.caveat` searched the gaps as if the tables lay in
name order); the other seeds are kept as they come, cut or split as the
test says, so that a new difference shows. (A line not UTF-8 read two ways
and the table clash named by the first batch to end, found the same day by
many more such inputs, have tests of their own.)"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pieces_check import same_as_once

from auditor.errors import AuditorError
from auditor.generate import INJECTABLE, generate, write_log
from auditor.report.html import COLLECTOR
from auditor.run import AuditJob, pieces, run_audit

#: What a damaged line may hold instead of a value.
ODD_VALUES = [None, True, 1e-7, 12345678901234567890, 2 ** 53 + 1, 0.5, -0.0, {"a": 1},
              [1, 2], "\u2028", "<b>x</b>", "", " T01", "t01", 7, "1e3"]
#: Bytes a damaged file may have gained.
ODD_BYTES = [b"\r", b"\n", b"\x00", b"\xff", b"\xc3", b'"', b"{", b"}", b"\n\n", b"\\",
             b'{"table_id": "T01"}\n', b"x" * 700]


#: The seeds each comparison keeps; `--damaged-seeds N` adds N more to each.
KEPT_SEEDS = {"json_lines": [36, 58, 1002, 7, 11], "csv": [1, 2, 3, 4], "parquet": [3, 5, 8],
              "month": [7, 17, 31, 87]}


def pytest_generate_tests(metafunc):
    if "seed" in metafunc.fixturenames:
        kept = next(seeds for kind, seeds in KEPT_SEEDS.items()
                    if kind in metafunc.function.__name__)
        more = metafunc.config.getoption("--damaged-seeds")
        metafunc.parametrize("seed", kept + list(range(10_000, 10_000 + more)))


@pytest.fixture(scope="module")
def night() -> pa.Table:
    """Five tables of 60 rolls, every code planted."""
    return generate(5, 60, seed=41, inject=list(INJECTABLE)).table


def _damaged_lines(table: pa.Table, rnd: random.Random, path: Path) -> Path:
    """`table` as JSON Lines, its lines and then its bytes changed at random."""
    write_log(table, path)
    rows = [json.loads(line) for line in path.read_bytes().split(b"\n")[:-1]]
    for _ in range(rnd.randint(1, 4)):
        k, op = rnd.randrange(len(rows)), rnd.randrange(4)
        if op == 0:
            rows[k][rnd.choice(["note", "seq", "table_id", "amount", "die1"])] = \
                rnd.choice(ODD_VALUES)
        elif op == 1:
            rows[k].pop(rnd.choice(list(rows[k])))
        elif op == 2:  # (a run of lines given to another table)
            for row in rows[k:k + rnd.randint(1, 400)]:
                row["table_id"] = rnd.choice(["T01", "T02", "T09"])
        else:
            j = rnd.randrange(len(rows))
            rows[k], rows[j] = rows[j], rows[k]
    data = "".join(json.dumps(r) + "\n" for r in rows).encode("utf-8")
    path.write_bytes(_bytes_changed(data, rnd, ODD_BYTES, rnd.randint(0, 4), 0.6))
    return path


def _bytes_changed(data: bytes, rnd: random.Random, odd: list[bytes], times: int,
                   inserted: float) -> bytes:
    """`data` with bytes of `odd` inserted (a share `inserted` of the `times`
    changes) or runs of up to 300 bytes deleted, at random places."""
    changed = bytearray(data)
    for _ in range(times):
        k = rnd.randrange(len(changed))
        if rnd.random() < inserted:
            changed[k:k] = rnd.choice(odd)
        else:
            del changed[k:k + rnd.randint(1, 300)]
    return bytes(changed)


def _damaged_rows(table: pa.Table, rnd: random.Random) -> pa.Table:
    """`table` with rows swapped, repeated, dropped, relabelled or emptied."""
    cols = {name: table.column(name).to_pylist() for name in table.column_names}
    for _ in range(rnd.randint(1, 5)):
        n = len(cols["seq"])
        k, j, op, span = rnd.randrange(n), rnd.randrange(n), rnd.randrange(5), rnd.randint(1, 300)
        for c in cols.values():
            if op == 0:
                c[k], c[j] = c[j], c[k]
            elif op == 1:
                c[k:k] = c[k:k + span]
            elif op == 2:
                del c[k:k + span]
        if op == 3:  # (a run of rows given to another table)
            cols["table_id"][k:k + span] = [rnd.choice(["T01", "T09", None])] * \
                len(cols["table_id"][k:k + span])
        elif op == 4:
            cols[rnd.choice(["seq", "amount", "die1", "ts", "seat"])][k] = None
    return pa.table({name: pa.array(v, table.schema.field(name).type)
                     for name, v in cols.items()})


def _audit(paths: list[Path], ruleset, **how):
    try:
        return run_audit(AuditJob.of(paths, ruleset, collector=COLLECTOR, **how))
    except AuditorError as exc:
        return f"{type(exc).__name__}: {exc}"


def _same(result, once, tmp_path: Path) -> None:
    if isinstance(once, str):
        assert result == once
    else:
        assert not isinstance(result, str), result
        same_as_once(result, once, tmp_path)


def test_a_damaged_json_lines_night_whole_and_in_pieces(night, ruleset, tmp_path, seed,
                                                        monkeypatch):
    path = _damaged_lines(night, random.Random(seed), tmp_path / "night.jsonl")
    _whole_then_in_three_pieces(path, ruleset, tmp_path, monkeypatch, "TEXT_PIECE_ROWS")


def _whole_then_in_three_pieces(path: Path, ruleset, tmp_path: Path, monkeypatch,
                                least: str) -> None:
    """`path` audited read whole (the pieces' `least` lines past it), then
    cut in three pieces: the same audit."""
    monkeypatch.setattr(pieces, "PIECE_BUDGET", 10 ** 9)
    monkeypatch.setattr(pieces, least, 10 ** 9)
    once = _audit([path], ruleset)
    monkeypatch.setattr(pieces, least, 300)
    assert len(pieces.split([path], None, 3)) == 3
    _same(_audit([path], ruleset, jobs=3), once, tmp_path)


#: Bytes a damaged CSV file may have gained.
ODD_CSV_BYTES = [b'"', b'""', b"\n", b"\r", b"\r\n", b",", b"\xff", b"\xe9", b"\x00",
                 b'"\n"', b"\n\n", b"T01,", b"x" * 700]


def test_a_damaged_csv_night_whole_and_in_pieces(night, ruleset, tmp_path, seed, monkeypatch):
    rnd = random.Random(seed)
    path = tmp_path / "night.csv"
    write_log(night, path)
    path.write_bytes(_bytes_changed(path.read_bytes(), rnd, ODD_CSV_BYTES, rnd.randint(1, 5), 0.7))
    _whole_then_in_three_pieces(path, ruleset, tmp_path, monkeypatch, "CSV_PIECE_ROWS")


def test_a_damaged_parquet_night_whole_and_in_pieces(night, ruleset, tmp_path, seed,
                                                     monkeypatch):
    rnd = random.Random(seed)
    path = tmp_path / "night.parquet"
    pq.write_table(_damaged_rows(night, rnd), path,
                           row_group_size=rnd.choice([37, 256, 500]))
    monkeypatch.setattr(pieces, "PIECE_BUDGET", 10 ** 9)
    monkeypatch.setattr(pieces, "PIECE_ROWS", 10 ** 9)
    once = _audit([path], ruleset)
    monkeypatch.setattr(pieces, "PIECE_ROWS", 400)
    assert pieces.split([path], None, 2) is not None
    _same(_audit([path], ruleset, jobs=2), once, tmp_path)


def test_a_damaged_month_of_mixed_files_by_one_process_and_by_workers(
        night, ruleset, tmp_path, seed):
    """The night's rows cut into 2-6 files of random formats at random rows
    (tables crossing files), one folder or two casinos' folders."""
    rnd = random.Random(seed)
    table = _damaged_rows(night, rnd) if rnd.random() < 0.7 else night
    folder, sites = tmp_path / "month", rnd.random() < 0.5
    cuts = sorted(rnd.sample(range(1, table.num_rows), rnd.randint(1, 5)))
    for i, (a, b) in enumerate(zip([0, *cuts], [*cuts, table.num_rows])):
        fmt = rnd.choice(["parquet", "csv", "jsonl", "csv.gz", "jsonl.gz"])
        path = folder / (f"casino-{'ab'[i % 2]}" if sites else "") / f"part{i}.{fmt}"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_log(table.slice(a, b - a), path)
    once = _audit([folder], ruleset, site_from_path=sites)
    _same(_audit([folder], ruleset, jobs=2, site_from_path=sites), once, tmp_path)
