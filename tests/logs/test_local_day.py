"""The offsets of `table_open` rows (auditor.logs.local_day): a dictionary
event column (as Parquet gives) is matched on its dictionary and codes, and
must pick exactly the rows the plain text column picks."""

from __future__ import annotations

import pyarrow as pa

from auditor.logs.local_day import offsets_by_file, open_offsets

ROWS = {
    "table_id": ["T1", "T1", "T2", "T2", "T1", "T3"],
    "seq": ["1", "2", "1", "2", "3", "x"],
    "ts": ["2026-03-01T20:00:00+13:00", "2026-03-01T20:01:00+13:00",
           "2026-03-01T07:00:00Z", "2026-03-01T07:01:00Z", "2026-03-02T01:00:00-05:30",
           "2026-03-01T07:00:00Z"],
    "event": [" table_open", "roll", "table_open", None, "table_open ", "table_open"],
}
EXPECTED = (("T1", 1, 13 * 60), ("T2", 1, 0), ("T1", 3, -(5 * 60 + 30)))


def test_table_opens_in_a_text_column():
    assert open_offsets(pa.table(ROWS)) == EXPECTED


def test_table_opens_in_a_dictionary_column_of_several_chunks():
    table = pa.table(ROWS)
    event = pa.array(ROWS["event"]).dictionary_encode()
    halves = pa.chunked_array([event.slice(0, 3), pa.array(ROWS["event"][3:]).dictionary_encode()])
    table = table.set_column(table.schema.get_field_index("event"), "event", halves)
    assert pa.types.is_dictionary(table.column("event").type)
    assert open_offsets(table) == EXPECTED


def test_an_event_column_that_is_not_text_has_no_opens():
    table = pa.table({**ROWS, "event": [1, 2, 3, 4, 5, 6]})
    assert open_offsets(table) == ()
    coded = pa.table({**ROWS, "event": pa.array([1, 2, 3, 4, 5, 6]).dictionary_encode()})
    assert open_offsets(coded) == ()


def test_files_read_together_have_each_file_s_own_opens():
    """`offsets_by_file` over files joined (small files typed together):
    each file's opens, as `open_offsets` of the file alone gives them; a
    file without one has none."""
    files = [pa.table(ROWS).slice(a, b - a) for a, b in ((0, 2), (2, 4), (4, 4), (4, 6))]
    joined = pa.concat_tables(files)
    assert offsets_by_file(joined, [f.num_rows for f in files]) == \
        [open_offsets(f) for f in files] == \
        [(("T1", 1, 13 * 60),), (("T2", 1, 0),), (), (("T1", 3, -(5 * 60 + 30)),)]
    assert offsets_by_file(pa.table({"event": ["table_open"]}), [1]) == [()]
