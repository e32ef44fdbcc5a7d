"""Where each table's log in a file begins and ends, and the rows that
establish the table's state again: what the audit needs to know whether a
table's log in this audit starts or ends in the middle of a session
(`auditor.audit.midsession`). Taken as each file is loaded (a few rows per
table: the first, the last and the rare events below), so it travels with
the file's provenance through every engine."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: The events that establish some of a table's state (see docs/decisions.md).
MARKERS = ("table_open", "table_close", "dice_received", "dice_accepted", "player_join")
#: The dice custody events whose dice are kept (+1: the dice come to the
#: table, -1: they leave it for good), under the marker "dice".
DICE_MOVES = (("dice_received", 1), ("dice_removed", -1))
#: Frequent events of which only each table's last seq is kept.
LAST_ONLY = ("roll", "settlement_complete")


@dataclass(frozen=True)
class TableMarks:
    """One table's log in one file: its first and last rows (seq, event) and
    its marker events (event -> its first and last seq; LAST_ONLY's: the
    last only; `player_join`: (first seq, seat) per seat; "dice": (seq, +1
    or -1, serials) per DICE_MOVES row)."""

    first: tuple[int, str]
    last: tuple[int, str]
    markers: dict = field(default_factory=dict)


def table_marks(events: pa.Table) -> dict[str, TableMarks]:
    """Per table id (as keyed in `events`), its marks in this file. Worked
    a slice of rows at a time on the columns' dictionary codes (no text per
    row, and no temporary larger than a slice: at 10M events the whole-file
    arrays cost more in fresh pages than in arithmetic)."""
    found = _Found()
    for start in range(0, events.num_rows, MARK_SLICE_ROWS):
        found.add(events.slice(start, MARK_SLICE_ROWS), start)
    return found.marks()


def marks_by_file(events: pa.Table, rows: list[int]) -> list[dict[str, TableMarks]]:
    """`table_marks` of each file of small files typed together (`rows`:
    each file's row count, in file order), found in one pass over them all
    (a file of a few rows paid the whole pass alone): a table is keyed with
    its file, so one table id in two files (one table on two nights) is two
    tables, as in two calls."""
    found = _Found(np.repeat(np.arange(len(rows)), rows))
    for start in range(0, events.num_rows, MARK_SLICE_ROWS):
        found.add(events.slice(start, MARK_SLICE_ROWS), start)
    out: list[dict[str, TableMarks]] = [{} for _ in rows]
    for (file, name), marks in found.marks().items():
        out[file][name] = marks
    return out


def joined_marks(pieces: list[dict[str, TableMarks]]) -> dict[str, TableMarks]:
    """One file's marks from those of its pieces (rows [a, b) each, in row
    order: `auditor.run.pieces`), as `table_marks` of the whole file gives
    them where a table has rows in several pieces (its rows interleaved
    with other tables'): its first row the least seq's (the earlier
    piece's on a tie), its last the greatest seq's (the later piece's on a
    tie), each marker's least and greatest seqs, a seat's first join, the
    dice moves in row order."""
    out: dict[str, TableMarks] = {}
    for marks in pieces:
        for name, later in marks.items():
            out[name] = later if name not in out else _after(out[name], later)
    return out


#: The order `_Found.marks` gives a table's markers in.
_MARKER_ORDER = (*(ev for ev in (*MARKERS, *LAST_ONLY) if ev != "player_join"),
                 "player_join", "dice")


def _after(earlier: TableMarks, later: TableMarks) -> TableMarks:
    """One table's marks in two pieces of a file, `later` after `earlier`."""
    markers = dict(earlier.markers)
    for event, seqs in later.markers.items():
        had = markers.get(event)
        if had is None:
            markers[event] = seqs
        elif event in LAST_ONLY:
            markers[event] = [max(had[0], seqs[0])]
        elif event == "player_join":
            first: dict = {}
            for s, seat in [*had, *seqs]:
                if seat not in first or s < first[seat]:
                    first[seat] = s
            markers[event] = sorted(((s, seat) for seat, s in first.items()),
                                    key=lambda joined: joined[0])
        elif event == "dice":
            markers[event] = [*had, *seqs]
        else:
            markers[event] = sorted({min([*had, *seqs]), max([*had, *seqs])})
    return TableMarks(later.first if later.first[0] < earlier.first[0] else earlier.first,
                      later.last if later.last[0] >= earlier.last[0] else earlier.last,
                      {event: markers[event] for event in _MARKER_ORDER if event in markers})


#: Rows of a file worked on at a time by `table_marks`.
MARK_SLICE_ROWS = 1 << 20


class _Found:
    """What `table_marks` has found so far, keyed by table id: the least
    seq (with the file row first holding it) and the greatest, with their
    rows' events; the markers' first and last seqs; each seat's first join.
    `file_of`: each row's file, where several files are worked together
    (`marks_by_file`): a table is then keyed (file, table id)."""

    def __init__(self, file_of: np.ndarray | None = None):
        self.file_of = file_of
        # name -> [least seq, the file row first holding it, its event,
        #          greatest seq, the event of the last row holding it]
        self.ends: dict[str, list] = {}
        self.low: dict[tuple[str, str], int] = {}
        self.top: dict[tuple[str, str], int] = {}
        self.joined: dict[tuple[str, object], tuple[int, int]] = {}
        self.dice: dict[str, list] = {}
        #: each distinct set of serials once: a night's moves mostly name the
        #: same few sets, and one object named again is pickled once (the
        #: marks cross the pool's pipe with every file and stay with the
        #: main process's provenance: 1,279 moves a table were 55 KB, 0.35 ms
        #: to unpickle, with a set apiece)
        self.serial_sets: dict[tuple, tuple] = {}

    def add(self, part: pa.Table, offset: int) -> None:
        t, tables = _coded(part.column("table_id"))
        if self.file_of is not None:
            t, tables = _with_file(t, tables, self.file_of[offset:offset + len(t)])
        e, names = _coded(part.column("event"))
        seq_col = part.column("seq")
        seq = (pc.fill_null(seq_col, -1) if seq_col.null_count else seq_col)
        seq = _numpy(seq).astype(np.int64, copy=False)
        n = len(tables)
        lo = np.full(n + 1, np.iinfo(np.int64).max, dtype=np.int64)  # (slot n: no table)
        hi = np.full(n + 1, np.iinfo(np.int64).min, dtype=np.int64)
        np.minimum.at(lo, t, seq)
        np.maximum.at(hi, t, seq)
        at_lo = np.flatnonzero(seq == lo[t])
        at_hi = np.flatnonzero(seq == hi[t])
        first_lo = _first_of(t, at_lo)
        last_hi = _first_of(t, at_hi[::-1])
        for k in np.flatnonzero(lo[:n] <= hi[:n]).tolist():
            r_lo, r_hi = first_lo[k], last_hi[k]
            here = [int(lo[k]), offset + r_lo, _name(names, e[r_lo]),
                    int(hi[k]), _name(names, e[r_hi])]
            ends = self.ends.setdefault(tables[k], here)
            if here[0] < ends[0]:  # (an equal least seq: its first row stands)
                ends[0:3] = here[0:3]
            if here[3] >= ends[3]:  # (an equal greatest seq: its last row)
                ends[3:5] = here[3:5]
        # Every marker's rows in one pass over the codes: each event's
        # group (0: none), then the rows of each group.
        moves = dict(DICE_MOVES)
        kinds = [ev for ev in dict.fromkeys((*MARKERS, *LAST_ONLY, *moves)) if ev in names]
        group_of = {ev: g for g, ev in enumerate(kinds, start=1)}
        group = np.zeros(len(names) + 1, dtype=np.int8)  # (the last slot: code -1)
        for code, name in enumerate(names):
            group[code] = group_of.get(name, 0)
        of = group[e]
        marked = np.flatnonzero(of)
        of = of[marked]
        dice_rows = []
        for g, ev in enumerate(kinds, start=1):
            at = marked[of == g]
            if ev in moves:
                dice_rows.append(at)
            if ev == "player_join":
                self._joins(part, at, t, tables, seq, offset)
                continue
            if ev not in (*MARKERS, *LAST_ONLY):
                continue
            low = np.full(n + 1, np.iinfo(np.int64).max, dtype=np.int64)
            top = np.full(n + 1, np.iinfo(np.int64).min, dtype=np.int64)
            np.minimum.at(low, t[at], seq[at])
            np.maximum.at(top, t[at], seq[at])
            for k in np.flatnonzero(top[:n] > np.iinfo(np.int64).min).tolist():
                key = (tables[k], ev)
                self.low[key] = min(self.low.get(key, int(low[k])), int(low[k]))
                self.top[key] = max(self.top.get(key, int(top[k])), int(top[k]))
        if dice_rows:
            self._dice_moves(part, np.sort(np.concatenate(dice_rows)), e, names, t, tables,
                             seq)

    def _dice_moves(self, part: pa.Table, at: np.ndarray, e: np.ndarray, names: list,
                    t: np.ndarray, tables: list, seq: np.ndarray) -> None:
        """The dice each dice_received brings and each dice_removed takes
        away (rows `at`, a few a night, in file order): whether those
        received since a mid-session start form a full set again."""
        if "dice" not in part.column_names:
            return
        sign = dict(DICE_MOVES)
        named = part.column("dice").take(pa.array(at)).to_pylist()
        for r, text in zip(at.tolist(), named):
            k = int(t[r])
            if k >= 0:
                serials = tuple(sorted({d.strip() for d in str(text or "").split(",")
                                        if d.strip()}))
                serials = self.serial_sets.setdefault(serials, serials)
                self.dice.setdefault(tables[k], []).append(
                    (int(seq[r]), sign[names[e[r]]], serials))

    def _joins(self, part: pa.Table, at: np.ndarray, t: np.ndarray, tables: list,
               seq: np.ndarray, offset: int) -> None:
        """Each seat's first `player_join` (rows `at` of `part`)."""
        if "seat" not in part.column_names:
            return
        seats = part.column("seat").take(pa.array(at)).to_pylist()
        joined = self.joined
        for r, seat in zip(at.tolist(), seats):
            k = int(t[r])
            if k < 0:
                continue
            key, s = (tables[k], seat), int(seq[r])
            if key not in joined or s < joined[key][0]:
                joined[key] = (s, joined[key][1] if key in joined else offset + r)

    def marks(self) -> dict[str, TableMarks]:
        # Tables in the order of the first row holding their least seq.
        order = sorted(self.ends, key=lambda name: self.ends[name][1])
        markers: dict[str, dict] = {}
        for name in order:
            for ev in (*MARKERS, *LAST_ONLY):
                if (name, ev) in self.top:
                    top = self.top[(name, ev)]
                    markers.setdefault(name, {})[ev] = \
                        [top] if ev in LAST_ONLY else sorted({self.low[(name, ev)], top})
        for (name, seat), (s, _) in sorted(self.joined.items(), key=lambda kv: kv[1]):
            markers.setdefault(name, {}).setdefault("player_join", []).append((s, seat))
        for name in order:
            if name in self.dice:
                markers.setdefault(name, {})["dice"] = self.dice[name]
        return {name: TableMarks((self.ends[name][0], self.ends[name][2]),
                                 (self.ends[name][3], self.ends[name][4]),
                                 markers.get(name, {}))
                for name in order}


def _first_of(t: np.ndarray, rows: np.ndarray) -> dict[int, int]:
    """Per table code, the first of `rows` (in the order given) at it."""
    codes, index = np.unique(t[rows], return_index=True)
    return dict(zip(codes.tolist(), rows[index].tolist()))


def _name(names: list, code) -> str | None:
    return names[code] if code >= 0 else None


def _numpy(col) -> np.ndarray:
    """A column's values as one numpy array (copied only when in pieces)."""
    if isinstance(col, pa.ChunkedArray):
        col = col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()
    return col.to_numpy(zero_copy_only=False)


def _with_file(t: np.ndarray, tables: list, file_of: np.ndarray) -> tuple[np.ndarray, list]:
    """Table codes (-1: none) and ids made (file, table id) codes and keys,
    for the pairs held only (a dense look-up: few files and tables a batch,
    no sort)."""
    width = max(len(tables), 1)
    held = t >= 0
    pair = np.where(held, file_of * width + t, 0)
    present = np.zeros(int(file_of[-1] + 1) * width if len(t) else 0, dtype=bool)
    present[pair[held]] = True
    coded = np.where(held, (np.cumsum(present) - 1)[pair], -1)
    return coded, [(p // width, tables[p % width]) for p in np.flatnonzero(present).tolist()]


def _coded(col) -> tuple[np.ndarray, list]:
    """A text column as integer codes (-1: null) and the values they name.
    A dictionary column (as loaded) is read chunk by chunk into one array of
    codes, not joined, filled and widened whole (10M events: 0.2 s -> 15 ms
    a column)."""
    if isinstance(col, pa.ChunkedArray) and pa.types.is_dictionary(col.type) \
            and col.num_chunks:
        unified = col.unify_dictionaries() if col.num_chunks > 1 else col
        codes = np.empty(len(col), dtype=np.int32)
        at = 0
        for chunk in unified.chunks:
            indices = chunk.indices
            part = (pc.fill_null(indices, -1) if indices.null_count else indices) \
                .to_numpy(zero_copy_only=False)
            codes[at:at + len(part)] = part
            at += len(part)
        values = unified.chunk(0).dictionary
        if not pa.types.is_string(values.type):
            values = pc.cast(values, pa.string())
        return codes, values.to_pylist()
    if isinstance(col, pa.ChunkedArray):
        if pa.types.is_dictionary(col.type) and col.num_chunks > 1:
            col = col.unify_dictionaries()
        col = col.combine_chunks() if col.num_chunks else pa.array([], col.type)
    if not pa.types.is_dictionary(col.type):
        col = pc.dictionary_encode(col)
    values = col.dictionary
    if not pa.types.is_string(values.type):
        values = pc.cast(values, pa.string())
    codes = pc.fill_null(col.indices, -1).to_numpy(zero_copy_only=False)
    return codes.astype(np.int64, copy=False), values.to_pylist()
