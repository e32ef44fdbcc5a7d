"""Generate realistic, lawful craps table event logs (event-log v1), with
optional planted violations: test data for the auditor and its benchmarks.

    from auditor.generate import generate, write_log
    log = generate(tables=2, rolls=200, seed=7, inject=["call.wrong_total"])
    write_log(log.table, "two_tables.csv.gz")   # or .jsonl, .parquet, ...
    log.planted[0]   # {"code": "call.wrong_total", "table_id": "T01", "seq": ..., "note": ...}

- A lawful log is one the auditor must find nothing in: see
  `auditor.generate.session` for how a table is played.
- `inject` plants each named code once per table (per session with
  `days`): see
  `auditor.generate.inject` for exactly how, and which event each finding
  must point at (`planted[i]["seq"]`).
- Tables are `T01`, `T02`, ...; the output holds them one after another (all
  of T01 in `seq` order, then all of T02, ...), not interleaved by time.
- `days` > 1 plays each table as that many sessions (each `table_open` ...
  `table_close`, played and planted as a table of its own, seq running on
  across them): session d opens `d` days after the first, or ten minutes
  after the session before it closed if that is later (a session may run
  past midnight). Logs of tables kept open for days, as the dask engine
  cuts them (`auditor.run.partition.day_units`).
- `seq` runs 1, 2, 3, ... per table. `ts` starts at `start` plus 30 s per
  table number after the first and rises 2 to 6 whole seconds per event.
- Everything is drawn from generators seeded by (`seed`, table number): the
  same arguments give the same table, and the same bytes from `write_log`.
- `rolls` is the number of valid rolls per table; a table with a planted code
  plays on past it when it had no suitable place for that code yet.
- Don't bets are barred on 12 (the spec's default): a ruleset that bars 2
  disagrees with come-out 2s and 12s. Player ids (`P0001`, ...) are unique
  across all tables of one call.
"""

from __future__ import annotations

import gc
import itertools
import random
from collections.abc import Iterable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from operator import itemgetter

import numpy as np
import pyarrow as pa

from auditor.generate import inject as _inject
from auditor.generate.inject import INJECTABLE, LOG_CODES, PLANTERS
from auditor.generate.session import ROW_COLUMNS, TableSim
from auditor.generate.write import log_format, write_log
from auditor.logs.schema import COLUMN_KINDS, COLUMN_NAMES

DEFAULT_START = datetime(2026, 3, 1, 20, 0, 0, tzinfo=UTC)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
OFFER_ROLES = ("stickperson", "dealer")
TABLE_OFFSET_US = 30_000_000
DAY_US = 86_400_000_000
SESSION_GAP_US = 600_000_000  # at least ten minutes between a close and the next open
STEP_SECONDS = (2, 7)  # seconds between consecutive events: 2..6
MAX_EXTENSIONS = 400    # rounds of extra play while looking for places to plant

_ARROW = {"str": pa.string(), "int": pa.int64(), "ts": pa.timestamp("us", tz="UTC"),
          "amount": pa.float64()}
#: The Arrow schema of a generated log: schema.COLUMN_NAMES, in order.
SCHEMA = pa.schema([(name, _ARROW[COLUMN_KINDS[name]]) for name in COLUMN_NAMES])


@dataclass
class GeneratedLog:
    """A generated log and what was planted in it: dicts {code, table_id,
    seq, note}, sorted by table_id and seq."""
    table: pa.Table
    planted: list[dict] = field(default_factory=list)
    valid_rolls: dict[str, int] = field(default_factory=dict)


#: What the generator can plant that is no violation: a leaning die
#: (`dice.face_bias`, strength `die_lean`), for the dice statistics
#: (docs/dice-integrity.md). Listed in the planted list like the codes.
SIGNALS: tuple[str, ...] = ("dice.face_bias",)
#: The die that leans, in every table (the first of its first set).
LEAN_DIE = "A1"
#: 0.6: the die shows 5 or 6 in about 47% of its rolls, not a third.
DEFAULT_LEAN = 0.6


def check_codes(inject: str | Iterable[str]) -> list[str]:
    """The requested codes, deduplicated in order; a comma-separated string
    is accepted. ValueError names an unknown code and lists the allowed."""
    if isinstance(inject, str):
        inject = inject.split(",")
    codes: list[str] = []
    for code in (c.strip() for c in inject):
        if not code or code in codes:
            continue
        if code not in INJECTABLE and code not in SIGNALS:
            raise ValueError(f"unknown injection code {code!r}; allowed: "
                             f"{', '.join((*INJECTABLE, *SIGNALS))}")
        codes.append(code)
    return codes


def generate(tables: int, rolls: int, seed: int, inject: Sequence[str] = (),
             start: datetime = DEFAULT_START, offer_role: str = "stickperson",
             first_table: int = 1, days: int = 1, die_lean: float = DEFAULT_LEAN) -> GeneratedLog:
    """Play `tables` tables of `rolls` valid rolls each and return the log,
    with each code of `inject` planted once per table. With `offer_role`
    "dealer" the offers after a relinquishment are made by a dealer (NZ 1996
    5.9); the start-of-play offer stays the stickperson's. Tables are named
    T01, T02, ... from `first_table`, so logs meant to be audited together can
    hold different tables. `days` sessions per table: see the module
    docstring. With `dice.face_bias` in `inject`, die A1 of every table
    leans: with chance `die_lean` (0 would be fair) it shows the higher of
    two fair draws, its partner untouched; the game plays the totals so
    thrown (calls and settlements lawful), and the table keeps its first set."""
    codes = check_codes(inject)
    if not 0 <= die_lean <= 1:
        raise ValueError("die_lean must be between 0 and 1")
    if offer_role not in OFFER_ROLES:
        raise ValueError(f"offer_role must be one of {', '.join(OFFER_ROLES)}, not {offer_role!r}")
    if tables < 1 or rolls < 0 or first_table < 1 or days < 1:
        raise ValueError("tables, first_table and days must be at least 1 and rolls at least 0")
    if start.tzinfo is None:
        start = start.replace(tzinfo=UTC)
    base_us = (start - EPOCH) // timedelta(microseconds=1)
    player_numbers = itertools.count(1)
    parts, planted, valid = [], [], {}
    with _no_cyclic_gc():
        for number in range(first_table, first_table + tables):
            sessions = [_play(number, rolls, _session_seed(seed, day), codes, offer_role,
                              player_numbers, die_lean) for day in range(days)]
            table, table_planted = _to_arrow(sessions, number, seed, codes,
                                             base_us + (number - first_table) * TABLE_OFFSET_US)
            parts.append(table)
            planted.extend(table_planted)
            valid[sessions[0][0].table_id] = sum(sim.valid_rolls for sim, _ in sessions)
            del sessions
    table = parts[0] if len(parts) == 1 else pa.concat_tables(parts).combine_chunks()
    planted.sort(key=lambda p: (p["table_id"], p["seq"], p["code"]))
    return GeneratedLog(table, planted, valid)


def by_night(log: pa.Table, interleaved: bool = False) -> list[pa.Table]:
    """A log generated with `days` > 1 cut as a casino exports it nightly:
    the d-th table of the list holds the d-th session of every table (seq
    running on from night to night), a table after another, or with
    `interleaved` every table's rows in time order."""
    import pyarrow.compute as pc

    ids = log.column("table_id").combine_chunks().dictionary_encode()
    opens = pc.equal(log.column("event"), "table_open").to_numpy(zero_copy_only=False)
    codes = ids.indices.to_numpy(zero_copy_only=False)
    night = np.zeros(len(codes), dtype=np.int64)
    for code in range(len(ids.dictionary)):
        rows = np.flatnonzero(codes == code)
        night[rows] = np.cumsum(opens[rows]) - 1
    out = []
    for k in range(int(night.max()) + 1 if len(night) else 0):
        part = log.take(pa.array(np.flatnonzero(night == k)))
        if interleaved:
            part = part.take(pc.sort_indices(part, [("ts", "ascending")]))
        out.append(part)
    return out


@contextmanager
def _no_cyclic_gc():
    """Millions of row tuples make the cyclic garbage collector rescan the
    heap again and again (it costs as much as the game itself); the rows hold
    no reference cycles, so it is paused while they are built."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _session_seed(seed: int, day: int) -> int | str:
    """The seed of a table's session on `day`: the table's own on the first
    day (a one-day log is what it always was), a string of its own after."""
    return seed if day == 0 else f"{seed}/day{day}"


def _play(number: int, rolls: int, seed: int | str, codes: list[str], offer_role: str,
          player_numbers, die_lean: float = DEFAULT_LEAN) -> tuple[TableSim, list]:
    """Play one table; plan and apply the row edits of the planted codes.
    Returns the finished session (its `rows` edited) and [(plan, row index)]."""
    row_codes = [c for c in codes if c in PLANTERS]
    sim = TableSim(number, seed, offer_role, player_numbers, record_sites=bool(row_codes))
    if "dice.face_bias" in codes:
        sim.lean_die, sim.lean = LEAN_DIE, die_lean
    sim.open()
    sim.run(rolls)
    plans: list = []
    for attempt in itertools.count():
        if not row_codes:
            break
        rng = random.Random(f"craps-inject/{seed}/{number}/{attempt}")
        plans, missing = _inject.plan(row_codes, sim, rng)
        if not missing:
            break
        if attempt >= MAX_EXTENSIONS:
            raise RuntimeError(f"{sim.table_id}: found no place to plant {', '.join(missing)}")
        _inject.nudge(sim, missing)
        sim.run(sim.valid_rolls + 25)
    sim.close()
    if plans:
        sim.rows, pointed = _inject.apply(sim.rows, plans)
    else:
        pointed = []
    if sim.lean_die is not None:
        pointed = [*pointed, _lean_planted(sim)]
    return sim, pointed


@dataclass
class _Signal:
    code: str
    note: str


def _lean_planted(sim: TableSim) -> tuple[_Signal, int]:
    """The planted entry of a leaning die: at its first roll."""
    first = next((i for i, row in enumerate(sim.rows)
                  if row[0] == "roll" and sim.lean_die in str(row[5]).split(",")), 0)
    return _Signal("dice.face_bias", f"die {sim.lean_die} leans: in {sim.lean:.0%} of its "
                   f"rolls it shows the higher of two fair draws (fair: 0%); no finding, a "
                   f"dice_stats flag"), first


def _to_arrow(sessions: list[tuple[TableSim, list]], number: int, seed: int,
              codes: list[str], base_us: int) -> tuple[pa.Table, list[dict]]:
    """The table's sessions, one after another, as an Arrow table (seq, ts
    added; the log.* codes applied to them) and its planted list."""
    tid = sessions[0][0].table_id
    opens = list(itertools.accumulate((len(sim.rows) for sim, _ in sessions[:-1]), initial=0))
    rows = sessions[0][0].rows if len(sessions) == 1 else \
        [row for sim, _ in sessions for row in sim.rows]
    planted_rows = [(p.code, k + i, p.note) for (_, pointed), k in zip(sessions, opens)
                    for p, i in pointed]
    n = len(rows)
    seq = np.arange(1, n + 1, dtype=np.int64)
    ts_rng = np.random.default_rng(random.Random(f"craps-ts/{seed}/{number}").getrandbits(64))
    steps = ts_rng.integers(*STEP_SECONDS, size=n, dtype=np.int64) * 1_000_000
    steps[0] = 0
    ts = base_us + np.cumsum(steps)
    _open_daily(ts, opens, base_us)
    rng = random.Random(f"craps-inject-log/{seed}/{number}")
    gap = -1
    if "log.sequence_gap" in codes:
        gap = rng.randrange(2, n)
        seq[gap:] += 1
        note = f"seq {gap + 1} is missing: the event before has {gap}, this one {gap + 2}"
        planted_rows.append(("log.sequence_gap", gap, note))
    if "log.out_of_order" in codes:
        k = rng.randrange(2, n)
        while k == gap:
            k = rng.randrange(2, n)
        ts[k] = ts[k - 2] + (ts[k - 1] - ts[k - 2]) // 2_000_000 * 1_000_000
        planted_rows.append(("log.out_of_order", k,
                             f"ts goes back {(ts[k - 1] - ts[k]) // 1_000_000} s at this event"))
    arrays = [pa.repeat(pa.scalar(tid, pa.string()), n), pa.array(seq),
              pa.array(ts, _ARROW["ts"])]
    for i, name in enumerate(ROW_COLUMNS):  # one column at a time: less memory than zip(*rows)
        arrays.append(pa.array(list(map(itemgetter(i), rows)), _ARROW[COLUMN_KINDS[name]]))
    table = pa.Table.from_arrays(arrays, schema=SCHEMA)
    planted = [{"code": code, "table_id": tid, "seq": int(seq[i]), "note": note}
               for code, i, note in planted_rows]
    return table, planted


def _open_daily(ts: np.ndarray, opens: list[int], base_us: int) -> None:
    """Move each session after the first (rows from `opens[d]` on) to open
    `d` days after `base_us`, or SESSION_GAP_US after the session before it
    if that is later; the steps within a session stay as drawn."""
    ends = [*opens[1:], len(ts)]
    for day in range(1, len(opens)):
        k = opens[day]
        ts[k:ends[day]] += max(base_us + day * DAY_US, ts[k - 1] + SESSION_GAP_US) - ts[k]


__all__ = ["DEFAULT_START", "INJECTABLE", "LOG_CODES", "OFFER_ROLES", "SCHEMA", "GeneratedLog",
           "check_codes", "generate", "log_format", "write_log"]
