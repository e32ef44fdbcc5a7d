"""The faces each die showed, counted where the events are: one vectorised
pass over the valid rolls the replay already found, after it (the replay's
compiled loop is not touched).

What counts (docs/dice-integrity.md, docs/decisions.md):

- only valid rolls: a roll the replay voided (a `no_roll`, a `ruling` of
  `void`) is left out: its faces are often unreadable or unread (a die off
  the table, one die on the other) and the game did not count them;
- the face that counts: a `die_cocked` makes the face opposite the resting
  one (7 - `die1`) count for that die, a `ruling` `face_determined` the face
  it names for the disputed die, as the replay recounts them;
- a die is its site and serial (a serial names one physical die of a
  casino); a roll whose `dice` does not name exactly two serials, or whose
  faces are not 1..6, is not counted, and `unread` says how many.

`DiceCollector` is a collector (`auditor.audit.collect`): it takes a
`DiceTally` of each batch, group of tables or dask task; `join` adds them.
The statistics are worked out from the joined tally (`auditor.report.dice_stats`).
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import os
import pickle
import re
import tempfile
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from auditor.checks.common import Shared
from auditor.findings import SITE_SEPARATOR
from auditor.game.dice_values import DiceValues
from auditor.game.state import ReplayState
from auditor.logs.tables import session_starts

FACES = tuple(f"face_{k}" for k in range(1, 7))
TOTALS = tuple(f"total_{k}" for k in range(2, 13))
#: The custody events a die's record lists.
CUSTODY_EVENTS = ("dice_received", "dice_inspected", "die_off_table", "die_retrieved",
                  "die_lost", "dice_removed")
#: At most this many custody events are kept per die (the first ones).
CUSTODY_KEPT = 40


def site_and_table(key: str) -> tuple[str | None, str]:
    """A table key (`site` + SITE_SEPARATOR + id, or the id) as (site, id)."""
    if isinstance(key, str) and SITE_SEPARATOR in key:
        site, table = key.split(SITE_SEPARATOR, 1)
        return site or None, table
    return None, key


class PerDie:
    """Rows about dice that are read a die at a time (a flagged die's
    sessions, shooters, custody record), kept as the tallies' parts: joining
    tallies puts their parts side by side, and only the rows of a die asked
    for are ever gathered (`of`). At 46.7M events in 32 batches, joining
    them row by row was 0.3 s of the main process's own CPU."""

    def __init__(self, parts: list[pd.DataFrame | Spilled]):
        self.parts = [p for p in parts if len(p)] or parts[:1]

    def __add__(self, other: PerDie) -> PerDie:
        return PerDie(self.parts + other.parts)

    def __len__(self) -> int:
        return sum(len(p) for p in self.parts)

    def spilled(self, folder: str, named: dict | None = None) -> PerDie:
        """The same rows, each part of them written to a file of its own in
        `folder` (`Spilled`), read back only for a die asked for. `named`:
        the sets of dice other parts spilled with it name, each kept once
        (`Spilled.of`)."""
        named = {} if named is None else named
        return PerDie([Spilled.of(p, folder, named) if isinstance(p, pd.DataFrame) and len(p)
                       else p for p in self.parts])

    def of(self, site, serial: str, names=None) -> pd.DataFrame:
        """The rows of die (`site`, `serial`), part by part in order, text
        as Python objects: those whose `serial` is it, or, with
        `names(frame)` (a boolean mask of the rows naming the die), those.
        A spilled part that names no such die is not read."""
        picked = []
        for part in self.parts:
            if not len(part) or isinstance(part, Spilled) and not part.may_hold(site, serial):
                continue
            frame = _frame(part)
            same_site = frame["site"].isna().to_numpy() if site is None else \
                (frame["site"] == site).to_numpy(dtype=bool)
            mine = names(frame) if names is not None else \
                (frame["serial"] == serial).to_numpy(dtype=bool)
            picked.append(frame[same_site & mine])
        if not picked:
            return _none_of(self.parts[0]) if self.parts else pd.DataFrame()
        if len(picked) == 1:
            return _plain(picked[0])
        return pd.concat([_plain(p) for p in picked], ignore_index=True)


class Spilled:
    """A part of a `PerDie` written to a file by the worker that tallied it
    (`--jobs`: `auditor.run.local`), so it does not cross the pool's pipe
    to the main process nor stay in its memory: at 44.6M events these rows
    were 1.4 MB of each batch's 1.5 MB result. The file is the frame
    pickled, read back whole, as it was, for a die asked for. Whoever
    made the folder removes it, with the files, when the audit's result
    is gone. `dice`: every (site, serial) its rows name, so a die's page
    reads only the parts that may hold it (a year's batches each spill
    theirs: reading them all for each flagged die was gigabytes a die);
    `empty`: its columns, no rows."""

    def __init__(self, path: str, rows: int, dice: frozenset | None = None,
                 empty: pd.DataFrame | None = None):
        self.path, self.rows, self.dice, self.empty = path, rows, dice, empty

    @classmethod
    def of(cls, frame: pd.DataFrame, folder: str, named: dict | None = None) -> Spilled:
        """`frame` written to a file in `folder`. `named`: sets of dice
        already held (a tally's sessions, shooters and custody name the
        same dice): an equal set is that one object, pickled once where
        the parts cross the pool's pipe together (three copies of 3,000
        dice were a quarter of a batch's result to unpickle)."""
        handle, path = tempfile.mkstemp(suffix=".pickle", dir=folder)
        with os.fdopen(handle, "wb") as out:
            pickle.dump(frame, out, protocol=pickle.HIGHEST_PROTOCOL)
        dice = dice_named(frame)
        if named is not None and dice is not None:
            dice = named.setdefault(dice, dice)
        return cls(path, len(frame), dice, _plain(frame.iloc[:0]))

    def __len__(self) -> int:
        return self.rows

    def may_hold(self, site, serial) -> bool:
        """Whether die (`site`, `serial`) may have rows here."""
        return self.dice is None or not isinstance(serial, str) or (site, serial) in self.dice

    def frame(self) -> pd.DataFrame:
        with open(self.path, "rb") as f:
            return pickle.load(f)  # (written by this audit's own worker)


def _frame(part: pd.DataFrame | Spilled) -> pd.DataFrame:
    """A part's rows, read back from its file if it was spilled."""
    return part.frame() if isinstance(part, Spilled) else part


def _none_of(part: pd.DataFrame | Spilled) -> pd.DataFrame:
    """A part's columns, no rows (a spilled part is not read for them)."""
    if isinstance(part, Spilled) and part.empty is not None:
        return part.empty
    return _plain(_frame(part).iloc[:0])


def dice_named(frame: pd.DataFrame) -> frozenset | None:
    """Every die (site, serial; no site: None) the rows of a `PerDie` part
    name: by its `serial` column, or each of the comma-separated serials of
    its custody events' `dice` (as `custody_of` reads them); None for a
    part of neither."""
    for column, split in (("serial", False), ("dice", True)):
        if column in frame:
            pairs = pd.DataFrame({"site": frame["site"].astype(object),
                                  "text": frame[column].astype(object)}).drop_duplicates()
            sites = [None if pd.isna(v) else v for v in pairs["site"].tolist()]
            return frozenset((site, serial) for site, text in zip(sites, pairs["text"].tolist())
                             if isinstance(text, str)
                             for serial in (text.split(",") if split else (text,)))
    return None


@dataclass
class DiceTally:
    """What the dice statistics need of some tables' events.

    `dice`: per die (site, serial) the count of each counted face;
    `sessions_of` / `shooters_of`: per die, the table sessions and the
    shooters it was thrown in, with its rolls there (a die's shooters
    summed as read: `shooters_of_die`); `sessions` / `sets`: the counted
    totals per table session and per dice set; `custody`: every custody
    event, with the dice it names (a die's first CUSTODY_KEPT: `custody_of`);
    `unread`: valid rolls whose dice or faces could not be counted."""

    dice: pd.DataFrame = field(default_factory=lambda: _empty(("site", "serial", *FACES)))
    sessions_of: PerDie = field(default_factory=lambda: PerDie([_empty(
        ("site", "serial", "table_id", "session_seq", "rolls"))]))
    shooters_of: PerDie = field(default_factory=lambda: PerDie([_empty(
        ("site", "serial", "shooter", "rolls"))]))
    sessions: pd.DataFrame = field(default_factory=lambda: _empty(
        ("site", "table_id", "session_seq", *TOTALS)))
    sets: pd.DataFrame = field(default_factory=lambda: _empty(
        ("site", "table_id", "session_seq", "set", "dice", *TOTALS)))
    custody: PerDie = field(default_factory=lambda: PerDie([_empty(CUSTODY_COLUMNS)]))
    unread: int = 0


CUSTODY_COLUMNS = ("site", "table_id", "seq", "dice", "event", "actor_role", "actor_id",
                   "outcome")


def _empty(columns) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series([], dtype=object) for c in columns})


@dataclass(frozen=True)
class DiceCollector:
    """The dice statistics' collector (`auditor.audit.collect`); it reads
    no findings."""

    needs_findings = False

    def take(self, events: pd.DataFrame, findings: pd.DataFrame,
             state: ReplayState) -> DiceTally:
        return tally(events, state)

    def join(self, taken: list[DiceTally]) -> DiceTally:
        return join(taken)

    def spill(self, taken: DiceTally, folder: str) -> DiceTally:
        """`taken` with its per-die rows written to `folder` (`Spilled`)."""
        named: dict = {}
        return dataclasses.replace(taken, sessions_of=taken.sessions_of.spilled(folder, named),
                                   shooters_of=taken.shooters_of.spilled(folder, named),
                                   custody=taken.custody.spilled(folder, named))


COLLECTOR = DiceCollector()


def join(tallies: list[DiceTally]) -> DiceTally:
    """Tallies of different tables as one (a serial thrown at tables of two
    batches adds up)."""
    tallies = [t for t in tallies if t is not None]
    if not tallies:
        return DiceTally()
    if len(tallies) == 1:
        return tallies[0]

    def cat(name):
        return pd.concat([getattr(t, name) for t in tallies], ignore_index=True)

    def summed(name, keys, values):
        frame = cat(name)
        if not len(frame):
            return frame
        frame = frame.groupby(keys, dropna=False, sort=False, as_index=False)[values].sum()
        # (grouping makes a key of None NaN: a die of no site stays None, as
        # one tally of every table gives it)
        frame["site"] = frame["site"].astype(object).where(frame["site"].notna(), None)
        return frame

    def parts(name):
        return functools.reduce(operator.add, (getattr(t, name) for t in tallies))

    return DiceTally(summed("dice", ["site", "serial"], list(FACES)), parts("sessions_of"),
                     parts("shooters_of"), cat("sessions"), cat("sets"), parts("custody"),
                     sum(t.unread for t in tallies))


class _Serials:
    """Serial names and their ids, numbered in the order the rows the tally
    reads first name them, over the audit's one split of the distinct
    `dice` values (`Shared.dice_values`)."""

    def __init__(self, values: DiceValues):
        self.values = values
        self.names: list[str] = []
        self.local = np.full(len(values.serials), -1, dtype=np.int64)  # split's id -> ours

    def named(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                 np.ndarray, np.ndarray]:
        """For `codes` (of the `dice` column): the distinct codes, the index
        of each code among them, and per distinct code how many serials it
        names, the id of its first and of its second (-1 where it names
        fewer)."""
        values = self.values
        # (the distinct codes by counting, not sorting: codes are small)
        seen = np.bincount(codes + 1, minlength=len(values) + 2)
        distinct = np.flatnonzero(seen) - 1
        lookup = np.zeros(len(seen), dtype=np.int64)
        lookup[distinct + 1] = np.arange(len(distinct))
        inverse = lookup[codes + 1]
        _, ids = values.rows_of(distinct)
        # serials met for the first time, numbered in the order met
        new = ids[self.local[ids] < 0]
        met, first_at = np.unique(new, return_index=True)
        met = met[np.argsort(first_at, kind="stable")]
        self.local[met] = np.arange(len(self.names), len(self.names) + len(met))
        self.names.extend(values.serials[x] for x in met.tolist())
        ids = self.local[ids]
        count = values.counts[distinct]
        at = np.cumsum(count) - count
        last = max(len(ids) - 1, 0)
        first = np.where(count >= 1, ids[np.minimum(at, last)] if len(ids) else -1, -1)
        second = np.where(count >= 2, ids[np.minimum(at + 1, last)] if len(ids) else -1, -1)
        return distinct, inverse, count, first.astype(np.int64), second.astype(np.int64)


def tally(events: pd.DataFrame, state: ReplayState) -> DiceTally:
    """The `DiceTally` of `events` (whole tables, ordered by table and seq)
    and their replay `state`: numpy over the valid rolls, Python only per
    distinct value, per recount and per receipt."""
    if not len(events) or "event" not in events or "dice" not in events:
        return DiceTally()
    sh = Shared.of(events, state)
    # (the rows of each kind of event, as the checks found them)
    found = {"roll": sh.event_rows("roll"),
             "recount": sh.event_rows("die_cocked", "ruling", "dispute"),
             "open": sh.event_rows("table_open"), "custody": sh.event_rows(*CUSTODY_EVENTS)}
    rolls = found["roll"]
    valid = _valid(rolls, np.asarray(state.rows("roll_voided"), dtype=np.int64))
    serials = _Serials(sh.dice_values)
    _, inverse, count, first, second = serials.named(sh.codes("dice")[valid])
    pair = count == 2  # (a roll of other than two dice is not counted)
    first, second = np.where(pair, first, -1)[inverse], np.where(pair, second, -1)[inverse]
    face1, face2 = sh.int_at("die1", valid), sh.int_at("die2", valid)
    _recount(sh, serials, rolls, found["recount"], found["open"], valid, first, second, face1,
             face2)
    ok = (first >= 0) & (face1 >= 1) & (face1 <= 6) & (face2 >= 1) & (face2 <= 6)
    unread = int(len(valid) - ok.sum())
    rows, first, second = valid[ok], first[ok], second[ok]
    face1, face2 = face1[ok], face2[ok]
    # Where: the site of each table, the session of each roll.
    tables = sh.categories("table_id")
    split = [site_and_table(t) for t in tables[:-1].tolist()]
    site_names = sorted({s for s, _ in split if s is not None})
    table_site = np.array([0 if s is None else site_names.index(s) + 1 for s, _ in split],
                          dtype=np.int64)
    site_of = [None, *site_names]
    table_of = [t for _, t in split]
    starts = session_starts(sh.table_starts, found["open"])
    session = np.searchsorted(starts, rows, side="right") - 1
    session_table = sh.codes("table_id")[starts]
    session_seq = sh.seq[starts]
    n_serials = max(len(serials.names), 1)
    site = table_site[session_table[session]]
    # Faces per die (site, serial): each roll's first die and its second.
    die1, die2 = site * n_serials + first, site * n_serials + second
    domain = len(site_of) * n_serials
    counts = (np.bincount(die1 * 6 + face1 - 1, minlength=6 * domain)
              + np.bincount(die2 * 6 + face2 - 1, minlength=6 * domain)).reshape(-1, 6)
    present = np.flatnonzero(counts.any(axis=1))
    counts = counts[present]
    index_of = np.full(domain, -1, dtype=np.int64)
    index_of[present] = np.arange(len(present))
    site_names_of = np.array(site_of, dtype=object)
    serial_names = np.array(serials.names or [""], dtype=object)
    die_site = site_names_of[present // n_serials]
    die_serial = serial_names[present % n_serials]
    out = {"unread": unread}
    out["dice"] = pd.DataFrame({"site": _objects(die_site), "serial": _objects(die_serial),
                                **{f: counts[:, j] for j, f in enumerate(FACES)}})
    # Runs of rolls by the same pair, session and shooter: what is looked up per run.
    shooter, shooter_names = _shooters(sh, rows)
    change = np.ones(len(rows), dtype=bool)
    if len(rows) > 1:
        change[1:] = ((first[1:] != first[:-1]) | (second[1:] != second[:-1])
                      | (session[1:] != session[:-1]) | (shooter[1:] != shooter[:-1]))
    run = np.flatnonzero(change)
    length = np.diff(np.append(run, len(rows)))
    run_die = np.concatenate([index_of[die1[run]], index_of[die2[run]]])
    run_len = np.concatenate([length, length])

    def per_die(key: np.ndarray, width: int):
        keys, where = np.unique(run_die * width + key, return_inverse=True)
        return keys // width, keys % width, np.bincount(where, weights=run_len).astype(np.int64)

    table_names = np.array(table_of or [""], dtype=object)
    d, s, n = per_die(np.concatenate([session[run], session[run]]), len(starts))
    out["sessions_of"] = PerDie([pd.DataFrame({
        "site": _coded(die_site, d), "serial": _coded(die_serial, d),
        "table_id": _coded(table_names, session_table[s]),
        "session_seq": session_seq[s], "rolls": n})])
    d, p, n = per_die(np.concatenate([shooter[run], shooter[run]]), len(shooter_names))
    out["shooters_of"] = PerDie([pd.DataFrame({
        "site": _coded(die_site, d), "serial": _coded(die_serial, d),
        "shooter": _coded(np.array(shooter_names, dtype=object), p), "rolls": n})])
    # Totals per session, and per set (the set of each run's first die).
    total = face1 + face2 - 2
    out["sessions"] = _totals(session, total, len(starts), session_table, session_seq, site_of,
                           table_site, table_of)
    receipts = np.flatnonzero(state.dice_moves.where == RECEIVED)
    run_set = _set_of(state, receipts, serials, rows[run], first[run], starts[session[run]])
    # (a run's rolls share its session and set: the keys found per run)
    width = int(run_set.max()) + 2 if len(run_set) else 1
    keys, run_where = np.unique(session[run] * width + run_set + 1, return_inverse=True)
    where = np.repeat(run_where.reshape(-1), length)
    out["sets"] = _totals(where, total, len(keys), session_table[keys // width],
                       session_seq[keys // width], site_of, table_site, table_of,
                       sets=keys % width - 1)
    names = _set_names(sh, state, receipts, starts, keys // width, keys % width - 1)
    out["sets"].insert(out["sets"].columns.get_loc("set") + 1, "dice", _objects(names))
    out["custody"] = PerDie([_custody(sh, found["custody"], table_site, site_names_of,
                                      table_names)])
    return DiceTally(**out)


def _coded(names: np.ndarray, index: np.ndarray) -> pd.Series:
    """`names[index]` as a categorical column (None a missing value): a
    worker sends it as codes, not a Python string a row."""
    codes, uniques = pd.factorize(names, use_na_sentinel=True)
    return pd.Series(pd.Categorical.from_codes(codes[index], categories=uniques))


def _objects(values) -> pd.Series:
    """Text as a column of Python objects (no str dtype inferred: cheaper,
    and None stays None)."""
    return pd.Series(np.asarray(values, dtype=object), dtype=object, copy=False)


def _valid(rolls: np.ndarray, voided: np.ndarray) -> np.ndarray:
    """The rolls not voided (both ascending)."""
    if not len(voided) or not len(rolls):
        return rolls
    keep = np.ones(len(rolls), dtype=bool)
    at = np.searchsorted(rolls, voided)
    inside = at < len(rolls)
    at, hit = at[inside], voided[inside]
    keep[at[rolls[at] == hit]] = False
    return rolls[keep]


def _recount(sh: Shared, serials: _Serials, rolls: np.ndarray, events: np.ndarray,
             opens: np.ndarray, valid: np.ndarray,
             first: np.ndarray, second: np.ndarray, face1: np.ndarray,
             face2: np.ndarray) -> None:
    """The faces that count, in place: each `die_cocked` (7 - the resting
    face) and `ruling` face_determined (the disputed die's face) of a valid
    roll, in the order recorded, as the replay recounts them
    (`TableReplay.recount`). Cocked dice at once; a roll with a ruling
    after its roll's recounts one by one."""
    if not len(events) or not len(valid):
        return
    last = sh.latest(rolls, events, opens)
    at = np.minimum(np.searchsorted(valid, last), len(valid) - 1)
    on_valid = (last >= 0) & (valid[at] == last)
    events, at = events[on_valid], at[on_valid]
    kinds = sh.values_at("event", events)
    _, inverse, _, target, _ = serials.named(sh.codes("dice")[events])
    target = target[inverse]
    die1 = sh.int_at("die1", events)
    cocked = (kinds == "die_cocked") & (die1 >= 1) & (die1 <= 6) & (target >= 0)
    k, face = at[cocked], 7 - die1[cocked]
    is_first, is_second = target[cocked] == first[k], target[cocked] == second[k]
    face1[k[is_first]] = face[is_first]  # (a roll cocked twice: the later one wins)
    face2[k[is_second & ~is_first]] = face[is_second & ~is_first]
    other = np.flatnonzero(~cocked & (kinds != "die_cocked"))
    if not len(other):
        return
    ruled = set(at[other].tolist())  # rolls with a dispute or ruling: again, in order
    reasons = sh.values_at("reason", events) if "reason" in sh.events else \
        np.full(len(events), None, dtype=object)
    disputed: dict[int, int] = {}
    for j in np.flatnonzero(np.isin(at, list(ruled))).tolist():
        k, kind = int(at[j]), kinds[j]
        if kind == "dispute":
            disputed[k] = int(target[j])
            continue
        if kind == "die_cocked":
            die, counted = int(target[j]), 7 - int(die1[j]) if 1 <= die1[j] <= 6 else 0
        elif reasons[j] == "face_determined":
            die, counted = disputed.get(k, -1), int(die1[j])
        else:
            continue
        if not counted or die < 0:
            continue
        if die == first[k]:
            face1[k] = counted
        elif die == second[k]:
            face2[k] = counted


def _shooters(sh: Shared, rows: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Who threw each roll (the player, else the actor: a stickperson), as
    codes into the names returned ("" for nobody recorded)."""
    player = sh.codes("player_id")[rows] if "player_id" in sh.events else \
        np.full(len(rows), -1, dtype=np.int64)
    actor = sh.codes("actor_id")[rows] if "actor_id" in sh.events else \
        np.full(len(rows), -1, dtype=np.int64)
    players = sh.categories("player_id")[:-1].tolist() if "player_id" in sh.events else []
    actors = sh.categories("actor_id")[:-1].tolist() if "actor_id" in sh.events else []
    code = np.where(player >= 0, player,
                    np.where(actor >= 0, len(players) + actor, len(players) + len(actors)))
    return code.astype(np.int64), [*map(str, players), *map(str, actors), ""]


def _totals(group: np.ndarray, total: np.ndarray, groups: int, table_code: np.ndarray,
            seq: np.ndarray, site_of, table_site, table_of, sets=None) -> pd.DataFrame:
    """The counted totals per group (those with rolls)."""
    counts = np.bincount(group * 11 + total, minlength=11 * groups).reshape(-1, 11)
    if sets is None:  # sessions: only those with rolls
        used = np.flatnonzero(counts.sum(axis=1))
        table_code, seq, counts = table_code[used], seq[used], counts[used]
    table_code = np.asarray(table_code, dtype=np.int64)
    columns = {"site": _objects(np.array(site_of, dtype=object)[table_site[table_code]]),
               "table_id": _objects(np.array(table_of or [""], dtype=object)[table_code]),
               "session_seq": np.asarray(seq, dtype=np.int64)}
    if sets is not None:
        columns["set"] = np.asarray(sets, dtype=np.int64)
    columns.update({TOTALS[k]: counts[:, k] for k in range(11)})
    return pd.DataFrame(columns)


RECEIVED = 0  # `DIE_LOCATIONS.index("new")`: a receipt (or a die found again)


def _set_of(state: ReplayState, got: np.ndarray, serials: _Serials, rows, die_serial,
            session_start):
    """The set each die (serial id) at `rows` came with: the set of its last
    receipt in the session before the row (-1: none)."""
    moves = state.dice_moves
    out = np.full(len(rows), -1, dtype=np.int64)
    if not len(got) or not len(rows):
        return out
    ids = {s: i for i, s in enumerate(moves.serials)}
    move_id = np.array([ids.get(x, -1) for x in serials.names] or [-1], dtype=np.int64)
    die = move_id[die_serial]
    width = int(max(moves.rows[got].max(), rows.max())) + 1
    key = moves.die[got] * width + moves.rows[got]
    order = np.argsort(key, kind="stable")
    key, got = key[order], got[order]
    at = np.searchsorted(key, die * width + rows, side="right") - 1
    hit = (at >= 0) & (die >= 0)
    at = np.maximum(at, 0)
    hit &= (key[at] // width == die) & (moves.rows[got[at]] >= session_start)
    out[hit] = moves.set_id[got[at[hit]]]
    return out


def _set_names(sh: Shared, state: ReplayState, got: np.ndarray, starts: np.ndarray,
               sessions: np.ndarray, sets: np.ndarray) -> np.ndarray:
    """Each set (by session index and set id) named as its first receipt
    names its dice ("" for -1, no set)."""
    moves = state.dice_moves
    out = np.full(len(sessions), "", dtype=object)
    if not len(got):
        return out
    width = int(moves.set_id[got].max()) + 2
    session = np.searchsorted(starts, moves.rows[got], side="right") - 1
    key, first = np.unique(session * width + moves.set_id[got] + 1, return_index=True)
    wanted = sessions * width + sets + 1
    at = np.minimum(np.searchsorted(key, wanted), len(key) - 1)
    hit = key[at] == wanted
    texts = sh.values_at("dice", moves.rows[got[first[at[hit]]]])
    out[hit] = [t if isinstance(t, str) else "" for t in texts.tolist()]
    return out


@functools.lru_cache(maxsize=1 << 16)
def natural_order(text: str) -> tuple:
    """A sort key reading the numbers in `text` as numbers ("A2" < "A10")."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))


def _custody(sh: Shared, rows: np.ndarray, table_site: np.ndarray, site_names: np.ndarray,
             table_names: np.ndarray) -> pd.DataFrame:
    """Every custody event, one row an event with the dice it names (the
    events' own columns taken as they are held: categoricals, no text
    copied); `custody_of` picks a die's."""
    if not len(rows):
        return _empty(CUSTODY_COLUMNS)
    table = sh.codes("table_id")[rows]
    columns = {"site": _coded(site_names, table_site[table]),
               "table_id": _coded(table_names, table), "seq": sh.seq[rows]}
    for name in ("dice", "event", "actor_role", "actor_id", "outcome"):
        columns[name] = sh.events[name].array.take(rows) if name in sh.events else \
            _objects([None] * len(rows))
    return pd.DataFrame(columns)


def custody_of(custody: PerDie, site, serial: str) -> pd.DataFrame:
    """The custody events naming die (`site`, `serial`), the first
    CUSTODY_KEPT, in the order recorded."""
    def names(frame: pd.DataFrame) -> np.ndarray:
        dice = frame["dice"].astype(object)
        texts = {t: serial in str(t).split(",") for t in pd.unique(dice) if isinstance(t, str)}
        return np.array([texts.get(t, False) for t in dice.tolist()], dtype=bool)

    return custody.of(site, serial, names=names).head(CUSTODY_KEPT)


def shooters_of_die(shooters_of: PerDie, site, serial: str) -> pd.DataFrame:
    """The shooters die (`site`, `serial`) was thrown by and its rolls with
    each, summed over the parts (in the order first met; a shooter not
    recorded is None)."""
    rows = shooters_of.of(site, serial)
    if not len(rows):
        return rows
    rows = rows.assign(shooter=rows["shooter"].astype(object).where(rows["shooter"].notna(),
                                                                    None))
    return rows.groupby("shooter", dropna=False, sort=False, as_index=False)["rolls"].sum()


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with its categorical columns as Python objects (so parts
    with different categories join without a cast per value)."""
    coded = [c for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)]
    return frame.astype({c: object for c in coded}) if coded else frame