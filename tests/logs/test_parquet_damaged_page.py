"""A Parquet file with a damaged data page: Arrow's reader of dictionaries
takes a page's indices as they are, past the end of its dictionary (found
by hand, 2026-12-07: an internal error where the rows were typed), where
its plain reader refuses them. The page's row group is then damaged
(decision 135: its rows quarantined, saying so, the rest audited), as
where the plain reader refuses it; indices under a null are never looked
at."""

from __future__ import annotations

import io
import random

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from builder import run_cli

from auditor.generate import generate
from auditor.logs.parquet_format import _in_bounds


def _damaged(path) -> None:
    """A log whose `event` page, damaged, reads with indices past its dictionary."""
    buf = io.BytesIO()
    pq.write_table(generate(2, 200, seed=3).table, buf, row_group_size=2000,
                   compression="none")
    data = bytearray(buf.getvalue())
    meta = pq.ParquetFile(io.BytesIO(bytes(data))).metadata
    event = [meta.schema.column(i).name for i in range(meta.num_columns)].index("event")
    rng = random.Random(0)
    at = meta.row_group(0).column(event).data_page_offset + 30 + rng.randrange(100)
    data[at:at + 8] = rng.randbytes(8)
    path.write_bytes(bytes(data))
    chunk = pq.read_table(path, read_dictionary=["event"]).column("event").chunk(0)
    if pc.max(chunk.indices).as_py() < len(chunk.dictionary):  # (another Arrow's decoder)
        pytest.skip("this Arrow reads the damaged page within its dictionary")


#: What each row of the damaged page's row group is quarantined for.
DAMAGED = "could not be decoded in column(s) event: Index not in dictionary bounds"


def _quarantined(out) -> list[str]:
    """The reasons of OUT/quarantine.parquet's rows, each checked to be for
    the damaged page (the first row group: rows 1-2,000)."""
    reasons = pq.read_table(out / "quarantine.parquet").column("reason").to_pylist()
    assert reasons and all(r.startswith("row group 1 of ") and DAMAGED in r
                           for r in reasons), reasons[:1]
    return reasons


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_page_whose_indices_pass_its_dictionary_is_a_damaged_page(tmp_path, jobs):
    path = tmp_path / "night.parquet"
    _damaged(path)
    res = run_cli("check", path, "-r", "nz-table-games", "--out", tmp_path / "out",
                  "--jobs", jobs)
    assert res.exit_code == 1, res.output
    assert "internal error" not in res.output
    assert len(_quarantined(tmp_path / "out")) == 2000
    assert "(2000 quarantined)" in res.output


def _dictionary(indices: list[int], valid: list[bool] | None = None) -> pa.Table:
    """A text column of dictionary ["a", "b"] with these raw indices (a
    null's slot keeping its raw index, as a decoder may leave it)."""
    data = pa.py_buffer(np.asarray(indices, dtype=np.int32).tobytes())
    bitmap = None if valid is None else pa.py_buffer(np.packbits(
        np.asarray(valid, dtype=bool), bitorder="little").tobytes())
    codes = pa.Array.from_buffers(pa.int32(), len(indices), [bitmap, data])
    return pa.table({"event": pa.DictionaryArray.from_arrays(codes, pa.array(["a", "b"]),
                                                             safe=False)})


def test_indices_within_the_dictionary_pass_and_one_past_it_does_not():
    assert _in_bounds(_dictionary([0, 1, 1, 0])).num_rows == 4
    with pytest.raises(pa.ArrowInvalid, match="dictionary bounds"):
        _in_bounds(_dictionary([0, 1, 2]))
    with pytest.raises(pa.ArrowInvalid, match="dictionary bounds"):
        _in_bounds(_dictionary([0, -1]))


def test_a_null_s_slot_is_not_an_index():
    assert _in_bounds(_dictionary([0, 99, 1], [True, False, True])).num_rows == 3
    with pytest.raises(pa.ArrowInvalid, match="dictionary bounds"):
        _in_bounds(_dictionary([0, 99, 7], [True, False, True]))


@pytest.mark.parametrize("in_pieces", [False, True], ids=["whole", "in pieces"])
def test_dask_salvages_the_damaged_page_as_one_process_does(tmp_path, monkeypatch, cluster,
                                                     in_pieces):
    """A dask worker reads the file at its absolute path: the reports name
    it as it was given and hold what one process's do, whether read whole
    or a piece of it met the damaged page."""
    from auditor.run import pieces, stream

    _damaged(tmp_path / "night.parquet")
    if in_pieces:
        monkeypatch.setattr(pieces, "PIECE_ROWS", 400)
        monkeypatch.setattr(pieces, "PIECE_BUDGET", 10 ** 9)
        monkeypatch.setattr(stream, "STREAM_EVENTS", 1)
    monkeypatch.chdir(tmp_path)
    res = run_cli("check", "night.parquet", "-r", "nz-table-games", "--out", "one")
    assert res.exit_code == 1, res.output
    res = run_cli("check", "night.parquet", "-r", "nz-table-games", "--out", "out",
                  "--engine", "dask", "--scheduler", cluster.scheduler_address)
    assert res.exit_code == 1, res.output
    assert str(tmp_path) not in res.output
    assert _quarantined(tmp_path / "out") == _quarantined(tmp_path / "one")
    for name in ("findings.parquet", "quarantine.parquet"):
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "one" / name).read_bytes()
