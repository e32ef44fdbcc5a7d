"""The offsets of `table_open` rows (auditor.logs.local_day): a dictionary
event column (as Parquet gives) is matched on its dictionary and codes, and
must pick exactly the rows the plain text column picks."""

from __future__ import annotations

import pyarrow as pa

from auditor.logs.local_day import open_offsets

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
