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

`DiceCollector` is a collector (`auditor.run.collect`): it takes a
`DiceTally` of each batch, group of tables or dask task; `join` adds them.
The statistics are worked out from the joined tally (`auditor.report.dice_stats`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from auditor.checks.common import Shared
from auditor.findings import SITE_SEPARATOR
from auditor.game.state import ReplayState

FACES = tuple(f"face_{k}" for k in range(1, 7))
TOTALS = tuple(f"total_{k}" for k in range(2, 13))
#: The custody events a die's record lists.
CUSTODY_EVENTS = ("dice_received", "dice_inspected", "dice_to_bowl", "die_off_table",
                  "die_retrieved", "die_lost", "dice_removed")
#: At most this many custody events are kept per die (the first ones).
CUSTODY_KEPT = 40


def site_and_table(key: str) -> tuple[str | None, str]:
    """A table key (`site` + SITE_SEPARATOR + id, or the id) as (site, id)."""
    if isinstance(key, str) and SITE_SEPARATOR in key:
        site, table = key.split(SITE_SEPARATOR, 1)
        return site or None, table
    return None, key


@dataclass
class DiceTally:
    """What the dice statistics need of some tables' events.

    `dice`: per die (table key's site, serial) the count of each counted
    face; `where`: per die, table, session and shooter, the rolls it was
    thrown in; `sessions` / `sets`: the counted totals per table session and
    per dice set; `custody`: each die's custody events; `unread`: valid
    rolls whose dice or faces could not be counted."""

    dice: pd.DataFrame = field(default_factory=lambda: _empty(("site", "serial", *FACES)))
    where: pd.DataFrame = field(default_factory=lambda: _empty(
        ("site", "serial", "table_id", "session_seq", "shooter", "rolls")))
    sessions: pd.DataFrame = field(default_factory=lambda: _empty(
        ("site", "table_id", "session_seq", *TOTALS)))
    sets: pd.DataFrame = field(default_factory=lambda: _empty(
        ("site", "table_id", "session_seq", "set", "dice", *TOTALS)))
    custody: pd.DataFrame = field(default_factory=lambda: _empty(
        ("site", "serial", "table_id", "seq", "ts", "event", "actor_role", "actor_id",
         "outcome")))
    unread: int = 0


def _empty(columns) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series([], dtype=object) for c in columns})


@dataclass(frozen=True)
class DiceCollector:
    """The dice statistics' collector (`auditor.run.collect`)."""

    def take(self, events: pd.DataFrame, findings: pd.DataFrame,
             state: ReplayState) -> DiceTally:
        return tally(events, state)

    def join(self, taken: list[DiceTally]) -> DiceTally:
        return join(taken)


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

    dice = cat("dice")
    if len(dice):
        dice = dice.groupby(["site", "serial"], dropna=False, sort=False,
                            as_index=False)[list(FACES)].sum()
    where = cat("where")
    if len(where):
        where = where.groupby(["site", "serial", "table_id", "session_seq", "shooter"],
                              dropna=False, sort=False, as_index=False)["rolls"].sum()
    return DiceTally(dice, where, cat("sessions"), cat("sets"), cat("custody"),
                     sum(t.unread for t in tallies))


def tally(events: pd.DataFrame, state: ReplayState) -> DiceTally:
    """The `DiceTally` of `events` (whole tables, ordered by table and seq)
    and their replay `state`."""
    if not len(events) or "event" not in events:
        return DiceTally()
    shared = Shared(events, state)
    rolls = shared.event_rows("roll")
    voided = state.rows("roll_voided")
    valid = rolls[~np.isin(rolls, voided)] if len(voided) else rolls
    first, second, ok = _serial_pair(shared, valid)
    face1 = shared.int_at("die1", valid)
    face2 = shared.int_at("die2", valid)
    _recount(shared, valid, first, second, face1, face2)
    ok &= (face1 >= 1) & (face1 <= 6) & (face2 >= 1) & (face2 <= 6)
    # one id per distinct serial (`dice_named` lists each dice text's serials)
    serials, serial_id = np.unique(np.array(shared.dice_named[0] or [""], dtype=object),
                                   return_inverse=True)
    serials = serials.tolist()
    first, second = serial_id[first], serial_id[second]
    tables = shared.codes("table_id")
    table_names = shared.categories("table_id")
    rows, first, second = valid[ok], first[ok], second[ok]
    face1, face2 = face1[ok], face2[ok]
    table_of = tables[rows]
    sites = [site_and_table(t)[0] for t in table_names[:-1]] + [None]
    session = shared.session_start(rows)
    session_seq = shared.seq[session]
    out = DiceTally(unread=int(len(valid) - len(rows)))
    # Per die: the serial of each throw, and the site of its table.
    die_serial = np.concatenate([first, second])
    die_face = np.concatenate([face1, face2])
    die_site = np.concatenate([table_of, table_of])
    site_names = sorted({s for s in sites if s is not None})
    site_code = np.array([-1 if s is None else site_names.index(s) for s in sites],
                         dtype=np.int64)[die_site]
    key = (site_code + 1) * len(serials) + die_serial
    uniq, inverse = np.unique(key, return_inverse=True)
    counts = np.bincount(inverse * 6 + (die_face - 1), minlength=6 * len(uniq)).reshape(-1, 6)
    out.dice = pd.DataFrame({
        "site": [None if k // len(serials) == 0 else site_names[k // len(serials) - 1]
                 for k in uniq.tolist()],
        "serial": [serials[k % len(serials)] for k in uniq.tolist()],
        **{f: counts[:, j].astype(np.int64) for j, f in enumerate(FACES)}})
    out.where = _where(shared, rows, inverse, uniq, out.dice, table_of, table_names,
                       session_seq)
    totals = face1 + face2
    out.sessions = _totals_by(table_of, session_seq, totals, table_names, sites)
    out.sets = _sets(shared, state, rows, [serials[k] for k in first.tolist()], table_of,
                     session, session_seq, totals, table_names, sites)
    out.custody = _custody(shared, events, table_names, sites)
    return out


def _serial_pair(shared: Shared, rows: np.ndarray):
    """The two serials each roll names (indexes of `shared.dice_named[0]`)
    and whether it names exactly two."""
    _, starts, counts = shared.dice_named
    codes = shared.codes("dice")[rows]
    codes = np.where(codes < 0, len(counts) - 1, codes)
    ok = counts[codes] == 2
    first = np.where(ok, starts[codes], 0)
    return first, np.where(ok, first + 1, 0), ok


def _recount(shared: Shared, valid: np.ndarray, first: np.ndarray, second: np.ndarray,
             face1: np.ndarray, face2: np.ndarray) -> None:
    """The faces that count, in place: each `die_cocked` (7 - the resting
    face) and `ruling` face_determined (the disputed die's face) of a valid
    roll, in order, as the replay recounts them (`TableReplay.recount`)."""
    events = shared.event_rows("die_cocked", "ruling", "dispute")
    if not len(events) or not len(valid):
        return
    rolls = shared.event_rows("roll")
    last = shared.latest(rolls, events, shared.event_rows("table_open"))
    serials, starts, counts = shared.dice_named
    names = shared.categories("event")
    ev_codes = shared.codes("event")
    reason_at = shared.values_at("reason", events) if "reason" in shared.events else \
        np.full(len(events), None, dtype=object)
    die1 = shared.int_at("die1", events)
    dice_codes = shared.codes("dice")
    disputed: dict[int, str | None] = {}
    at = np.searchsorted(valid, last)
    for j, (row, roll) in enumerate(zip(events.tolist(), last.tolist())):
        if roll < 0:
            continue
        code = dice_codes[row]
        named = serials[starts[code]] if code >= 0 and counts[code] else None
        kind = names[ev_codes[row]]
        if kind == "dispute":
            disputed[roll] = named
            continue
        if kind == "die_cocked":
            target, counted = named, (7 - die1[j]) if die1[j] else 0
        elif reason_at[j] == "face_determined":
            target, counted = disputed.get(roll), die1[j]
        else:
            continue
        k = at[j]
        if not counted or k >= len(valid) or valid[k] != roll:
            continue  # a voided roll, or nothing counted
        if target == serials[first[k]]:
            face1[k] = counted
        elif target == serials[second[k]]:
            face2[k] = counted


def _where(shared, rows, inverse, uniq, dice, table_of, table_names, session_seq):
    """Per die, table, session and shooter: the rolls it was thrown in."""
    n = len(rows)
    shooter = shared.values_at("player_id", rows) if "player_id" in shared.events else \
        np.full(n, None, dtype=object)
    if "actor_id" in shared.events:
        actor = shared.values_at("actor_id", rows)
        missing = pd.isna(shooter)
        shooter = np.where(missing, actor, shooter)
    shooter = np.where(pd.isna(shooter), "", shooter).astype(object)
    frame = pd.DataFrame({
        "die": inverse, "table": np.concatenate([table_of, table_of]),
        "session_seq": np.concatenate([session_seq, session_seq]),
        "shooter": np.concatenate([shooter, shooter])})
    grouped = frame.groupby(["die", "table", "session_seq", "shooter"], sort=True).size()
    index = grouped.index.to_frame(index=False)
    return pd.DataFrame({
        "site": dice["site"].to_numpy(dtype=object)[index["die"].to_numpy()],
        "serial": dice["serial"].to_numpy(dtype=object)[index["die"].to_numpy()],
        "table_id": [site_and_table(table_names[t])[1] for t in index["table"].tolist()],
        "session_seq": index["session_seq"].to_numpy(dtype=np.int64),
        "shooter": index["shooter"].to_numpy(dtype=object),
        "rolls": grouped.to_numpy(dtype=np.int64)})


def _totals_by(table_of, session_seq, totals, table_names, sites, extra=None) -> pd.DataFrame:
    keys = {"table": table_of, "session_seq": session_seq, **(extra or {})}
    frame = pd.DataFrame({**keys, "total": totals})
    counts = frame.groupby([*keys, "total"], sort=True).size().unstack("total", fill_value=0)
    counts = counts.reindex(columns=range(2, 13), fill_value=0)
    index = counts.index.to_frame(index=False)
    out = pd.DataFrame({
        "site": [sites[t] for t in index["table"].tolist()],
        "table_id": [site_and_table(table_names[t])[1] for t in index["table"].tolist()],
        "session_seq": index["session_seq"].to_numpy(dtype=np.int64)})
    for name in extra or {}:
        out[name] = index[name].to_numpy()
    for k in range(2, 13):
        out[f"total_{k}"] = counts[k].to_numpy(dtype=np.int64)
    return out


def _sets(shared, state, rows, first: list[str], table_of, session, session_seq, totals,
          table_names, sites) -> pd.DataFrame:
    """Totals per dice set: a roll's set is its first die's (the set of its
    session that die came with, `DiceMoves.set_id`); -1 where that die was
    never received in the session."""
    moves = state.dice_moves
    index = {s: i for i, s in enumerate(moves.serials)}
    die = np.array([index.get(s, -1) for s in first], dtype=np.int64)
    set_of = np.full(len(rows), -1, dtype=np.int64)
    if len(moves.rows):
        order = np.lexsort((moves.rows, moves.die))
        mkey = moves.die[order] * (shared.n + 1) + moves.rows[order]
        at = np.searchsorted(mkey, die * (shared.n + 1) + rows, side="right") - 1
        found = (at >= 0) & (die >= 0)
        at = np.maximum(at, 0)
        same = found & (moves.die[order][at] == die) & (moves.rows[order][at] >= session)
        set_of = np.where(same, moves.set_id[order][at], -1)
    out = _totals_by(table_of, session_seq, totals, table_names, sites, {"set": set_of})
    # each set named by its dice: the serials of the moves with its id in its session
    names = _set_names(shared, moves)
    out.insert(out.columns.get_loc("set") + 1, "dice", _names_for(out, names))
    return out


def _set_names(shared, moves) -> dict:
    """{(table id as written, session seq, set id): the set's serials}."""
    if not len(moves.rows):
        return {}
    rows = moves.rows
    session = shared.seq[shared.session_start(rows)]
    tables = shared.codes("table_id")[rows]
    names = shared.categories("table_id")
    found: dict[tuple, set] = {}
    for t, s, k, d in zip(tables.tolist(), session.tolist(), moves.set_id.tolist(),
                          moves.die.tolist()):
        found.setdefault((site_and_table(names[t]), s, k), set()).add(moves.serials[d])
    return {key: ",".join(sorted(v, key=_natural)) for key, v in found.items()}


def _names_for(out: pd.DataFrame, names: dict) -> list[str]:
    return [names.get(((site, table), s, k), "")
            for site, table, s, k in zip(out["site"], out["table_id"], out["session_seq"],
                                         out["set"])]


def _natural(text: str):
    import re

    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text)]


def _custody(shared, events, table_names, sites) -> pd.DataFrame:
    """Every custody event naming a die, one row per die named (the first
    CUSTODY_KEPT of each die)."""
    rows = shared.event_rows(*CUSTODY_EVENTS)
    if not len(rows):
        return DiceTally().custody
    serials, starts, counts = shared.dice_named
    codes = shared.codes("dice")[rows]
    codes = np.where(codes < 0, len(counts) - 1, codes)
    repeat = counts[codes]
    row_of = np.repeat(rows, repeat)
    serial_at = np.concatenate([np.arange(s, s + c) for s, c in
                                zip(starts[codes].tolist(), repeat.tolist())]) \
        if repeat.sum() else np.empty(0, dtype=np.int64)
    table = shared.codes("table_id")[row_of]

    def text(name):
        if name not in events:
            return np.full(len(row_of), None, dtype=object)
        values = shared.values_at(name, row_of)
        return np.where(pd.isna(values), None, values).astype(object)

    frame = pd.DataFrame({
        "site": [sites[t] for t in table.tolist()],
        "serial": [serials[k] for k in serial_at.tolist()],
        "table_id": [site_and_table(table_names[t])[1] for t in table.tolist()],
        "seq": shared.seq[row_of],
        "ts": events["ts"].array.take(row_of) if "ts" in events else None,
        "event": text("event"), "actor_role": text("actor_role"),
        "actor_id": text("actor_id"), "outcome": text("outcome")})
    return frame.groupby(["site", "serial"], dropna=False, sort=False).head(CUSTODY_KEPT) \
        .reset_index(drop=True)
