"""`table_marks` (where each table's log in a file begins and ends, and its
marker events) against a plain row-by-row reading of the same rules, on
random files cut into pieces and worked a few rows at a time: the slices
must never change what is found."""

from __future__ import annotations

import pickle
import random

import pyarrow as pa
import pytest

from auditor.logs import sessions
from auditor.logs.sessions import DICE_MOVES, LAST_ONLY, MARKERS, marks_by_file, table_marks

EVENTS = ["roll", "table_open", "table_close", "player_join", "dice_received",
          "dice_accepted", "settlement_complete", "bet", "dice_removed", None]


def reference(rows: list[dict]) -> list:
    """The marks read row by row: per table (in the order of the row first
    holding its least seq), the least seq and the event of the first row
    holding it, the greatest and the event of the last row holding it; each
    marker's first and last seq (LAST_ONLY: the last); each seat's first
    join, in order of seq; the dice each dice_received brings (+1) and each
    dice_removed takes away (-1), in file order."""
    tables: dict[str, dict] = {}
    for r in rows:
        if r["table_id"] is None:
            continue
        seq = -1 if r["seq"] is None else r["seq"]
        t = tables.setdefault(r["table_id"],
                              {"lo": None, "hi": None, "seen": {}, "join": {}, "dice": []})
        if t["lo"] is None or seq < t["lo"][0]:
            t["lo"] = (seq, r["event"])
        if t["hi"] is None or seq >= t["hi"][0]:
            t["hi"] = (seq, r["event"])
        if r["event"] in (*MARKERS, *LAST_ONLY) and r["event"] != "player_join":
            t["seen"].setdefault(r["event"], []).append(seq)
        if r["event"] in dict(DICE_MOVES):
            serials = tuple(sorted({d.strip() for d in (r["dice"] or "").split(",")
                                    if d.strip()}))
            t["dice"].append((seq, dict(DICE_MOVES)[r["event"]], serials))
        if r["event"] == "player_join" and r["seat"] not in t["join"]:
            t["join"][r["seat"]] = seq
        elif r["event"] == "player_join":
            t["join"][r["seat"]] = min(t["join"][r["seat"]], seq)
    first_row = {}
    for i, r in enumerate(rows):
        t = tables.get(r["table_id"])
        seq = -1 if r["seq"] is None else r["seq"]
        if t is not None and seq == t["lo"][0]:
            first_row.setdefault(r["table_id"], i)
    out = []
    for name in sorted(tables, key=first_row.get):
        t = tables[name]
        markers = {ev: [max(t["seen"][ev])] if ev in LAST_ONLY
                   else sorted({min(t["seen"][ev]), max(t["seen"][ev])})
                   for ev in (*MARKERS, *LAST_ONLY) if ev in t["seen"]}
        if t["join"]:
            markers["player_join"] = sorted(((s, seat) for seat, s in t["join"].items()),
                                            key=lambda x: x[0])
        if t["dice"]:
            markers["dice"] = t["dice"]
        out.append((name, t["lo"], t["hi"], markers))
    return out


def found(events: pa.Table) -> list:
    return [(k, m.first, m.last, m.markers) for k, m in table_marks(events).items()]


def random_file(rng: random.Random) -> tuple[list[dict], pa.Table]:
    n = rng.randint(1, 80)
    rows = [{"table_id": rng.choice(["T01", "T02", "T03", None]),
             "event": rng.choice(EVENTS),
             "seq": None if rng.random() < .05 else rng.randint(-3, 20),
             "seat": rng.choice([1, 2, None]),
             "dice": rng.choice(["A1,A2", "B1", " A3 , A1", "", None])} for _ in range(n)]
    cuts = sorted(rng.sample(range(1, n), min(n - 1, rng.randint(0, 4)))) if n > 1 else []

    def pieces(name, typ, dictionary):
        out, at = [], 0
        for end in [*cuts, n]:
            part = pa.array([r[name] for r in rows[at:end]], type=typ)
            out.append(part.dictionary_encode() if dictionary else part)
            at = end
        return pa.chunked_array(out)

    table = pa.table({"table_id": pieces("table_id", pa.string(), rng.random() < .7),
                      "event": pieces("event", pa.string(), rng.random() < .7),
                      "seq": pieces("seq", pa.int64(), False),
                      "seat": pieces("seat", pa.int64(), False),
                      "dice": pieces("dice", pa.string(), rng.random() < .5)})
    # (the reference keeps players' seats as the arrays give them back)
    return rows, table


@pytest.mark.parametrize("seed", range(8))
def test_marks_are_those_read_row_by_row_whatever_the_slices(monkeypatch, seed):
    rng = random.Random(seed)
    for _ in range(60):
        rows, table = random_file(rng)
        monkeypatch.setattr(sessions, "MARK_SLICE_ROWS", rng.choice([1, 2, 3, 7, 1 << 20]))
        assert found(table) == reference(rows)


@pytest.mark.parametrize("seed", range(6))
def test_files_worked_together_have_each_file_s_own_marks(monkeypatch, seed):
    """`marks_by_file` over small files typed together: what the reference
    reads in each file alone, the same table ids in several files kept
    apart, whatever the slices."""
    rng = random.Random(100 + seed)
    for _ in range(20):
        files = [random_file(rng) for _ in range(rng.randint(1, 5))]
        encoded = rng.random() < .5  # (text as each file's dictionary, or plain)
        joined = pa.concat_tables([_texts(table, encoded) for _, table in files])
        monkeypatch.setattr(sessions, "MARK_SLICE_ROWS", rng.choice([1, 3, 7, 1 << 20]))
        by_file = marks_by_file(joined, [table.num_rows for _, table in files])
        assert [[(k, m.first, m.last, m.markers) for k, m in marks.items()]
                for marks in by_file] == [reference(rows) for rows, _ in files]


def _texts(table: pa.Table, encoded: bool) -> pa.Table:
    """`table` with every text column plain, or dictionary-encoded."""
    columns = []
    for col in table.columns:
        if pa.types.is_dictionary(col.type) or pa.types.is_string(col.type):
            col = col.cast(pa.string())
            col = col.dictionary_encode() if encoded else col
        columns.append(col)
    return pa.table(columns, names=table.column_names)


def test_a_table_opened_and_closed_in_the_file_and_one_cut_at_both_ends():
    rows = [{"table_id": "T01", "event": "table_open", "seq": 1, "seat": None},
            {"table_id": "T02", "event": "roll", "seq": 40, "seat": None},
            {"table_id": "T01", "event": "player_join", "seq": 2, "seat": 3},
            {"table_id": "T01", "event": "roll", "seq": 3, "seat": None},
            {"table_id": "T02", "event": "dice_received", "seq": 41, "seat": None},
            {"table_id": "T02", "event": "roll", "seq": 42, "seat": None},
            {"table_id": "T01", "event": "table_close", "seq": 4, "seat": None}]
    table = pa.table({k: [r[k] for r in rows] for k in rows[0]})
    assert found(table) == [
        ("T01", (1, "table_open"), (4, "table_close"),
         {"table_open": [1], "table_close": [4], "roll": [3], "player_join": [(2, 3)]}),
        ("T02", (40, "roll"), (42, "roll"), {"dice_received": [41], "roll": [42]})]


def test_one_set_of_dice_moved_again_and_again_is_kept_once():
    """The dice moves of a night name the same few sets of serials: each
    set is one object however often it is named (the marks cross the
    pool's pipe with every file, and a set named again is pickled once),
    and what is found is unchanged."""
    rows = [{"table_id": "T01", "event": event, "seq": seq, "dice": dice}
            for seq, (event, dice) in enumerate(
                [("dice_received", "A1,A2"), ("dice_removed", "A2, A1"),
                 ("dice_received", "B1"), ("dice_removed", "B1"),
                 ("dice_received", "A1,A2")] * 40, start=1)]
    table = pa.table({k: [r[k] for r in rows] for k in rows[0]})
    [marks] = table_marks(table).values()
    moves = marks.markers["dice"]
    assert moves == [(r["seq"], dict(DICE_MOVES)[r["event"]],
                      tuple(sorted(d.strip() for d in r["dice"].split(",")))) for r in rows]
    assert len({id(serials) for _, _, serials in moves}) == 2
    again = pickle.loads(pickle.dumps(moves))
    assert again == moves and len({id(serials) for _, _, serials in again}) == 2
